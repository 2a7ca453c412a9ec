/* The approvals directory and the approved files: approvals.h. */
#include "config.h"
#include "approvals.h"
#include "approvals_policy.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "file_read.h"
#include "json_gen.h"
#include "json_walk.h"
#include "policy_approved.h"
#include "policy_egress.h"
#include "deadline.h"
#include "utils.h"

/* A request is a few hundred bytes; its command may be long, but not this. */
#define REQUEST_MAX (64 * 1024)
#define ANSWER_MAX 4096
/* The approved file: one line per name, a comment each. */
#define APPROVED_MAX (1024 * 1024)
/* Entries read from the directory in one listing. */
#define LIST_MAX 1024

static const char *const decision_names[] = { "once", "run", "always", "deny" };

const char *
hv_ask_decision_name (hv_ask_decision d)
{
  return (unsigned) d < 4 ? decision_names[d] : "?";
}

int
hv_ask_decision_parse (const char *s, hv_ask_decision *out)
{
  for (unsigned i = 0; i < 4; i++)
    if (strcmp (s, decision_names[i]) == 0 || (s[0] == decision_names[i][0] && s[1] == '\0'))
      {
        *out = (hv_ask_decision) i;
        return 0;
      }
  return -1;
}

void
hv_approval_request_clear (hv_approval_request *r)
{
  free (r->id);
  free (r->run);
  free (r->policy);
  free (r->name);
  free (r->type);
  for (size_t i = 0; r->command && r->command[i]; i++)
    free (r->command[i]);
  free (r->command);
  free (r->project);
  free (r->time);
  memset (r, 0, sizeof (*r));
}

void
hv_approval_requests_free (hv_approval_request *r, size_t n)
{
  for (size_t i = 0; r && i < n; i++)
    hv_approval_request_clear (&r[i]);
  free (r);
}

/* --- paths ----------------------------------------------------------------- */

static char *
xdg_dir (const char *var, const char *fallback, const char *sub, hv_error **err)
{
  const char *x = getenv (var), *home = getenv ("HOME");
  if (x && x[0] == '/')
    return xasprintf ("%s/haven/%s", x, sub);
  if (home && home[0] == '/')
    return xasprintf ("%s/%s/haven/%s", home, fallback, sub);
  hv_error_set (err, 0, "no place for haven's %s: neither %s nor HOME is an absolute path", sub, var);
  return NULL;
}

char *
hv_approvals_dir_path (hv_error **err)
{
  return xdg_dir ("XDG_STATE_HOME", ".local/state", "approvals", err);
}

/* Refuse a directory that is not ours alone. */
static int
check_private_dir (int fd, const char *path, hv_error **err)
{
  struct stat st;
  if (fstat (fd, &st) < 0)
    return hv_error_set (err, errno, "stat %s", path);
  if (!S_ISDIR (st.st_mode))
    return hv_error_set (err, 0, "%s: not a directory", path);
  if (st.st_uid != geteuid ())
    return hv_error_set (err, 0, "%s: owned by uid %u, not by us (uid %u)", path, (unsigned) st.st_uid,
                         (unsigned) geteuid ());
  if (st.st_mode & 077)
    return hv_error_set (err, 0, "%s: mode %03o lets others in (want 0700)", path, (unsigned) (st.st_mode & 0777));
  return 0;
}

static int
open_private_dir (const char *path, bool create, hv_error **err)
{
  if (create)
    {
      /* The parents as any state directory; the last one ours alone. */
      cleanup_free char *parent = xstrdup (path);
      char *slash = strrchr (parent, '/');
      if (slash && slash != parent)
        {
          *slash = '\0';
          if (mkdir_p (parent, 0700, err) < 0)
            return -1;
        }
      if (mkdir (path, 0700) < 0 && errno != EEXIST)
        return hv_error_set (err, errno, "mkdir %s", path);
    }
  int fd = open (path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0)
    return hv_error_set (err, errno, "open %s", path);
  if (check_private_dir (fd, path, err) < 0)
    {
      close (fd);
      return -1;
    }
  return fd;
}

int
hv_approvals_dir_open (const char *path, bool create, hv_error **err)
{
  return open_private_dir (path, create, err);
}

/* RUN-N: 16 lower-case hex, '-', 1 to 9 digits.  Nothing else is ever
 * made into a file name here. */
static bool
id_valid (const char *id)
{
  size_t i = 0;
  for (; i < 16; i++)
    if (!((id[i] >= '0' && id[i] <= '9') || (id[i] >= 'a' && id[i] <= 'f')))
      return false;
  if (id[i++] != '-')
    return false;
  size_t d = 0;
  for (; id[i] >= '0' && id[i] <= '9'; i++)
    d++;
  return id[i] == '\0' && d >= 1 && d <= 9;
}

