/* `haven why`: the run's view of its own denials (denial_view.h), read
 * inside the sandbox, said in words an agent can relay to its user.
 *
 * The view is haven's: haven's side writes it (the monitor, the seccomp
 * listener) and the sandbox sees it read-only at HV_WHY_DIR, or, in a
 * run without namespaces, at $HAVEN_WHY_DIR (read-only through Landlock).
 * Its lines are haven's records, each with "rule" and "allow" (or
 * "never" and "why_not": denial_explain.h). */
#include "config.h"
#include "why_cmd.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <yajl/yajl_tree.h>

#include "denial_explain.h"
#include "denial_view.h"
#include "file_read.h"
#include "haven_help.h"
#include "json_walk.h"
#include "oci_spec.h"
#include "utils.h"

#define WHY_DEFAULT_N 10
#define WHY_READ_MAX (HV_DENIAL_VIEW_MAX_BYTES + HV_DENIAL_VIEW_LINE_MAX + 2)

/* What was refused, in words; NULL for a record that is no denial. */
static char *
what_of (yajl_val rec)
{
  const char *event = jw_string_at (rec, "event");
  if (event == NULL)
    return NULL;
  if (strcmp (event, "denied") == 0)
    {
      const char *sc = jw_string_at (rec, "syscall"), *comm = jw_string_at (rec, "comm");
      return xasprintf ("the system call %s%s%s", sc ? sc : "?", comm && *comm ? " by " : "", comm && *comm ? comm : "");
    }
  if (strcmp (event, "landlock-denied") == 0)
    {
      const char *access = jw_string_at (rec, "access"), *path = jw_string_at (rec, "path"), *comm = jw_string_at (rec, "comm");
      const char *verb = access == NULL                        ? "access"
                         : strcmp (access, "fs.execute") == 0  ? "execute"
                         : strncmp (access, "fs.read", 7) == 0 ? "read"
                                                               : "write";
      return xasprintf ("%s %s%s%s (Landlock: %s)", verb, path ? path : "?", comm && *comm ? " by " : "",
                        comm && *comm ? comm : "", access ? access : "?");
    }
  if (strcmp (event, "net-denied") == 0)
    {
      const char *dst = jw_string_at (rec, "destination"), *proto = jw_string_at (rec, "protocol");
      bool v6 = dst && strchr (dst, ':');
      const char *path[] = { "names", NULL };
      yajl_val names = yajl_tree_get (rec, path, yajl_t_array);
      const char *name = names && names->u.array.len && YAJL_IS_STRING (names->u.array.values[0])
                             ? YAJL_GET_STRING (names->u.array.values[0])
                             : NULL;
      return xasprintf ("connect to %s%s%s:%lld (%s%s%s)", v6 ? "[" : "", dst ? dst : "?", v6 ? "]" : "",
                        jw_integer_at (rec, "port", 0), proto ? proto : "?", name ? ", " : "", name ? name : "");
    }
  if (strcmp (event, "dns-refused") == 0)
    {
      /* Its types (A, AAAA) are one refusal to the user. */
      const char *name = jw_string_at (rec, "name");
      return xasprintf ("look up the name %s", name ? name : "?");
    }
  return NULL;
}

/* A path's rule and the line that would change it (or why none should). */
static void
print_explained (const struct hv_denial_explained *e)
{
  printf ("  rule:  %s\n", e->rule);
  if (e->never)
    printf ("  allow: no policy line should: %s\n", e->why_not);
  else
    printf ("  allow: %s\n", e->allow);
  if (e->caution)
    printf ("  note:  %s\n", e->caution);
}

/* `haven why PATH`: what the policy does with a path.  A write to a
 * read-only mount (EROFS) or a look at a hidden file (ENOENT) is refused
 * by the mount table, before any part of haven could record it: the
 * table of the run (rules.json) still says which rule that is. */
