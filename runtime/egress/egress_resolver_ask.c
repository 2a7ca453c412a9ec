/* The egress resolver's hold: egress_resolver_ask.h. */
#include "config.h"
#include "egress_resolver_ask.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <yajl/yajl_gen.h>
#include <yajl/yajl_tree.h>

#include "egress_ask.h"
#include "egress_decide.h"
#include "file_read.h"
#include "json_gen.h"
#include "json_walk.h"
#include "deadline.h"
#include "utils.h"

#define ANSWER_MAX 4096

typedef struct held
{
  hv_res_client client;
  hv_dns_message query;
  uint16_t qtype;
} held;

typedef struct request
{
  bool used;
  char id[40];
  char name[HV_RES_NAME_MAX];
  uint16_t qtype; /* the first query's */
  hv_egress_ports ports;
  uint64_t deadline_ms; /* CLOCK_MONOTONIC */
  held q[HV_RES_ASK_HELD_MAX];
  size_t n;
} request;

struct hv_res_ask
{
  int dirfd, inotify_fd;
  unsigned counter;
  request req[HV_RES_ASK_MAX];
  size_t n_req;
  char **approved; /* for the run */
  size_t n_approved;
};

static const char *
type_name (uint16_t t, char buf[8])
{
  if (t == HV_DNS_TYPE_A)
    return "A";
  if (t == HV_DNS_TYPE_AAAA)
    return "AAAA";
  snprintf (buf, 8, "%u", t);
  return buf;
}

static void
asked (hv_egress_resolver *r, const char *id, const char *name, uint16_t qtype, const char *decision,
       const char *by, const char *why)
{
  if (r->cfg.events.asked)
    r->cfg.events.asked (r->cfg.events.data, id, name, qtype, decision, by, why);
}

/* The directory as session/approvals.c wants it: ours, 0700, no link. */
static int
open_dir (const char *path, hv_error **err)
{
  int fd = open (path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0)
    return hv_error_set (err, errno, "open the approvals directory %s", path);
  struct stat st;
  if (fstat (fd, &st) < 0 || st.st_uid != geteuid () || (st.st_mode & 077))
    {
      close (fd);
      return hv_error_set (err, 0, "the approvals directory %s is not ours alone (0700)", path);
    }
  return fd;
}

int
hv_res_ask_new (hv_egress_resolver *r, hv_error **err)
{
  hv_res_ask *a = xmalloc0 (sizeof (*a));
  a->dirfd = a->inotify_fd = -1;
  r->ask = a;
  const hv_egress_ask_config *cfg = r->cfg.asker;
  if (cfg == NULL)
    return 0; /* nobody to ask: refused one by one */
  a->dirfd = open_dir (cfg->dir, err);
  if (a->dirfd < 0)
    return -1;
  a->inotify_fd = inotify_init1 (IN_NONBLOCK | IN_CLOEXEC);
  if (a->inotify_fd >= 0)
    {
      struct epoll_event ev = { .events = EPOLLIN, .data.u64 = hv_res_token (HV_RES_K_ASK, 0, 0) };
      /* Without the watch, the look every HV_RES_ASK_POLL_MS still
       * finds the answers. */
      if (inotify_add_watch (a->inotify_fd, cfg->dir, IN_MOVED_TO | IN_CLOSE_WRITE | IN_ONLYDIR | IN_DONT_FOLLOW) < 0
          || epoll_ctl (r->epfd, EPOLL_CTL_ADD, a->inotify_fd, &ev) < 0)
        {
          close (a->inotify_fd);
          a->inotify_fd = -1;
        }
    }
  return 0;
}

static void
remove_files (hv_res_ask *a, const char *id)
{
  char name[64];
  snprintf (name, sizeof (name), "%s.request", id);
  unlinkat (a->dirfd, name, 0);
  snprintf (name, sizeof (name), "%s.answer", id);
  unlinkat (a->dirfd, name, 0);
}