/* A DNS name as the resolver writes it: lower case, digits, '-', '_',
 * dots between labels, at most 253. */
static bool
name_valid (const char *s)
{
  size_t n = strlen (s);
  if (n == 0 || n > 253 || s[0] == '.' || s[n - 1] == '.')
    return false;
  for (size_t i = 0; i < n; i++)
    {
      char c = s[i];
      if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.'))
        return false;
      if (c == '.' && s[i + 1] == '.')
        return false;
    }
  return true;
}

/* --- reading files strictly ------------------------------------------------- */

/* A regular file of ours in dirfd, no link followed, at most max bytes:
 * 0 and its text, or -1 (with *err). */
static int
read_own_file (int dirfd, const char *name, size_t max, char **out, hv_error **err)
{
  cleanup_close int fd = openat (dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0)
    return hv_error_set (err, errno, "open %s", name);
  struct stat st;
  if (fstat (fd, &st) < 0)
    return hv_error_set (err, errno, "stat %s", name);
  if (S_ISREG (st.st_mode) && st.st_uid != geteuid ())
    return hv_error_set (err, 0, "%s: not owned by us", name);
  size_t len;
  return hv_read_regular_fd (fd, name, max, out, &len, err);
}

static int
parse_object (const char *name, const char *text, yajl_val *tree, hv_error **err)
{
  json_walk w;
  jw_init (&w, name, err);
  if (jw_too_deep (text, 8))
    return hv_error_set (err, 0, "%s: nested too deep", name);
  if (jw_parse (&w, text, tree) < 0)
    return -1;
  return jw_expect_object (&w, *tree);
}

static int
str_member (json_walk *w, yajl_val obj, const char *key, bool optional, char **out)
{
  yajl_val v = jw_lookup (obj, key);
  if (jw_absent (v))
    {
      if (optional)
        {
          *out = xstrdup ("");
          return 0;
        }
      return jw_fail_key (w, key, "missing");
    }
  size_t saved = jw_push_key (w, key);
  int r = jw_as_string (w, v, out);
  jw_pop (w, saved);
  return r;
}

static int
parse_request (const char *file, const char *text, hv_approval_request *r, hv_error **err)
{
  yajl_val tree = NULL;
  memset (r, 0, sizeof (*r));
  if (parse_object (file, text, &tree, err) < 0)
    {
      yajl_tree_free (tree);
      return -1;
    }
  json_walk w;
  jw_init (&w, file, err);
  int rc = -1;
  int64_t pid = 0;
  if (str_member (&w, tree, "id", false, &r->id) < 0 || str_member (&w, tree, "run", false, &r->run) < 0
      || str_member (&w, tree, "policy", false, &r->policy) < 0 || str_member (&w, tree, "name", false, &r->name) < 0
      || str_member (&w, tree, "type", false, &r->type) < 0 || str_member (&w, tree, "project", true, &r->project) < 0
      || str_member (&w, tree, "time", true, &r->time) < 0)
    goto out;
  yajl_val v = jw_lookup (tree, "deadline_ms");
  size_t saved = jw_push_key (&w, "deadline_ms");
  int ok = jw_absent (v) ? jw_fail (&w, "missing") : jw_as_i64 (&w, v, &r->deadline_ms);
  jw_pop (&w, saved);
  if (ok < 0)
    goto out;
  v = jw_lookup (tree, "haven_pid");
  if (!jw_absent (v))
    {
      saved = jw_push_key (&w, "haven_pid");
      ok = jw_as_i64 (&w, v, &pid);
      jw_pop (&w, saved);
      if (ok < 0)
        goto out;
      if (pid < 0 || pid > INT_MAX)
        {
          jw_fail_key (&w, "haven_pid", "not a pid");
          goto out;
        }
      r->haven_pid = (pid_t) pid;
    }
  v = jw_lookup (tree, "command");
  size_t n = 0;
  if (!jw_absent (v))
    {
      saved = jw_push_key (&w, "command");
      ok = jw_expect_array (&w, v);
      if (ok == 0)
        {
          n = YAJL_GET_ARRAY (v)->len;
          r->command = xmalloc0 ((n + 1) * sizeof (char *));
          for (size_t i = 0; i < n && ok == 0; i++)
            {
              size_t s2 = jw_push_index (&w, i);
              ok = jw_as_string (&w, YAJL_GET_ARRAY (v)->values[i], &r->command[i]);
              jw_pop (&w, s2);
            }
        }
      jw_pop (&w, saved);
      if (ok < 0)
        goto out;
    }
  else
    r->command = xmalloc0 (sizeof (char *));
  if (!id_valid (r->id))
    {
      jw_fail_key (&w, "id", "not RUN-N");
      goto out;
    }
  if (!name_valid (r->name))
    {
      jw_fail_key (&w, "name", "not a DNS name");
      goto out;
    }
  rc = 0;
out:
  yajl_tree_free (tree);
  if (rc < 0)
    hv_approval_request_clear (r);
  return rc;
}