static int
explain_path (int dfd, const char *arg)
{
  cleanup_free char *text = NULL;
  cleanup_error hv_error *err = NULL;
  hv_denial_rules *r = NULL;
  if (read_file_at (dfd, HV_WHY_RULES, &text, &err) == 0)
    r = hv_denial_rules_parse (text);
  char cwd[PATH_MAX] = "/";
  if (arg[0] != '/' && getcwd (cwd, sizeof (cwd)) == NULL)
    strcpy (cwd, "/");
  cleanup_free char *path = arg[0] == '/' ? xstrdup (arg) : xasprintf ("%s/%s", strcmp (cwd, "/") ? cwd : "", arg);
  struct stat st;
  bool exists = lstat (path, &st) == 0;
  /* The nearest directory that exists decides whether it can be made. */
  cleanup_free char *near = xstrdup (path);
  while (!exists && strcmp (near, "/") != 0 && access (near, F_OK) != 0)
    {
      char *slash = strrchr (near, '/');
      *(slash == near ? slash + 1 : slash) = '\0';
    }
  bool writable = access (near, W_OK) == 0;
  /* Missing under the hidden home: hidden, not read-only. */
  bool hidden = !exists && r && r->hide_home && r->home && strncmp (path, r->home, strlen (r->home)) == 0
                && path[strlen (r->home)] == '/';
  /* A program under allow_exec or block_shell: running it is the
   * question (a shell block_shell masks is a device node here, refused
   * before Landlock could record it). */
  bool program = exists && r && r->exec
                 && ((S_ISREG (st.st_mode) && (st.st_mode & 0111)) || (S_ISCHR (st.st_mode) && strncmp (path, "/dev/", 5)));
  struct hv_denial_facts f = { .kind = HV_DENIAL_FILE, .path = path,
                               .access = program ? "fs.execute" : hidden ? "fs.read_file" : "fs.write_file" };
  struct hv_denial_explained e;
  hv_denial_explain (r, &f, &e);
  printf ("%s: ", path);
  /* block_shell alone refuses shells only (the explainer's caution). */
  if (program && !e.never && !e.caution && strcmp (r->exec, "process.block_shell") == 0)
    {
      printf ("a program this sandbox may run (block_shell refuses shells only)\n");
      hv_denial_explained_release (&e);
      hv_denial_rules_free (r);
      return 0;
    }
  if (program && !(e.never && strncmp (e.rule, "filesystem.block", 16) == 0))
    {
      printf ("a program: where running it fails with \"Permission denied\", %s refuses it\n", e.rule);
      print_explained (&e);
      hv_denial_explained_release (&e);
      hv_denial_rules_free (r);
      return 0;
    }
  /* A secret or haven's own file is never the sandbox's, writable or not. */
  bool kept = e.never && (strncmp (e.rule, "filesystem.block", 16) == 0 || strcmp (e.rule, "haven's own files") == 0);
  if (writable && !hidden && !kept)
    printf ("this sandbox may %s it; nothing in the policy refuses that.\n", exists ? "write" : "create");
  else
    {
      printf ("%s\n", e.never ? "hidden or read-only, and no policy line should change that"
                      : hidden ? "not shown in this sandbox" : "read-only in this sandbox");
      print_explained (&e);
    }
  hv_denial_explained_release (&e);
  hv_denial_rules_free (r);
  return 0;
}

/* Does the run's table say its policy keeps a trail?  (No table: an
 * older haven's view, which was made only with one.) */
static bool
run_keeps_trail (int dfd)
{
  cleanup_free char *text = NULL;
  cleanup_error hv_error *err = NULL;
  if (read_file_at (dfd, HV_WHY_RULES, &text, &err) < 0)
    return true;
  hv_denial_rules *r = hv_denial_rules_parse (text);
  bool trail = r == NULL || r->trail;
  hv_denial_rules_free (r);
  return trail;
}

static const char *
view_dir (void)
{
  const char *env = getenv (HV_WHY_ENV);
  return env && env[0] == '/' ? env : HV_WHY_DIR;
}

static void
usage (FILE *out)
{
  hv_haven_usage (out, "why");
}

