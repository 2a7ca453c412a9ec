/* Landlock's refusals from the kernel's audit multicast: landlock_audit.h. */
#include "config.h"
#include "landlock_audit.h"

#include <errno.h>
#include <linux/audit.h>
#include <linux/netlink.h>
#include <poll.h>
#include <seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <yajl/yajl_tree.h>

#include "denial_explain.h"
#include "denial_limiter.h"
#include "denial_view.h"
#include "json_gen.h"
#include "utils.h"

#ifndef AUDIT_LANDLOCK_ACCESS
#define AUDIT_LANDLOCK_ACCESS 1423
#endif
#ifndef AUDIT_LANDLOCK_DOMAIN
#define AUDIT_LANDLOCK_DOMAIN 1424
#endif
#ifndef AUDIT_NLGRP_READLOG
#define AUDIT_NLGRP_READLOG 1
#endif

#ifndef MAX_AUDIT_MESSAGE_LENGTH
#define MAX_AUDIT_MESSAGE_LENGTH 8970 /* the kernel's limit on one record */
#endif

#define MAX_EVENTS 32    /* events waiting for their end (AUDIT_EOE) */
#define MAX_EARLY 32     /* domains allocated before init was known */
#define EVENT_WAIT_MS 200 /* an event without its end is recorded this late */

struct event
{
  bool used;
  unsigned long serial;
  uint64_t since_ms;
  bool access; /* an AUDIT_LANDLOCK_ACCESS record came */
  uint64_t domain;
  char *blockers, *path, *comm;
  long pid;
  char syscall[32];
};

struct hv_landlock_audit
{
  int fd;
  pid_t init_pid;
  /* The container's domain, once its allocation record named init. */
  bool have_domain;
  uint64_t domain;
  /* Allocation records seen before init was known (pid, domain). */
  struct
  {
    long pid;
    uint64_t domain;
  } early[MAX_EARLY];
  size_t n_early;
  struct event events[MAX_EVENTS];
  char *rule_execute, *rule_write;
  hv_denial_limiter limiter;
  uint64_t capped; /* new but not remembered, left out after the trail's size cap */
  /* Refusals that may be missing, said in the next summary: overruns of
   * the socket (ENOBUFS), and records the kernel's audit lost (its
   * counter, any process's) since attach. */
  uint64_t overruns_unsaid;
  hv_denial_summary held; /* summaries past the size cap, for the final one */
  bool holding;
  bool have_lost;
  uint32_t lost_seen;
  /* The join's record (landlock_audit.h, hv_landlock_audit_expect_join):
   * when the socket joined, whether it is awaited, whether anything was
   * heard, whether its absence was said. */
  uint64_t joined_ms;
  bool expect_join, heard, unheard_said;
};

static uint64_t
now_ms (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (uint64_t) ts.tv_sec * 1000 + (uint64_t) ts.tv_nsec / 1000000;
}

static char *
copy_n (const char *s, size_t n)
{
  char *out = xmalloc0 (n + 1);
  memcpy (out, s, n);
  return out;
}

static bool
is_hex_string (const char *s, size_t n)
{
  if (n == 0 || n % 2)
    return false;
  for (size_t i = 0; i < n; i++)
    if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'A' && s[i] <= 'F')))
      return false;
  return true;
}

static int
hex_digit (char c)
{
  return c <= '9' ? c - '0' : c - 'A' + 10;
}

/* The kernel writes a string field quoted, or as upper-case hex when it
 * holds a quote, a space, a control or a non-ASCII byte
 * (audit_log_untrustedstring).  Numbers are unquoted too: the hex reading
 * applies only to the string fields asked for by name here. */
