/* `haven audit`: the audit trails, readably (audit_view.h says how each
 * record is read and shown).
 *
 * Without FILE arguments it reads the trails haven writes for the caller:
 * the engine containers' (/var/log/haven/containers/<id>.jsonl as root,
 * $XDG_STATE_HOME/haven/containers/<id>.jsonl otherwise, as the monitor
 * chooses) and haven run's default log (~/.local/state/haven/audit.log,
 * the shipped policies' audit.log).  Records of all files are printed in
 * time order. */
#include "config.h"
#include "haven_audit.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "audit_verify.h"
#include "audit_view.h"
#include "cli.h"
#include "haven_help.h"
#include "utils.h"

struct shown
{
  time_t sec;
  long nsec;
  size_t order; /* reading order: equal times keep it */
  char *text;
};

struct audit_run
{
  struct hv_audit_filter filter;
  bool json;
  bool verify; /* --verify: the chains, not the records */
  struct shown *v;
  size_t n, cap;
  size_t bad;            /* lines that are not records */
  char *first_bad;       /* FILE:LINE of the first */
  size_t unreadable;     /* default trails that could not be opened */
  oci_strv looked;       /* where records were looked for, said when none came */
};

static void
add_shown (struct audit_run *a, const struct hv_audit_record *r, char *text)
{
  if (a->n == a->cap)
    {
      a->cap = a->cap ? 2 * a->cap : 64;
      a->v = xrealloc (a->v, a->cap * sizeof (*a->v));
    }
  a->v[a->n] = (struct shown){ r->sec, r->nsec, a->n, text };
  a->n++;
}

static void
count_bad (struct audit_run *a, const char *path, size_t line)
{
  if (a->bad++ == 0)
    a->first_bad = xasprintf ("%s:%zu", path, line);
}

/* One line (without its newline) of the file. */
static void
take_line (struct audit_run *a, const char *path, size_t lineno, const char *line)
{
  struct hv_audit_record r;
  if (line[0] == '\0')
    return;
  if (hv_audit_record_parse (line, &r) < 0)
    {
      count_bad (a, path, lineno);
      return;
    }
  if (hv_audit_record_matches (&r, &a->filter))
    add_shown (a, &r, a->json ? xstrdup (line) : hv_audit_record_format (&r));
  hv_audit_record_release (&r);
}

/* Line by line; a line longer than HV_AUDIT_VIEW_MAX_LINE or holding a
 * NUL byte is a bad record, and is never held in memory whole. */
static void
read_trail (struct audit_run *a, const char *path, FILE *f)
{
  cleanup_free char *buf = xmalloc0 (HV_AUDIT_VIEW_MAX_LINE + 1);
  size_t len = 0, lineno = 0;
  bool bad = false;
  for (;;)
    {
      int c = getc (f);
      if (c != EOF && c != '\n')
        {
          if (c == '\0' || len == HV_AUDIT_VIEW_MAX_LINE)
            bad = true;
          else
            buf[len++] = (char) c;
          continue;
        }
      if (c == EOF && len == 0 && !bad)
        break;
      lineno++;
      buf[len] = '\0';
      if (bad)
        count_bad (a, path, lineno);
      else
        take_line (a, path, lineno, buf);
      len = 0;
      bad = false;
      if (c == EOF)
        break;
    }
}

/* A trail, opened without following a link at its last component and
 * never a FIFO or device (O_NONBLOCK, then a regular-file check): it is
 * only read, but `haven audit` must not hang on a planted FIFO. */
static int
open_trail (const char *path, bool required, bool note, struct audit_run *a, hv_error **err)
{
  cleanup_close int fd = open (path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY);
  struct stat st;
  if (fd < 0)
    {
      cleanup_free char *what = xasprintf ("%s (%s)", path, errno == ENOENT ? "not there" : strerror (errno));
      if (note)
        oci_strv_push (&a->looked, what);
      if (!required && errno == ENOENT)
        return 0;
      if (!required)
        {
          a->unreadable++;
          fprintf (stderr, "haven audit: %s: %s\n", path, strerror (errno));
          return 0;
        }
      return hv_error_set (err, errno, "open %s", path);
    }
  if (fstat (fd, &st) < 0)
    return hv_error_set (err, errno, "stat %s", path);
  if (!S_ISREG (st.st_mode))
    {
      cleanup_free char *what = xasprintf ("%s (not a regular file)", path);
      if (note)
        oci_strv_push (&a->looked, what);
      if (!required)
        return 0;
      return hv_error_set (err, 0, "%s: not a regular file", path);
    }
  FILE *f = fdopen (fd, "r");
  if (f == NULL)
    return hv_error_set (err, errno, "fdopen %s", path);
  if (note)
    oci_strv_push (&a->looked, path);
  fd = -1;
  read_trail (a, path, f);
  fclose (f);
  return 0;
}