static void
release (hv_egress_resolver *r, request *q)
{
  for (size_t i = 0; i < q->n; i++)
    {
      held *h = &q->q[i];
      if (h->client.tcp)
        {
          hv_res_tcp_client *c = &r->tcp[h->client.slot];
          if (c->fd >= 0 && c->gen == h->client.gen && c->pending > 0)
            c->pending--;
        }
      hv_dns_message_free (&h->query);
    }
  hv_egress_ports_free (&q->ports);
  memset (q, 0, sizeof (*q));
  r->ask->n_req--;
}

void
hv_res_ask_free (hv_egress_resolver *r)
{
  hv_res_ask *a = r->ask;
  if (a == NULL)
    return;
  for (size_t i = 0; i < HV_RES_ASK_MAX; i++)
    if (a->req[i].used)
      {
        if (a->dirfd >= 0)
          remove_files (a, a->req[i].id);
        release (r, &a->req[i]);
      }
  for (size_t i = 0; i < a->n_approved; i++)
    free (a->approved[i]);
  free (a->approved);
  if (a->inotify_fd >= 0)
    close (a->inotify_fd);
  if (a->dirfd >= 0)
    close (a->dirfd);
  free (a);
  r->ask = NULL;
}

static bool
approved (const hv_res_ask *a, const char *name)
{
  for (size_t i = 0; i < a->n_approved; i++)
    if (strcmp (a->approved[i], name) == 0)
      return true;
  return false;
}

/* RUN-N.request: .RUN-N.request.tmp, then a rename. */
static int
write_request (hv_egress_resolver *r, const request *q, int64_t deadline_ms)
{
  const hv_egress_ask_config *cfg = r->cfg.asker;
  hv_res_ask *a = r->ask;
  char tbuf[8];
  yajl_gen g = yajl_gen_alloc (NULL);
  yajl_gen_map_open (g);
  jg_kv (g, "id", q->id);
  jg_kv (g, "run", cfg->run);
  jg_kv_utf8 (g, "policy", r->cfg.policy_name);
  jg_kv (g, "name", q->name);
  jg_kv (g, "type", type_name (q->qtype, tbuf));
  jg_str (g, "command");
  yajl_gen_array_open (g);
  for (size_t i = 0; cfg->command[i]; i++)
    jg_utf8 (g, cfg->command[i]);
  yajl_gen_array_close (g);
  jg_kv_utf8 (g, "project", cfg->project);
  cleanup_free char *now = now_rfc3339 ();
  jg_kv (g, "time", now);
  jg_str (g, "deadline_ms");
  yajl_gen_integer (g, deadline_ms);
  jg_str (g, "haven_pid");
  yajl_gen_integer (g, cfg->haven_pid);
  yajl_gen_map_close (g);
  cleanup_free char *text = jg_finish (g);
  char tmp[64], dst[64];
  snprintf (tmp, sizeof (tmp), ".%s.request.tmp", q->id);
  snprintf (dst, sizeof (dst), "%s.request", q->id);
  unlinkat (a->dirfd, tmp, 0);
  int fd = openat (a->dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0)
    return -1;
  int w = write_all (fd, text, strlen (text));
  close (fd);
  if (w < 0 || renameat (a->dirfd, tmp, a->dirfd, dst) < 0)
    {
      unlinkat (a->dirfd, tmp, 0);
      return -1;
    }
  return 0;
}

/* Hold query with the request for its name, a retransmit in place of its
 * earlier copy. */
static void
hold (hv_egress_resolver *r, request *q, const hv_res_client *c, hv_dns_message *query, uint16_t qtype)
{
  size_t i = 0;
  for (; i < q->n; i++)
    {
      held *h = &q->q[i];
      bool same_client = h->client.tcp == c->tcp
                         && (c->tcp ? h->client.slot == c->slot && h->client.gen == c->gen
                                    : h->client.listen_fd == c->listen_fd && h->client.peer_len == c->peer_len
                                          && memcmp (&h->client.peer, &c->peer, c->peer_len) == 0);
      if (same_client && h->query.id == query->id && h->qtype == qtype)
        break;
    }
  if (i == HV_RES_ASK_HELD_MAX)
    return; /* bounded: dropped, the client sends again */
  held *h = &q->q[i];
  if (i < q->n)
    hv_dns_message_free (&h->query);
  else
    {
      q->n++;
      if (c->tcp)
        r->tcp[c->slot].pending++;
    }
  h->client = *c;
  h->query = *query;
  memset (query, 0, sizeof (*query));
  h->qtype = qtype;
}