static bool
answered (int dirfd, const char *id)
{
  cleanup_free char *a = xasprintf ("%s.answer", id);
  struct stat st;
  return fstatat (dirfd, a, &st, AT_SYMLINK_NOFOLLOW) == 0;
}

/* Read ID.request: 0, or -1 with *err; ENOENT kept as the error's errno. */
static int
read_request (int dirfd, const char *id, hv_approval_request *out, hv_error **err)
{
  cleanup_free char *file = xasprintf ("%s.request", id);
  cleanup_free char *text = NULL;
  if (read_own_file (dirfd, file, REQUEST_MAX, &text, err) < 0)
    return -1;
  if (parse_request (file, text, out, err) < 0)
    return -1;
  if (strcmp (out->id, id) != 0)
    {
      hv_approval_request_clear (out);
      return hv_error_set (err, 0, "%s: its id is not %s", file, id);
    }
  return 0;
}

int
hv_approval_get (int dirfd, const char *id, hv_approval_request *out, hv_error **err)
{
  memset (out, 0, sizeof (*out));
  if (!id_valid (id))
    return hv_error_set (err, 0, "\"%s\" is not a request id (RUN-N)", id);
  return read_request (dirfd, id, out, err);
}

static int
by_deadline (const void *a, const void *b)
{
  const hv_approval_request *x = a, *y = b;
  return x->deadline_ms < y->deadline_ms ? -1 : x->deadline_ms > y->deadline_ms;
}

int
hv_approvals_list (int dirfd, const char *run, hv_approval_request **out, size_t *n, hv_error **err)
{
  *out = NULL;
  *n = 0;
  int fd = openat (dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0)
    return hv_error_set (err, errno, "open the approvals directory");
  DIR *d = fdopendir (fd);
  if (d == NULL)
    {
      close (fd);
      return hv_error_set (err, errno, "read the approvals directory");
    }
  hv_approval_request *v = NULL;
  size_t count = 0, seen = 0;
  int64_t now = hv_realtime_ms ();
  struct dirent *de;
  while ((de = readdir (d)) != NULL && seen++ < LIST_MAX)
    {
      size_t len = strlen (de->d_name);
      const char *suffix = ".request";
      if (len <= strlen (suffix) || strcmp (de->d_name + len - strlen (suffix), suffix) != 0)
        continue;
      char id[64];
      size_t idlen = len - strlen (suffix);
      if (idlen >= sizeof (id))
        continue;
      memcpy (id, de->d_name, idlen);
      id[idlen] = '\0';
      if (!id_valid (id))
        continue;
      hv_approval_request r;
      cleanup_error hv_error *skip = NULL;
      /* Anything not well formed (a link, a FIFO, a huge file, bad JSON)
       * is nobody's request: skipped. */
      if (read_request (dirfd, id, &r, &skip) < 0)
        continue;
      if ((run && strcmp (r.run, run) != 0) || r.deadline_ms <= now || answered (dirfd, id))
        {
          hv_approval_request_clear (&r);
          continue;
        }
      v = xrealloc (v, (count + 1) * sizeof (*v));
      v[count++] = r;
    }
  closedir (d);
  if (count > 1)
    qsort (v, count, sizeof (*v), by_deadline);
  *out = v;
  *n = count;
  return 0;
}

/* --- answers ------------------------------------------------------------------ */

static int
refuse (hv_approval_status *status, hv_approval_status s, hv_error **err, const char *id)
{
  if (status)
    *status = s;
  if (s == HV_APPROVAL_NO_SUCH)
    return hv_error_set (err, 0, "no pending request %s", id);
  if (s == HV_APPROVAL_ANSWERED)
    return hv_error_set (err, 0, "request %s already answered", id);
  return hv_error_set (err, 0, "request %s expired (no answer in time: it was denied)", id);
}

/* Write ID.answer: a temporary file of our own (O_EXCL: nothing planted
 * is written through), then a rename that never replaces, so that the
 * first answer wins. */