static int
compare_names (const void *x, const void *y)
{
  return strcmp (*(char *const *) x, *(char *const *) y);
}

/* Every *.jsonl of a container trail directory, in name order. */
static void
read_container_trails (struct audit_run *a, const char *dir)
{
  DIR *d = opendir (dir);
  if (d == NULL)
    {
      cleanup_free char *what = xasprintf ("%s/*.jsonl (%s)", dir, errno == ENOENT ? "not there" : strerror (errno));
      oci_strv_push (&a->looked, what);
      if (errno != ENOENT)
        {
          a->unreadable++;
          fprintf (stderr, "haven audit: %s: %s\n", dir, strerror (errno));
        }
      return;
    }
  oci_strv names = { 0 };
  struct dirent *de;
  while ((de = readdir (d)))
    {
      size_t l = strlen (de->d_name);
      if (l > 6 && strcmp (de->d_name + l - 6, ".jsonl") == 0)
        oci_strv_push (&names, de->d_name);
    }
  closedir (d);
  cleanup_free char *what = names.n ? xasprintf ("%s/*.jsonl (%zu file%s)", dir, names.n, names.n == 1 ? "" : "s")
                                     : xasprintf ("%s/*.jsonl (none)", dir);
  oci_strv_push (&a->looked, what);
  if (names.n)
    qsort (names.v, names.n, sizeof (names.v[0]), compare_names);
  for (size_t i = 0; i < names.n; i++)
    {
      cleanup_free char *path = xasprintf ("%s/%s", dir, names.v[i]);
      open_trail (path, false, false, a, NULL);
    }
  oci_strv_free (&names);
}

static void
read_default_trails (struct audit_run *a)
{
  const char *home = getenv ("HOME");
  const char *state = getenv ("XDG_STATE_HOME");
  cleanup_free char *state_dir = NULL;
  if (state && state[0] == '/')
    state_dir = xstrdup (state);
  else if (home && home[0] == '/')
    state_dir = xasprintf ("%s/.local/state", home);
  /* Where the per-container monitor writes (runtime/monitor/container_monitor.c):
   * root's engines, else this user's (rootless Podman's). */
  if (geteuid () == 0)
    read_container_trails (a, "/var/log/haven/containers");
  else if (state_dir)
    {
      cleanup_free char *dir = xasprintf ("%s/haven/containers", state_dir);
      read_container_trails (a, dir);
    }
  /* haven run's: audit.log in a policy, "~/" being the home. */
  if (home && home[0] == '/')
    {
      cleanup_free char *log = xasprintf ("%s/.local/state/haven/audit.log", home);
      open_trail (log, false, true, a, NULL);
    }
}

static int
compare_shown (const void *x, const void *y)
{
  const struct shown *a = x, *b = y;
  if (a->sec != b->sec)
    return a->sec < b->sec ? -1 : 1;
  if (a->nsec != b->nsec)
    return a->nsec < b->nsec ? -1 : 1;
  return a->order < b->order ? -1 : a->order > b->order;
}

enum
{
  A_SINCE = 1,
  A_EVENT,
  A_CONTAINER,
  A_JSON,
  A_VERIFY,
  A_HELP,
};