enum hv_res_ask_result
hv_res_ask_query (hv_egress_resolver *r, const hv_res_client *c, hv_dns_message *query, const char *qname,
                  uint16_t qtype, hv_egress_ports *ports, const char **why)
{
  hv_res_ask *a = r->ask;
  if (approved (a, qname))
    return HV_RES_ASK_FORWARD;
  for (size_t i = 0; i < HV_RES_ASK_MAX; i++)
    if (a->req[i].used && strcmp (a->req[i].name, qname) == 0)
      {
        hold (r, &a->req[i], c, query, qtype);
        hv_egress_ports_free (ports);
        return HV_RES_ASK_HELD;
      }
  *why = HV_EGRESS_WHY_ASK_NOBODY;
  if (a->dirfd < 0)
    {
      asked (r, "", qname, qtype, "deny", "resolver", *why);
      return HV_RES_ASK_REFUSED;
    }
  size_t slot = 0;
  while (slot < HV_RES_ASK_MAX && a->req[slot].used)
    slot++;
  if (slot == HV_RES_ASK_MAX)
    {
      *why = HV_EGRESS_WHY_ASK_FULL;
      asked (r, "", qname, qtype, "deny", "resolver", *why);
      return HV_RES_ASK_REFUSED;
    }
  request *q = &a->req[slot];
  memset (q, 0, sizeof (*q));
  /* The counter wraps far past any run's requests (9 digits). */
  a->counter = a->counter % 999999999u + 1;
  snprintf (q->id, sizeof (q->id), "%s-%u", r->cfg.asker->run, a->counter);
  snprintf (q->name, sizeof (q->name), "%s", qname);
  q->qtype = qtype;
  unsigned timeout = r->cfg.asker->timeout_ms;
  q->deadline_ms = hv_res_now_ms () + timeout;
  if (write_request (r, q, hv_realtime_ms () + timeout) < 0)
    {
      asked (r, q->id, qname, qtype, "deny", "resolver", *why);
      memset (q, 0, sizeof (*q));
      return HV_RES_ASK_REFUSED;
    }
  q->used = true;
  a->n_req++;
  q->ports = *ports;
  memset (ports, 0, sizeof (*ports));
  hold (r, q, c, query, qtype);
  return HV_RES_ASK_HELD;
}

void
hv_res_ask_event (hv_egress_resolver *r)
{
  char buf[4096] __attribute__ ((aligned (__alignof__ (struct inotify_event))));
  /* Only a wakeup: what changed is read from the files. */
  for (int i = 0; i < 16 && r->ask && r->ask->inotify_fd >= 0; i++)
    if (read (r->ask->inotify_fd, buf, sizeof (buf)) <= 0)
      break;
}

/* The answer to request q: 1 and *decision, *by (static strings); 0 when
 * none yet.  An answer that is not what an answerer writes (a link, a
 * FIFO, not ours, bad JSON, an unknown decision) is a deny. */