static int
write_answer (int dirfd, const char *id, hv_ask_decision d, const char *by, hv_approval_status *status,
              hv_error **err)
{
  uint64_t rnd = 0;
  if (getrandom (&rnd, sizeof (rnd), 0) != (ssize_t) sizeof (rnd))
    rnd = (uint64_t) hv_realtime_ms ();
  cleanup_free char *tmp = xasprintf (".%s.answer.%d.%016llx.tmp", id, (int) getpid (), (unsigned long long) rnd);
  cleanup_free char *dst = xasprintf ("%s.answer", id);
  cleanup_free char *text = xasprintf ("{\"decision\":\"%s\",\"by\":\"%s\"}\n", hv_ask_decision_name (d), by);
  int fd = openat (dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0)
    return hv_error_set (err, errno, "answer %s: create %s", id, tmp);
  int werr = write_all (fd, text, strlen (text)) < 0 ? errno : 0;
  close (fd);
  if (werr == 0 && renameat2 (dirfd, tmp, dirfd, dst, RENAME_NOREPLACE) < 0)
    werr = errno;
  if (werr == 0)
    return 0;
  unlinkat (dirfd, tmp, 0);
  if (werr == EEXIST)
    return refuse (status, HV_APPROVAL_ANSWERED, err, id);
  return hv_error_set (err, werr, "answer %s: write %s", id, dst);
}

int
hv_approval_answer (int dirfd, const char *id, hv_ask_decision d, const char *by, hv_approval_status *status,
                    hv_error **err)
{
  if (status)
    *status = HV_APPROVAL_FAILED;
  if ((unsigned) d > HV_ASK_DENY)
    return hv_error_set (err, 0, "answer %s: no such decision", id);
  if (strcmp (by, "approve") != 0 && strcmp (by, "terminal") != 0 && strcmp (by, "command") != 0)
    return hv_error_set (err, 0, "answer %s: \"%s\" is not approve, terminal or command", id, by);
  if (!id_valid (id))
    return refuse (status, HV_APPROVAL_NO_SUCH, err, id);
  hv_approval_request r = { 0 };
  cleanup_error hv_error *rerr = NULL;
  if (read_request (dirfd, id, &r, &rerr) < 0)
    {
      if (rerr->errno_code == ENOENT)
        return refuse (status, HV_APPROVAL_NO_SUCH, err, id);
      *err = steal_pointer (&rerr);
      return hv_error_wrap (err, "answer %s", id);
    }
  int rc;
  if (answered (dirfd, id))
    rc = refuse (status, HV_APPROVAL_ANSWERED, err, id);
  else if (r.deadline_ms <= hv_realtime_ms ())
    rc = refuse (status, HV_APPROVAL_EXPIRED, err, id);
  else
    rc = write_answer (dirfd, id, d, by, status, err);
  if (rc == 0)
    {
      if (status)
        *status = HV_APPROVAL_OK;
      if (d == HV_ASK_ALWAYS && hv_approved_append (r.policy, r.name, by, err) < 0)
        {
          /* The run has its answer; only later runs lack it. */
          hv_error_wrap (err, "request %s answered \"always\" (approved for this run), but not kept for later runs",
                         id);
          rc = -1;
        }
    }
  hv_approval_request_clear (&r);
  return rc;
}

/* --- the approved files --------------------------------------------------------- */

static bool
policy_name_plain (const char *s)
{
  if (s[0] == '\0' || s[0] == '.' || strlen (s) > 200)
    return false;
  for (const char *p = s; *p; p++)
    if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || *p == '.'
          || *p == '_' || *p == '-'))
      return false;
  return true;
}

static char *
approved_dir (hv_error **err)
{
  return xdg_dir ("XDG_CONFIG_HOME", ".config", "approved", err);
}

char *
hv_approved_path (const char *policy, hv_error **err)
{
  if (!policy_name_plain (policy))
    {
      hv_error_set (err, 0, "policy \"%s\": no approved file for a policy that is not a plain name", policy);
      return NULL;
    }
  cleanup_free char *dir = approved_dir (err);
  if (dir == NULL)
    return NULL;
  return xasprintf ("%s/%s.yaml", dir, policy);
}

/* The names in an approved file as this file writes them: lines
 * `    - "NAME"`. */
static bool
file_has_name (const char *text, const char *name)
{
  cleanup_free char *line = xasprintf ("    - \"%s\"\n", name);
  for (const char *p = text; p && *p;)
    {
      if (strncmp (p, line, strlen (line)) == 0)
        return true;
      p = strchr (p, '\n');
      if (p)
        p++;
    }
  return false;
}

