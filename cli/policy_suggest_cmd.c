#include "config.h"
#include "policy_suggest_cmd.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <yajl/yajl_tree.h>

#include "cli.h"
#include "file_read.h"
#include "haven_help.h"
#include "policy_load.h"
#include "policy_suggest.h"
#include "utils.h"

/* A trail is appended to and never rotated by haven: read it whole,
 * up to a bound far past what months of runs write. */
#define TRAIL_MAX (512u << 20)

struct line
{
  yajl_val v; /* NULL: a blank line */
  size_t no;  /* 1-based */
};

struct trail
{
  const char *path;
  struct line *lines;
  size_t n;
};

static void
trail_free (struct trail *t)
{
  for (size_t i = 0; i < t->n; i++)
    yajl_tree_free (t->lines[i].v);
  free (t->lines);
}

static int
trail_read (struct trail *t, hv_error **err)
{
  cleanup_close int fd = open (t->path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0)
    return hv_error_set (err, errno, "%s", t->path);
  cleanup_free char *text = NULL;
  size_t len = 0;
  if (hv_read_regular_fd (fd, t->path, TRAIL_MAX, &text, &len, err) < 0)
    return -1;
  if (memchr (text, '\0', len))
    return hv_error_set (err, 0, "%s: holds a NUL byte: not a trail of JSON lines", t->path);
  size_t no = 0;
  for (char *p = text, *end; p < text + len; p = end + 1)
    {
      no++;
      end = strchr (p, '\n');
      if (end == NULL)
        end = text + len;
      *end = '\0';
      t->lines = xrealloc (t->lines, (t->n + 1) * sizeof (*t->lines));
      t->lines[t->n] = (struct line){ NULL, no };
      t->n++;
      if (strspn (p, " \t\r") == strlen (p))
        continue;
      char why[256] = "";
      t->lines[t->n - 1].v = yajl_tree_parse (p, why, sizeof (why));
      if (t->lines[t->n - 1].v == NULL)
        {
          why[strcspn (why, "\n")] = '\0';
          return hv_error_set (err, 0, "%s:%zu: not a JSON record (%s)", t->path, no, why[0] ? why : "parse error");
        }
      if (!YAJL_IS_OBJECT (t->lines[t->n - 1].v))
        return hv_error_set (err, 0, "%s:%zu: not a JSON object", t->path, no);
    }
  return 0;
}

static const char *
member (yajl_val v, const char *key)
{
  const char *path[] = { key, NULL };
  yajl_val m = v ? yajl_tree_get (v, path, yajl_t_string) : NULL;
  return m ? YAJL_GET_STRING (m) : NULL;
}

static bool
is_start (yajl_val v)
{
  const char *e = member (v, "event");
  return e && strcmp (e, "start") == 0;
}

static bool
is_learn (yajl_val v)
{
  const char *path[] = { "learn", NULL };
  yajl_val m = v ? yajl_tree_get (v, path, yajl_t_any) : NULL;
  return m && YAJL_IS_TRUE (m);
}

/* The start record of the run: --run ID, else the last learn run. */
static int
find_start (const struct trail *t, const char *run, size_t *out, hv_error **err)
{
  for (size_t i = t->n; i-- > 0;)
    {
      yajl_val v = t->lines[i].v;
      if (!is_start (v))
        continue;
      if (run ? (member (v, "run") && strcmp (member (v, "run"), run) == 0) : is_learn (v))
        {
          *out = i;
          return 0;
        }
    }
  if (run)
    return hv_error_set (err, 0, "%s: no run %s (no start record with \"run\":\"%s\")", t->path, run, run);
  return hv_error_set (err, 0,
                       "%s: no learn run (no start record with \"learn\":true): run `haven run --learn -- CMD` first, "
                       "or name a run with --run ID",
                       t->path);
}

/* Is record v, after the start at index s, one of that run's?  With run
 * ids (every record of a run carries the same "run"), by the id; in a
 * trail written before them, the records up to the run's exit that are
 * the run's own: its policy, and no container but its own. */
static bool
of_run (const struct trail *t, size_t s, yajl_val v, bool *ended)
{
  yajl_val start = t->lines[s].v;
  const char *run = member (start, "run");
  if (run)
    {
      const char *r = member (v, "run");
      return r && strcmp (r, run) == 0;
    }
  const char *policy = member (start, "policy"), *p = member (v, "policy");
  if (policy == NULL || p == NULL || strcmp (policy, p) != 0)
    return false;
  const char *container = member (v, "container");
  const char *pathv[] = { "haven_pid", NULL };
  yajl_val pid = yajl_tree_get (start, pathv, yajl_t_number);
  if (container)
    {
      char own[64];
      snprintf (own, sizeof (own), "haven-run-%lld", pid && YAJL_IS_INTEGER (pid) ? YAJL_GET_INTEGER (pid) : -1LL);
      return strcmp (container, own) == 0;
    }
  const char *e = member (v, "event");
  if (e && strcmp (e, "exit") == 0)
    *ended = true;
  return true;
}

/* Load text as a policy, as `haven policy explain` would: what this
 * command prints must load. */