char *
hv_landlock_audit_field (const char *text, const char *key)
{
  size_t klen = strlen (key);
  for (const char *p = text; (p = strstr (p, key)) != NULL; p += klen)
    {
      if ((p != text && p[-1] != ' ') || p[klen] != '=')
        continue;
      const char *v = p + klen + 1;
      if (*v == '"')
        {
          const char *end = strchr (v + 1, '"');
          return end ? copy_n (v + 1, (size_t) (end - v - 1)) : NULL;
        }
      size_t n = strcspn (v, " ");
      bool string = strcmp (key, "path") == 0 || strcmp (key, "name") == 0 || strcmp (key, "comm") == 0
                    || strcmp (key, "exe") == 0;
      if (string && is_hex_string (v, n))
        {
          char *out = xmalloc0 (n / 2 + 1);
          for (size_t i = 0; i < n / 2; i++)
            out[i] = (char) (hex_digit (v[2 * i]) << 4 | hex_digit (v[2 * i + 1]));
          return out;
        }
      return copy_n (v, n);
    }
  return NULL;
}

static char *
rule_of (yajl_val root, const char *key)
{
  const char *path[] = { key, NULL };
  yajl_val v = root ? yajl_tree_get (root, path, yajl_t_string) : NULL;
  return v ? xstrdup (YAJL_GET_STRING (v)) : NULL;
}

/* The kernel's audit status (AUDIT_GET).  It needs CAP_AUDIT_CONTROL;
 * only a question, never a change: haven leaves the system's audit
 * settings as they are. */
static int
audit_status (struct audit_status *out)
{
  cleanup_close int s = socket (AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_AUDIT);
  struct nlmsghdr req = { .nlmsg_len = NLMSG_LENGTH (0), .nlmsg_type = AUDIT_GET, .nlmsg_flags = NLM_F_REQUEST,
                          .nlmsg_seq = 1 };
  struct sockaddr_nl kernel = { .nl_family = AF_NETLINK };
  if (s < 0 || sendto (s, &req, req.nlmsg_len, 0, (struct sockaddr *) &kernel, sizeof (kernel)) < 0)
    return -1;
  struct pollfd p = { .fd = s, .events = POLLIN };
  char buf[1024] __attribute__ ((aligned (NLMSG_ALIGNTO)));
  ssize_t n = poll (&p, 1, 1000) > 0 ? recv (s, buf, sizeof (buf), MSG_DONTWAIT) : -1;
  const struct nlmsghdr *h = (const void *) buf;
  if (n < (ssize_t) NLMSG_LENGTH (sizeof (struct audit_status)) || h->nlmsg_type != AUDIT_GET)
    return -1;
  memcpy (out, NLMSG_DATA (h), sizeof (*out));
  return 0;
}

int
hv_landlock_audit_enabled (void)
{
  struct audit_status st;
  if (audit_status (&st) < 0)
    return -1;
  return st.enabled ? 1 : 0;
}

hv_landlock_audit *
hv_landlock_audit_open (const char *rules_json, const char **why, int *errnum)
{
  *errnum = 0;
  int fd = socket (AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC | SOCK_NONBLOCK, NETLINK_AUDIT);
  if (fd < 0)
    {
      *errnum = errno;
      *why = "this kernel has no audit netlink socket";
      return NULL;
    }
  /* Reading, not taking: the group gets a copy of each record, whoever
   * else (auditd, journald) reads them. */
  struct sockaddr_nl addr = { .nl_family = AF_NETLINK, .nl_groups = 1U << (AUDIT_NLGRP_READLOG - 1) };
  if (bind (fd, (struct sockaddr *) &addr, sizeof (addr)) < 0)
    {
      *errnum = errno;
      *why = errno == EPERM ? "no CAP_AUDIT_READ in the initial user namespace (rootless)"
                            : "the kernel's audit log cannot be read from here";
      close (fd);
      return NULL;
    }
  /* Room for a burst: records that do not fit are lost (ENOBUFS), not
   * waited for; the loss is said in the trail.  Past rmem_max for root. */
  int size = 16 << 20;
  if (setsockopt (fd, SOL_SOCKET, SO_RCVBUFFORCE, &size, sizeof (size)) < 0)
    setsockopt (fd, SOL_SOCKET, SO_RCVBUF, &size, sizeof (size));
  hv_landlock_audit *l = hv_landlock_audit_new (fd, rules_json);
  l->joined_ms = now_ms ();
  return l;
}

void
hv_landlock_audit_expect_join (hv_landlock_audit *l)
{
  l->expect_join = true;
}

/* Once: nothing heard since the join, whose record the kernel writes
 * while its audit is on: its records go to another namespace. */