int
hv_cmd_why (int argc, char **argv)
{
  static const struct option longopts[] = { { "json", no_argument, NULL, 'j' }, { "help", no_argument, NULL, 'h' },
                                             { NULL, 0, NULL, 0 } };
  long n = WHY_DEFAULT_N;
  bool json = false;
  int c;
  optind = 1;
  while ((c = getopt_long (argc, argv, "+n:jh", longopts, NULL)) != -1)
    switch (c)
      {
      case 'n':
        {
          char *end;
          errno = 0;
          n = strtol (optarg, &end, 10);
          if (errno || *end || n < 1 || n > HV_DENIAL_VIEW_KEEP)
            {
              fprintf (stderr, "haven why: -n %s: a number from 1 to %d\n", optarg, HV_DENIAL_VIEW_KEEP);
              return 2;
            }
          break;
        }
      case 'j':
        json = true;
        break;
      case 'h':
        usage (stdout);
        return 0;
      default:
        usage (stderr);
        return 2;
      }
  const char *dir = view_dir ();
  cleanup_close int dfd = open (dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd < 0)
    {
      fprintf (stderr,
               "haven why: not inside a haven sandbox (no %s): it reads the denials of the run it is in.\n"
               "Outside a sandbox, `haven audit` shows what sandboxes were refused (haven audit --since 10m;\n"
               "its records carry the rule and the policy line that would allow each one: haven audit --json).\n",
               dir);
      return 1;
    }
  if (optind < argc)
    {
      for (int i = optind; i < argc; i++)
        explain_path (dfd, argv[i]);
      return 0;
    }
  cleanup_close int fd = openat (dfd, HV_WHY_FILE, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  cleanup_free char *text = xmalloc0 (WHY_READ_MAX + 1);
  if (fd >= 0)
    read_upto (fd, text, WHY_READ_MAX + 1);
  /* The lines' starts, the last n denials kept. */
  size_t n_lines = 0;
  char **lines = xmalloc0 (sizeof (char *) * (size_t) (HV_DENIAL_VIEW_KEEP * 4 + 1));
  for (char *save = NULL, *l = strtok_r (text, "\n", &save); l; l = strtok_r (NULL, "\n", &save))
    {
      if (n_lines == (size_t) HV_DENIAL_VIEW_KEEP * 4)
        {
          memmove (lines, lines + 1, (n_lines - 1) * sizeof (char *));
          n_lines--;
        }
      lines[n_lines++] = l;
    }
  size_t first = n_lines > (size_t) n ? n_lines - (size_t) n : 0;
  if (json)
    {
      for (size_t i = first; i < n_lines; i++)
        printf ("%s\n", lines[i]);
      free (lines);
      return 0;
    }
  if (n_lines == 0 && !run_keeps_trail (dfd))
    {
      printf ("haven why: this run's policy keeps no audit trail (audit: {log: FILE}), so its refusals are not\n"
              "recorded and cannot be listed here; `haven why PATH` still names the rule behind a path.  To list\n"
              "them, the user runs again under a policy that extends this one with audit: {log: ~/.local/state/haven/audit.log}.\n");
      free (lines);
      return 0;
    }
  if (n_lines == 0)
    {
      printf ("haven why: nothing has been recorded as refused in this run so far.  A write that failed with\n"
              "\"Read-only file system\" and a file that is not there (hidden) leave no record: `haven why PATH`\n"
              "names their rule.\n");
      free (lines);
      return 0;
    }
  const char *policy = NULL;
  cleanup_free char *policy_copy = NULL;
  /* A refusal said once: the same thing refused by the same rule again
   * (a name's A and AAAA, a retried exec) adds nothing for the user. */
  oci_strv said = { 0 };
  char *body = NULL;
  size_t body_len = 0;
  FILE *out = open_memstream (&body, &body_len);
  if (out == NULL)
    abort ();
  for (size_t i = first; i < n_lines; i++)
    {
      yajl_val rec = yajl_tree_parse (lines[i], NULL, 0);
      cleanup_free char *what = rec ? what_of (rec) : NULL;
      cleanup_free char *key = what ? xasprintf ("%s\t%s\t%s", what, jw_string_at (rec, "rule") ? jw_string_at (rec, "rule") : "",
                                               jw_string_at (rec, "allow") ? jw_string_at (rec, "allow") : "")
                                  : NULL;
      if (what == NULL || oci_strv_contains (&said, key))
        {
          yajl_tree_free (rec);
          continue;
        }
      oci_strv_push (&said, key);
      const char *rule = jw_string_at (rec, "rule"), *allow = jw_string_at (rec, "allow"), *why_not = jw_string_at (rec, "why_not");
      const char *caution = jw_string_at (rec, "caution");
      const char *path_never[] = { "never", NULL };
      yajl_val nv = yajl_tree_get (rec, path_never, yajl_t_any);
      bool never = nv && YAJL_IS_TRUE (nv);
      if (policy == NULL && jw_string_at (rec, "policy"))
        policy = policy_copy = xstrdup (jw_string_at (rec, "policy"));
      fprintf (out, "\n- refused: %s\n", what);
      fprintf (out, "  rule:  %s\n", rule && *rule ? rule : "(not recorded)");
      if (never)
        fprintf (out, "  allow: no policy line should: %s\n", why_not ? why_not : "");
      else if (allow && *allow)
        fprintf (out, "  allow: %s\n", allow);
      if (caution)
        fprintf (out, "  note:  %s\n", caution);
      yajl_tree_free (rec);
    }
  fclose (out);
  printf ("haven why: %s%zu thing%s refused in this run, oldest first:\n%s", first > 0 ? "the last " : "", said.n,
          said.n == 1 ? "" : "s", body);
  free (body);
  oci_strv_free (&said);
  free (lines);
  printf ("\nNot listed, because refused before anything could record them: a write that failed with\n"
          "\"Read-only file system\" and a file that is not there (hidden); `haven why PATH` names their rule.\n");
  printf ("\nThe sandbox cannot change its policy.  To allow one of these, the user adds its \"allow\" line\n"
          "to a policy file that starts with `extends: %s` and runs again with `haven run --policy FILE`.\n",
          policy ? policy : "POLICY");
  return 0;
}