static int
read_answer (hv_res_ask *a, const request *q, const char **decision, const char **by)
{
  static const char *const decisions[] = { "once", "run", "always", "deny" };
  static const char *const bys[] = { "approve", "terminal", "command" };
  char name[64];
  snprintf (name, sizeof (name), "%s.answer", q->id);
  int fd = openat (a->dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0 && errno == ENOENT)
    return 0;
  *decision = "deny";
  *by = "invalid";
  if (fd < 0)
    return 1;
  cleanup_free char *text = NULL;
  size_t len;
  cleanup_error hv_error *err = NULL;
  struct stat st;
  int ok = fstat (fd, &st) == 0 && st.st_uid == geteuid () ? hv_read_regular_fd (fd, name, ANSWER_MAX, &text, &len, &err) : -1;
  close (fd);
  if (ok < 0 || jw_too_deep (text, 4))
    return 1;
  char ebuf[128];
  yajl_val tree = yajl_tree_parse (text, ebuf, sizeof (ebuf));
  if (tree == NULL)
    return 1;
  const char *dpath[] = { "decision", NULL }, *bpath[] = { "by", NULL };
  yajl_val d = yajl_tree_get (tree, dpath, yajl_t_string), b = yajl_tree_get (tree, bpath, yajl_t_string);
  const char *dv = NULL, *bv = NULL;
  const char *ds = d && YAJL_IS_STRING (d) ? d->u.string : NULL, *bs = b && YAJL_IS_STRING (b) ? b->u.string : NULL;
  for (size_t i = 0; ds && i < 4; i++)
    if (strcmp (ds, decisions[i]) == 0)
      dv = decisions[i];
  for (size_t i = 0; bs && i < 3; i++)
    if (strcmp (bs, bys[i]) == 0)
      bv = bys[i];
  yajl_tree_free (tree);
  if (dv && bv)
    {
      *decision = dv;
      *by = bv;
    }
  return 1;
}

static void
copy_ports (hv_egress_ports *dst, const hv_egress_ports *src)
{
  memset (dst, 0, sizeof (*dst));
  for (size_t i = 0; i < src->n; i++)
    hv_egress_ports_add (dst, src->r[i].lo, src->r[i].hi);
}

static void
decide (hv_egress_resolver *r, request *q, const char *decision, const char *by, const hv_res_ask_ops *ops)
{
  hv_res_ask *a = r->ask;
  bool yes = strcmp (decision, "once") == 0 || strcmp (decision, "run") == 0 || strcmp (decision, "always") == 0;
  const char *why = strcmp (decision, "timeout") == 0 ? HV_EGRESS_WHY_ASK_TIMEOUT : HV_EGRESS_WHY_ASK_DENIED;
  asked (r, q->id, q->name, q->qtype, decision, by, NULL);
  remove_files (a, q->id);
  if (yes && strcmp (decision, "once") != 0 && a->n_approved < HV_RES_ASK_APPROVED_MAX && !approved (a, q->name))
    {
      a->approved = xrealloc (a->approved, (a->n_approved + 1) * sizeof (char *));
      a->approved[a->n_approved++] = xstrdup (q->name);
    }
  /* The queries leave the request one by one: forwarding one may end
   * its TCP client's slot, which release must no longer count. */
  for (size_t i = 0; i < q->n; i++)
    {
      held *h = &q->q[i];
      if (h->client.tcp)
        {
          hv_res_tcp_client *c = &r->tcp[h->client.slot];
          bool alive = c->fd >= 0 && c->gen == h->client.gen;
          if (alive && c->pending > 0)
            c->pending--;
          if (!alive)
            {
              /* Gone while it waited: nobody to answer (and its slot
               * may be another client's now). */
              hv_dns_message_free (&h->query);
              continue;
            }
        }
      if (yes)
        {
          hv_egress_ports ports;
          copy_ports (&ports, &q->ports);
          ops->forward (r, &h->client, &h->query, q->name, &ports);
        }
      else
        ops->refuse (r, &h->client, &h->query, q->name, h->qtype, why);
      hv_dns_message_free (&h->query);
    }
  q->n = 0;
  release (r, q);
}

uint64_t
hv_res_ask_check (hv_egress_resolver *r, uint64_t now, const hv_res_ask_ops *ops)
{
  hv_res_ask *a = r->ask;
  uint64_t next = UINT64_MAX;
  if (a == NULL)
    return next;
  for (size_t i = 0; i < HV_RES_ASK_MAX; i++)
    {
      request *q = &a->req[i];
      if (!q->used)
        continue;
      const char *decision, *by;
      if (read_answer (a, q, &decision, &by))
        decide (r, q, decision, by, ops);
      else if (q->deadline_ms <= now)
        decide (r, q, "timeout", "timeout", ops);
      else
        {
          uint64_t poll = now + HV_RES_ASK_POLL_MS;
          uint64_t at = q->deadline_ms < poll ? q->deadline_ms : poll;
          if (at < next)
            next = at;
        }
    }
  return next;
}