static void
say_unheard (hv_landlock_audit *l, struct hv_audit_trail *t)
{
  if (!l->expect_join || l->heard || l->unheard_said)
    return;
  l->unheard_said = true;
  yajl_gen g = hv_audit_trail_record (t, "landlock-unrecorded");
  hv_audit_put_kv (g, "reason", HV_LANDLOCK_AUDIT_UNHEARD);
  hv_audit_trail_emit (t, g);
}

hv_landlock_audit *
hv_landlock_audit_new (int fd, const char *rules_json)
{
  hv_landlock_audit *l = xmalloc0 (sizeof (*l));
  l->fd = fd;
  yajl_val root = rules_json ? yajl_tree_parse (rules_json, NULL, 0) : NULL;
  l->rule_execute = rule_of (root, "execute");
  l->rule_write = rule_of (root, "write");
  yajl_tree_free (root);
  hv_denial_limiter_init (&l->limiter, HV_LANDLOCK_AUDIT_RATE);
  return l;
}

static void
event_clear (struct event *e)
{
  free (e->blockers);
  free (e->path);
  free (e->comm);
  memset (e, 0, sizeof (*e));
}

void
hv_landlock_audit_free (hv_landlock_audit *l)
{
  if (l == NULL)
    return;
  for (size_t i = 0; i < MAX_EVENTS; i++)
    event_clear (&l->events[i]);
  close (l->fd);
  free (l->rule_execute);
  free (l->rule_write);
  hv_denial_limiter_release (&l->limiter);
  free (l);
}

int
hv_landlock_audit_fd (const hv_landlock_audit *l)
{
  return l->fd;
}

void
hv_landlock_audit_attach (hv_landlock_audit *l, pid_t init_pid)
{
  l->init_pid = init_pid;
  struct audit_status st;
  if (audit_status (&st) == 0)
    {
      l->have_lost = true;
      l->lost_seen = st.lost;
    }
  /* The newest allocation by that pid is init's (an older one would be
   * an earlier process's that had the same pid). */
  for (size_t i = l->n_early; i-- > 0;)
    if (l->early[i].pid == init_pid)
      {
        l->domain = l->early[i].domain;
        l->have_domain = true;
        break;
      }
  l->n_early = 0;
}

/* Which of the policy's items the access stands for. */
static const char *
rule_for (const hv_landlock_audit *l, const char *blockers)
{
  const char *r = NULL;
  if (strncmp (blockers, "fs.execute", 10) == 0)
    r = l->rule_execute;
  else if (strncmp (blockers, "fs.read_", 8) != 0 && strncmp (blockers, "fs.", 3) == 0)
    r = l->rule_write;
  return r ? r : "landlock";
}

/* Records the kernel's audit lost since last asked (its counter wraps
 * at 32 bits). */
static uint64_t
kernel_lost_since (hv_landlock_audit *l)
{
  struct audit_status st;
  if (!l->have_lost || audit_status (&st) < 0)
    return 0;
  uint32_t d = st.lost - l->lost_seen;
  l->lost_seen = st.lost;
  return d;
}

/* s (due or not: *due says) with what may be missing added; false when
 * there is nothing to say. */
static bool
add_losses (hv_landlock_audit *l, hv_denial_summary *s, bool due)
{
  s->overruns = l->overruns_unsaid;
  l->overruns_unsaid = 0;
  s->kernel_lost = kernel_lost_since (l);
  s->per_second = l->limiter.per_second;
  return due || s->overruns || s->kernel_lost;
}

static void
write_suppressed (struct hv_audit_trail *t, const hv_denial_summary *s)
{
  hv_audit_trail_denials_summary (t, "landlock", s);
}

/* Written, or past the size cap held for the final summary (its counts
 * are never dropped). */
static void
write_or_hold (hv_landlock_audit *l, struct hv_audit_trail *t, const hv_denial_summary *s)
{
  if (!t->capped)
    {
      write_suppressed (t, s);
      return;
    }
  hv_denial_summary_add (&l->held, s);
  l->holding = true;
}