int
hv_approved_append (const char *policy, const char *name, const char *who, hv_error **err)
{
  if (!name_valid (name))
    return hv_error_set (err, 0, "approve \"%s\": not a DNS name", name);
  if (!policy_name_plain (policy))
    return hv_error_set (err, 0, "policy \"%s\": no approved file for a policy that is not a plain name", policy);
  for (const char *p = who; *p; p++)
    if (!((*p >= 'a' && *p <= 'z') || *p == '-'))
      return hv_error_set (err, 0, "approve %s: \"%s\" is not who answered", name, who);
  cleanup_free char *dir = approved_dir (err);
  if (dir == NULL)
    return -1;
  cleanup_close int dfd = open_private_dir (dir, true, err);
  if (dfd < 0)
    return hv_error_wrap (err, "approve %s for the policy %s", name, policy);
  /* Two answerers at once: each reads and rewrites under the lock. */
  if (flock (dfd, LOCK_EX) < 0)
    return hv_error_set (err, errno, "lock %s", dir);
  cleanup_free char *file = xasprintf ("%s.yaml", policy);
  cleanup_free char *old = NULL;
  cleanup_error hv_error *rerr = NULL;
  if (read_own_file (dfd, file, APPROVED_MAX, &old, &rerr) < 0)
    {
      if (rerr->errno_code != ENOENT)
        {
          *err = steal_pointer (&rerr);
          return hv_error_wrap (err, "approve %s: %s", name, dir);
        }
      old = xasprintf ("# Names approved \"always\" for the policy %s (haven approve, or the run's terminal).\n"
                       "# haven run --policy %s merges this file into the policy; remove a line to stop it.\n"
                       "network:\n  allow:\n",
                       policy, policy);
    }
  if (file_has_name (old, name))
    return 0;
  cleanup_free char *when = now_rfc3339 ();
  size_t ol = strlen (old);
  cleanup_free char *text = xasprintf ("%s%s    # approved by %s at %s\n    - \"%s\"\n", old,
                                       ol && old[ol - 1] != '\n' ? "\n" : "", who, when, name);
  cleanup_free char *path = xasprintf ("%s/%s", dir, file);
  if (write_file_atomic (dir, file, text, strlen (text), err) < 0)
    return hv_error_wrap (err, "approve %s: write %s", name, path);
  return 0;
}

/* --- a run's side ------------------------------------------------------------ */

int
hv_approved_merge (hv_policy *p, hv_error **err)
{
  if (p->name == NULL || !policy_name_plain (p->name) || p->net_mode != HV_NET_ALLOWLIST)
    return 0;
  /* No home to keep approvals in: none were kept. */
  cleanup_error hv_error *no_dir = NULL;
  cleanup_free char *dir = approved_dir (&no_dir);
  if (dir == NULL)
    return 0;
  cleanup_close int dfd = open (dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (dfd < 0 && errno == ENOENT)
    return 0;
  if (dfd < 0)
    return hv_error_set (err, errno, "open %s", dir);
  if (check_private_dir (dfd, dir, err) < 0)
    return hv_error_wrap (err, "approved names for the policy %s", p->name);
  cleanup_free char *file = xasprintf ("%s.yaml", p->name);
  cleanup_free char *path = xasprintf ("%s/%s", dir, file);
  cleanup_free char *text = NULL;
  cleanup_error hv_error *rerr = NULL;
  if (read_own_file (dfd, file, APPROVED_MAX, &text, &rerr) < 0)
    {
      if (rerr->errno_code == ENOENT)
        return 0;
      *err = steal_pointer (&rerr);
      return hv_error_wrap (err, "approved names for the policy %s: %s", p->name, path);
    }
  return hv_policy_merge_approved (p, text, strlen (text), path, err);
}

int
hv_approvals_prepare (const hv_policy *p, char **approvals, char **approved, hv_error **err)
{
  *approvals = *approved = NULL;
  if (!hv_policy_asks (p))
    return 0;
  cleanup_free char *a = hv_approvals_dir_path (err);
  if (a == NULL)
    return -1;
  cleanup_close int afd = open_private_dir (a, true, err);
  if (afd < 0)
    return hv_error_wrap (err, "the approvals directory");
  cleanup_free char *b = approved_dir (err);
  if (b == NULL)
    return -1;
  cleanup_close int bfd = open_private_dir (b, true, err);
  if (bfd < 0)
    return hv_error_wrap (err, "the approved names' directory");
  *approvals = steal_pointer (&a);
  *approved = steal_pointer (&b);
  return 0;
}