static int
parse_audit_opts (int argc, char **argv, struct audit_run *a, int *first_file, bool *help, hv_error **err)
{
  static const struct hv_opt opts[] = {
    { "since", 0, true, A_SINCE },         { "event", 'e', true, A_EVENT }, { "rule", 0, true, A_EVENT },
    { "container", 'c', true, A_CONTAINER }, { "json", 0, false, A_JSON },  { "help", 'h', false, A_HELP },
    { "verify", 0, false, A_VERIFY },      { NULL, 0, false, 0 },
  };
  struct hv_opt_iter it = { argc, argv, 1, "haven audit" };
  const char *arg;
  int id;
  while ((id = hv_opt_next (&it, opts, &arg, err)) > 0)
    switch (id)
      {
      case A_SINCE:
        if (hv_audit_parse_since (arg, time (NULL), &a->filter.since, err) < 0)
          return -1;
        a->filter.has_since = true;
        break;
      case A_EVENT:
        oci_strv_push (&a->filter.events, arg);
        break;
      case A_CONTAINER:
        oci_strv_push (&a->filter.containers, arg);
        break;
      case A_JSON:
        a->json = true;
        break;
      case A_VERIFY:
        a->verify = true;
        break;
      default:
        *help = true;
        break;
      }
  if (id < 0)
    return -1;
  *first_file = it.index;
  return 0;
}

static void
release_run (struct audit_run *a)
{
  for (size_t i = 0; i < a->n; i++)
    free (a->v[i].text);
  free (a->v);
  free (a->first_bad);
  oci_strv_free (&a->filter.events);
  oci_strv_free (&a->filter.containers);
  oci_strv_free (&a->looked);
}

/* No record to show: say where they were looked for (on stderr, so that
 * --json output stays JSON lines), and where haven writes them.  An empty
 * answer that names no place reads as "nothing was refused". */
static void
say_where_looked (const struct audit_run *a, bool defaults)
{
  bool filtered = a->filter.has_since || a->filter.events.n || a->filter.containers.n;
  fprintf (stderr, "haven audit: no records%s; looked in:\n", filtered ? " matching the filters" : "");
  for (size_t i = 0; i < a->looked.n; i++)
    fprintf (stderr, "haven audit:   %s\n", a->looked.v[i]);
  if (defaults)
    fprintf (stderr, "haven audit: haven run keeps a trail only under a policy with audit.log (the shipped agent\n"
                     "haven audit: policies and strict write ~/.local/state/haven/audit.log; for another path:\n"
                     "haven audit: haven audit FILE); engine containers under a haven policy always keep one.\n");
}

int
hv_cmd_audit (int argc, char **argv, int *exit_status, hv_error **err)
{
  struct audit_run a = { 0 };
  int first_file = argc;
  bool help = false;
  int r = -1;
  *exit_status = 0;
  if (parse_audit_opts (argc, argv, &a, &first_file, &help, err) < 0)
    {
      /* --verify's usage errors are 2, as its unreadable files. */
      for (int i = 1; i < argc; i++)
        if (strcmp (argv[i], "--verify") == 0)
          hv_error_set_exit_status (err, 2);
      goto out;
    }
  if (help)
    {
      hv_haven_usage (stdout, "audit");
      r = 0;
      goto out;
    }
  if (a.verify)
    {
      if (a.filter.has_since || a.filter.events.n || a.filter.containers.n)
        {
          hv_error_set (err, 0, "haven audit --verify: --since, --event and --container select records to show; "
                                "a chain is verified whole");
          hv_error_set_exit_status (err, 2);
          goto out;
        }
      *exit_status = hv_audit_verify_files (argv + first_file, argc - first_file, a.json);
      r = 0;
      goto out;
    }
  if (first_file == argc)
    read_default_trails (&a);
  for (int i = first_file; i < argc; i++)
    if (open_trail (argv[i], true, true, &a, err) < 0)
      goto out;
  if (a.n)
    qsort (a.v, a.n, sizeof (a.v[0]), compare_shown);
  for (size_t i = 0; i < a.n; i++)
    puts (a.v[i].text);
  /* Said after the records, on stderr, so that --json output stays
   * JSON lines; the records are flushed first, or a reader of both
   * streams (2>&1 into a pipe) gets the note in the middle of a record
   * wherever stdio's buffer ended. */
  fflush (stdout);
  if (a.bad)
    fprintf (stderr, "haven audit: %zu line%s skipped: not audit records (the first at %s)\n", a.bad,
             a.bad == 1 ? "" : "s", a.first_bad);
  if (a.n == 0)
    say_where_looked (&a, first_file == argc);
  r = 0;
out:
  release_run (&a);
  return r;
}