static void
record (hv_landlock_audit *l, struct hv_audit_trail *t, const struct event *e)
{
  const char *path = e->path ? e->path : "";
  uint64_t now = now_ms ();
  hv_denial_summary summary;
  bool due = hv_denial_limiter_tick (&l->limiter, now, &summary);
  if (due && add_losses (l, &summary, due))
    write_or_hold (l, t, &summary);
  /* One record per access and path: a loop of refused execs is one
   * record and counts in summaries; a new path is always recorded. */
  size_t klen = strlen (e->blockers) + 1 + strlen (path);
  cleanup_free char *key = xmalloc0 (klen + 1);
  snprintf (key, klen + 1, "%s %s", e->blockers, path);
  size_t remembered = hv_denial_limiter_remembered (&l->limiter);
  if (!hv_denial_limiter_admit (&l->limiter, key, klen, now))
    return;
  /* Past the trail's size cap a new path is still recorded (at most
   * HV_DENIAL_KEYS_MAX of them: the limiter remembers no more); what the
   * limiter could not remember is only counted for the final summary. */
  if (t->capped && hv_denial_limiter_remembered (&l->limiter) == remembered)
    {
      l->capped++;
      return;
    }
  yajl_gen g = hv_audit_trail_record (t, "landlock-denied");
  hv_audit_put_kv (g, "access", e->blockers);
  hv_audit_put_kv (g, "path", path);
  if (e->pid > 0)
    {
      jg_str (g, "pid");
      yajl_gen_integer (g, e->pid);
    }
  if (e->comm)
    hv_audit_put_kv (g, "comm", e->comm);
  if (e->syscall[0])
    hv_audit_put_kv (g, "syscall", e->syscall);
  char domain[24];
  snprintf (domain, sizeof (domain), "%llx", (unsigned long long) e->domain);
  hv_audit_put_kv (g, "domain", domain);
  const char *hint = rule_for (l, e->blockers);
  struct hv_denial_facts f = { .kind = HV_DENIAL_FILE, .access = e->blockers, .path = path,
                               .hint = strcmp (hint, "landlock") != 0 ? hint : NULL };
  hv_denial_explain_put (g, t->rules, &f);
  hv_audit_denial_emit (t, g);
  if (t->written >= HV_AUDIT_MAX_BYTES)
    t->capped = true;
}

/* An event is complete: record it if it is a refusal of our domain. */
static void
finish_event (hv_landlock_audit *l, struct hv_audit_trail *t, struct event *e)
{
  if (e->access && l->have_domain && e->domain == l->domain && e->blockers)
    record (l, t, e);
  event_clear (e);
}

static struct event *
find_event (hv_landlock_audit *l, struct hv_audit_trail *t, unsigned long serial, bool create)
{
  struct event *oldest = NULL;
  for (size_t i = 0; i < MAX_EVENTS; i++)
    {
      struct event *e = &l->events[i];
      if (e->used && e->serial == serial)
        return e;
      if (!oldest || (oldest->used && (!e->used || e->since_ms < oldest->since_ms)))
        oldest = e;
    }
  if (!create)
    return NULL;
  if (oldest->used) /* full: the oldest is done waiting */
    finish_event (l, t, oldest);
  oldest->used = true;
  oldest->serial = serial;
  oldest->since_ms = now_ms ();
  return oldest;
}

static void
note_domain (hv_landlock_audit *l, const char *text)
{
  cleanup_free char *status = hv_landlock_audit_field (text, "status");
  cleanup_free char *domain = hv_landlock_audit_field (text, "domain");
  cleanup_free char *pid = hv_landlock_audit_field (text, "pid");
  if (!status || strcmp (status, "allocated") != 0 || !domain || !pid)
    return;
  uint64_t id = strtoull (domain, NULL, 16);
  long p = strtol (pid, NULL, 10);
  if (l->init_pid > 0)
    {
      /* Init makes one domain; a later one with its pid would be
       * another process's after init's end: the first stays. */
      if (p == l->init_pid && !l->have_domain)
        {
          l->domain = id;
          l->have_domain = true;
        }
      return;
    }
  if (l->n_early == MAX_EARLY)
    {
      memmove (&l->early[0], &l->early[1], sizeof (l->early[0]) * (MAX_EARLY - 1));
      l->n_early--;
    }
  l->early[l->n_early].pid = p;
  l->early[l->n_early].domain = id;
  l->n_early++;
}