static int
check_loads (const char *text, hv_error **err)
{
  cleanup_close int fd = memfd_create ("suggested.yaml", MFD_CLOEXEC);
  if (fd < 0)
    return hv_error_set (err, errno, "memfd_create");
  size_t len = strlen (text);
  if (write (fd, text, len) != (ssize_t) len)
    return hv_error_set (err, errno, "write the suggestion");
  char path[64];
  snprintf (path, sizeof (path), "/proc/self/fd/%d", fd);
  cleanup_policy hv_policy *p = NULL;
  if (hv_policy_load (path, &p, err) < 0)
    return hv_error_wrap (err, "the suggestion does not load (a bug in haven policy suggest)");
  return 0;
}

static int
write_out (const char *path, const char *text, hv_error **err)
{
  /* ~/.config/haven/policies, where `haven run --policy NAME` finds it,
   * may not exist yet. */
  cleanup_free char *dir = xstrdup (path);
  if (mkdir_p (dirname (dir), 0700, err) < 0)
    return hv_error_wrap (err, "-o %s", path);
  cleanup_close int fd = open (path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd < 0)
    return hv_error_set (err, errno, "-o %s", path);
  size_t len = strlen (text);
  if (write (fd, text, len) != (ssize_t) len)
    return hv_error_set (err, errno, "write %s", path);
  return 0;
}

enum
{
  O_FROM = 1,
  O_RUN,
  O_BASE,
  O_OUT,
  O_HELP,
};

int
hv_policy_suggest_cmd (int argc, char **argv, hv_error **err)
{
  static const struct hv_opt opts[] = {
    { "from", 0, true, O_FROM }, { "run", 0, true, O_RUN },   { "base", 0, true, O_BASE },
    { "output", 'o', true, O_OUT }, { "help", 'h', false, O_HELP }, { NULL, 0, false, 0 },
  };
  struct hv_opt_iter it = { argc, argv, 1, "haven policy suggest" };
  const char *from = NULL, *run = NULL, *base = NULL, *out = NULL, *arg;
  int id;
  while ((id = hv_opt_next (&it, opts, &arg, err)) > 0)
    switch (id)
      {
      case O_FROM:
        from = arg;
        break;
      case O_RUN:
        run = arg;
        break;
      case O_BASE:
        base = arg;
        break;
      case O_OUT:
        out = arg;
        break;
      default:
        hv_haven_usage (stdout, "policy");
        return 0;
      }
  if (id < 0)
    return -1;
  if (it.index < argc)
    return hv_error_set (err, 0, "haven policy suggest: unexpected argument \"%s\"", argv[it.index]);
  cleanup_free char *default_trail = NULL;
  if (from == NULL)
    {
      const char *home = getenv ("HOME");
      if (home == NULL || home[0] != '/')
        return hv_error_set (err, 0, "haven policy suggest: HOME is not set: name the trail with --from FILE");
      default_trail = xasprintf ("%s/.local/state/haven/audit.log", home);
      from = default_trail;
    }
  struct trail t = { .path = from };
  size_t start = 0;
  int r = -1;
  cleanup_policy hv_policy *p = NULL;
  cleanup_suggest hv_suggest *s = NULL;
  cleanup_free char *yaml = NULL;
  if (trail_read (&t, err) < 0 || find_start (&t, run, &start, err) < 0)
    goto out;
  yajl_val sv = t.lines[start].v;
  /* The base: as given, else as the learn run recorded it (the policy's
   * file or name as haven run loaded it), else its name. */
  const char *base_ref = base ? base : member (sv, "base") ? member (sv, "base") : member (sv, "policy");
  if (base_ref == NULL)
    {
      hv_error_set (err, 0, "%s:%zu: the start record names no policy: give --base BASE", from, t.lines[start].no);
      goto out;
    }
  if (hv_policy_load (base_ref, &p, err) < 0)
    {
      hv_error_wrap (err, "base policy (--base, or the run's \"base\" at %s:%zu)", from, t.lines[start].no);
      goto out;
    }
  /* extends: names the file as loaded, so that the suggestion loads
   * wherever it is written. */
  s = hv_suggest_new (p, p->file && strchr (base_ref, '/') ? p->file : base_ref, getenv ("HOME"), err);
  if (s == NULL)
    goto out;
  bool ended = false;
  for (size_t i = start; i < t.n && !ended; i++)
    {
      if (t.lines[i].v == NULL || !of_run (&t, start, t.lines[i].v, &ended))
        continue;
      char where[4200];
      snprintf (where, sizeof (where), "%s:%zu", from, t.lines[i].no);
      if (hv_suggest_add (s, t.lines[i].v, where, err) < 0)
        goto out;
    }
  {
    const char *rid = member (sv, "run");
    cleanup_free char *header = rid ? xasprintf ("%s, run %s (line %zu)", from, rid, t.lines[start].no)
                                    : xasprintf ("%s, the run that starts at line %zu", from, t.lines[start].no);
    yaml = hv_suggest_yaml (s, header);
  }
  if (check_loads (yaml, err) < 0)
    goto out;
  if (out)
    {
      if (write_out (out, yaml, err) < 0)
        goto out;
    }
  else
    fputs (yaml, stdout);
  fprintf (stderr, "haven: %zu entr%s suggested, %zu refusal%s not (the comments at the end say why)%s%s\n",
           hv_suggest_entries (s), hv_suggest_entries (s) == 1 ? "y" : "ies", hv_suggest_flags (s),
           hv_suggest_flags (s) == 1 ? "" : "s", out ? "; written to " : "", out ? out : "");
  r = 0;
out:
  trail_free (&t);
  return r;
}