static void
handle (hv_landlock_audit *l, struct hv_audit_trail *t, int type, const char *msg)
{
  /* "audit(SECONDS.MS:SERIAL): fields" */
  const char *colon = strstr (msg, ":");
  const char *text = strstr (msg, "): ");
  if (strncmp (msg, "audit(", 6) != 0 || !colon || !text)
    return;
  unsigned long serial = strtoul (colon + 1, NULL, 10);
  text += 3;
  if (type == AUDIT_LANDLOCK_DOMAIN)
    {
      note_domain (l, text);
      return;
    }
  if (type == AUDIT_LANDLOCK_ACCESS)
    {
      struct event *e = find_event (l, t, serial, true);
      if (e->access)
        return; /* the first refusal of an event names it */
      cleanup_free char *domain = hv_landlock_audit_field (text, "domain");
      e->access = true;
      e->domain = domain ? strtoull (domain, NULL, 16) : 0;
      e->blockers = hv_landlock_audit_field (text, "blockers");
      e->path = hv_landlock_audit_field (text, "path");
      if (e->path == NULL)
        e->path = hv_landlock_audit_field (text, "name");
      return;
    }
  struct event *e = find_event (l, t, serial, false);
  if (e == NULL)
    return;
  if (type == AUDIT_SYSCALL)
    {
      cleanup_free char *pid = hv_landlock_audit_field (text, "pid");
      cleanup_free char *arch = hv_landlock_audit_field (text, "arch");
      cleanup_free char *nr = hv_landlock_audit_field (text, "syscall");
      e->pid = pid ? strtol (pid, NULL, 10) : 0;
      free (e->comm);
      e->comm = hv_landlock_audit_field (text, "comm");
      if (arch && nr)
        {
          cleanup_free char *name
              = seccomp_syscall_resolve_num_arch ((uint32_t) strtoul (arch, NULL, 16), atoi (nr));
          snprintf (e->syscall, sizeof (e->syscall), "%s", name ? name : nr);
        }
    }
  else if (type == AUDIT_EOE)
    finish_event (l, t, e);
}

int
hv_landlock_audit_ready (hv_landlock_audit *l, struct hv_audit_trail *t)
{
  char buf[MAX_AUDIT_MESSAGE_LENGTH + NLMSG_HDRLEN + 1] __attribute__ ((aligned (NLMSG_ALIGNTO)));
  /* Bounded: what arrives meanwhile waits for the next round. */
  for (int i = 0; i < 256; i++)
    {
      struct sockaddr_nl from;
      socklen_t flen = sizeof (from);
      ssize_t n = recvfrom (l->fd, buf, sizeof (buf) - 1, MSG_DONTWAIT, (struct sockaddr *) &from, &flen);
      if (n < 0)
        {
          if (errno == EAGAIN || errno == EINTR)
            return 0;
          if (errno == ENOBUFS)
            {
              /* Records were lost before we read them: said in the next
               * summary (hv_landlock_audit_tick, at once). */
              l->overruns_unsaid++;
              continue;
            }
          return -1;
        }
      /* Only the kernel speaks on this group. */
      if (flen != sizeof (from) || from.nl_pid != 0)
        continue;
      l->heard = true;
      hv_landlock_audit_datagram (l, t, buf, (size_t) n);
    }
  return 0;
}

void
hv_landlock_audit_datagram (hv_landlock_audit *l, struct hv_audit_trail *t, char *buf, size_t n)
{
  if (n < NLMSG_HDRLEN)
    return;
  const struct nlmsghdr *h = (const void *) buf;
  size_t len = h->nlmsg_len > n ? n : h->nlmsg_len;
  if (len < NLMSG_HDRLEN)
    return;
  char *msg = (char *) NLMSG_DATA (h);
  msg[len - NLMSG_HDRLEN] = '\0';
  handle (l, t, h->nlmsg_type, msg);
}

int
hv_landlock_audit_timeout (const hv_landlock_audit *l)
{
  uint64_t now = now_ms (), due = 0;
  for (size_t i = 0; i < MAX_EVENTS; i++)
    if (l->events[i].used && (due == 0 || l->events[i].since_ms + EVENT_WAIT_MS < due))
      due = l->events[i].since_ms + EVENT_WAIT_MS;
  uint64_t summary = l->overruns_unsaid ? 1 : hv_denial_limiter_deadline (&l->limiter);
  if (summary && (due == 0 || summary < due))
    due = summary;
  uint64_t join = l->joined_ms + HV_LANDLOCK_AUDIT_JOIN_MS;
  if (l->expect_join && !l->heard && !l->unheard_said && (due == 0 || join < due))
    due = join;
  if (due == 0)
    return -1;
  return due <= now ? 0 : (int) (due - now);
}

void
hv_landlock_audit_tick (hv_landlock_audit *l, struct hv_audit_trail *t)
{
  uint64_t now = now_ms ();
  /* An event whose end never came (no syscall context: the kernel then
   * writes the refusal alone) is complete by now. */
  for (size_t i = 0; i < MAX_EVENTS; i++)
    if (l->events[i].used && l->events[i].since_ms + EVENT_WAIT_MS <= now)
      finish_event (l, t, &l->events[i]);
  hv_denial_summary summary;
  bool due = hv_denial_limiter_tick (&l->limiter, now, &summary);
  /* An overrun is said within a tick, with the kernel's count then. */
  if ((due || l->overruns_unsaid) && add_losses (l, &summary, due))
    write_or_hold (l, t, &summary);
  /* The loop ticks only when no fd is ready: what was queued has been
   * read by now. */
  if (now >= l->joined_ms + HV_LANDLOCK_AUDIT_JOIN_MS)
    say_unheard (l, t);
}

/* Milliseconds the kernel's audit thread gets, once its queue is empty,
 * to finish sending the record it took last (it sends each one right
 * after taking it from the queue). */
#define SENT_GRACE_MS 5

void
hv_landlock_audit_finish (hv_landlock_audit *l, struct hv_audit_trail *t, int quiet_ms)
{
  /* The kernel's audit thread sends records a little after the refusal:
   * the last ones may still be on their way when init is gone.  Every
   * record of init's refusals was queued before init's end, and the
   * thread sends them in order: once its queue is empty (AUDIT_GET's
   * backlog), they have all been sent but perhaps the one being sent
   * now, so a short grace replaces the wait for quiet_ms of silence.
   * On a system whose audit is busy the queue may never be seen empty:
   * then the wait for silence ends it, as before. */
  bool drained = false;
  for (int i = 0; i < 20; i++)
    {
      struct audit_status st;
      if (!drained && quiet_ms > SENT_GRACE_MS && audit_status (&st) == 0 && st.backlog == 0)
        drained = true;
      struct pollfd p = { .fd = l->fd, .events = POLLIN };
      if (poll (&p, 1, drained ? SENT_GRACE_MS : quiet_ms) <= 0 || hv_landlock_audit_ready (l, t) < 0)
        break;
    }
  for (size_t i = 0; i < MAX_EVENTS; i++)
    if (l->events[i].used)
      finish_event (l, t, &l->events[i]);
  /* A run shorter than HV_LANDLOCK_AUDIT_JOIN_MS: the join's record,
   * queued before init existed, was sent before anything init caused;
   * the wait above (the kernel's queue seen empty, or quiet_ms of
   * silence) had it arrive if it was coming. */
  say_unheard (l, t);
  /* Whatever the limiter still holds is summarized now, past the size
   * cap too (one bounded record: it names at most
   * HV_DENIAL_SUMMARY_KEYS keys). */
  hv_denial_summary summary;
  bool due = hv_denial_limiter_tick (&l->limiter, UINT64_MAX, &summary);
  bool any = add_losses (l, &summary, due || l->capped);
  summary.unrecorded_new += l->capped;
  summary.count += l->capped;
  if (l->holding)
    {
      /* Past the cap: one final summary of all that was held. */
      hv_denial_summary_add (&l->held, &summary);
      write_suppressed (t, &l->held);
    }
  else if (any)
    write_suppressed (t, &summary);
}
