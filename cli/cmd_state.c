/* state, list, ps: read-only views of containers. */
#include "config.h"

#include <dirent.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <yajl/yajl_gen.h>

#include "cli.h"
#include "container.h"
#include "exit_status.h"
#include "log.h"
#include "state.h"
#include "utils.h"

static int
print (const char *s)
{
  return write_all (1, s, strlen (s));
}

int
cmd_state (struct hv_global *g, int argc, char **argv, hv_error **err)
{
  static const struct hv_opt opts[] = { { NULL, 0, false, 0 } };
  struct hv_opt_iter it = { argc, argv, 1, "state" };
  const char *arg, *id;
  cleanup_container hv_container *c = NULL;
  if (hv_opt_next (&it, opts, &arg, err) < 0 || cli_require_id ("state", &it, &id, err) < 0)
    return -1;
  if (hv_container_load (&g->rt, id, &c, err) < 0)
    return -1;
  cleanup_free char *json = hv_container_state_json (c, hv_container_status (c), true);
  print (json);
  print ("\n");
  return 0;
}

enum
{
  OPT_FORMAT = 1,
  OPT_QUIET,
};

static int
parse_format (const char *cmd, struct hv_opt_iter *it, bool *json, bool *quiet, hv_error **err)
{
  static const struct hv_opt opts[] = { { "format", 'f', true, OPT_FORMAT }, { "quiet", 'q', false, OPT_QUIET },
                                        { NULL, 0, false, 0 } };
  const char *arg;
  int id;
  while ((id = hv_opt_next (it, opts, &arg, err)) > 0)
    {
      if (id == OPT_FORMAT)
        {
          if (strcmp (arg, "json") == 0)
            *json = true;
          else if (strcmp (arg, "table") == 0)
            *json = false;
          else
            return hv_error_set (err, 0, "%s: invalid format \"%s\" (table or json)", cmd, arg);
        }
      else if (id == OPT_QUIET && quiet)
        *quiet = true;
      else if (id == OPT_QUIET)
        return hv_error_set (err, 0, "%s: unknown option --quiet", cmd);
    }
  return id;
}

int
cmd_list (struct hv_global *g, int argc, char **argv, hv_error **err)
{
  struct hv_opt_iter it = { argc, argv, 1, "list" };
  bool json = false, quiet = false;
  if (parse_format ("list", &it, &json, &quiet, err) < 0)
    return -1;
  if (it.index < argc)
    return hv_error_set (err, 0, "list: unexpected argument \"%s\"", argv[it.index]);
  DIR *d = opendir (g->rt.root);
  yajl_gen gen = yajl_gen_alloc (NULL);
  yajl_gen_array_open (gen);
  if (!json && !quiet)
    print ("ID          PID         STATUS      BUNDLE      CREATED     OWNER\n");
  struct dirent *de;
  while (d && (de = readdir (d)))
    {
      cleanup_container hv_container *c = NULL;
      cleanup_error hv_error *ignored = NULL;
      if (de->d_name[0] == '.' || hv_container_load (&g->rt, de->d_name, &c, &ignored) < 0)
        continue;
      enum hv_status st = hv_container_status (c);
      if (quiet)
        {
          print (c->id);
          print ("\n");
        }
      else if (json)
        {
          cleanup_free char *doc = hv_container_state_json (c, st, false);
          yajl_gen_number (gen, doc, strlen (doc)); /* embed the object verbatim */
        }
      else
        {
          cleanup_free char *line = xasprintf ("%-11s %-11d %-11s %-11s %-11s %u\n", c->id,
                                               st == HV_STATUS_STOPPED ? 0 : c->pid, hv_status_name (st),
                                               c->bundle ? c->bundle : "", c->created ? c->created : "", c->owner);
          print (line);
        }
    }
  if (d)
    closedir (d);
  yajl_gen_array_close (gen);
  if (json && !quiet)
    hv_write_json_line (1, gen);
  yajl_gen_free (gen);
  return 0;
}

/* ps --format json: the pids as a JSON array. */
static void
print_pids_json (const pid_t *pids, size_t n)
{
  cleanup_free char *out = xstrdup ("[");
  for (size_t i = 0; i < n; i++)
    {
      char *next = xasprintf ("%s%s%d", out, i ? "," : "", pids[i]);
      free (out);
      out = next;
    }
  print (out);
  print ("]\n");
}

/* ps(1) with the EXTRA arguments (-ef without any) as *CHILD, its
 * output on *OUT. */
static int
spawn_ps (char **extra_args, int extra, pid_t *child_out, int *out, hv_error **err)
{
  int pipefd[2];
  if (pipe (pipefd) < 0)
    return hv_error_set (err, 0, "pipe");
  pid_t child = fork ();
  if (child == 0)
    {
      dup2 (pipefd[1], 1);
      close (pipefd[0]);
      close (pipefd[1]);
      char **args = xmalloc0 ((size_t) (extra + 3) * sizeof (char *));
      args[0] = (char *) "ps";
      if (extra > 0)
        for (int i = 0; i < extra; i++)
          args[1 + i] = extra_args[i];
      else
        args[1] = (char *) "-ef";
      execvp ("ps", args);
      _exit (HV_EXIT_NOT_FOUND);
    }
  close (pipefd[1]);
  *out = pipefd[0];
  *child_out = child;
  return 0;
}

/* The column of the header LINE that is PID, or -1. */
static int
pid_column (const char *line)
{
  int pid_col = -1;
  int col = 0;
  char *copy = xstrdup (line), *save = NULL;
  for (char *tok = strtok_r (copy, " \t\n", &save); tok; tok = strtok_r (NULL, " \t\n", &save), col++)
    if (strcmp (tok, "PID") == 0)
      pid_col = col;
  free (copy);
  return pid_col;
}

static bool
line_has_pid (const char *line, int pid_col, const pid_t *pids, size_t n)
{
  char *copy = xstrdup (line), *save = NULL, *tok = strtok_r (copy, " \t\n", &save);
  for (int col = 0; tok && col < pid_col; col++)
    tok = strtok_r (NULL, " \t\n", &save);
  int pid = tok ? atoi (tok) : -1;
  free (copy);
  for (size_t i = 0; i < n; i++)
    if (pids[i] == pid)
      return true;
  return false;
}

/* Table: ps(1) output filtered to the container's processes, with any
 * extra arguments (ps ID -- -o pid,comm) passed to ps. */
static int
print_ps_table (char **extra_args, int extra, const pid_t *pids, size_t n, hv_error **err)
{
  int rfd = -1;
  pid_t child = -1;
  if (spawn_ps (extra_args, extra, &child, &rfd, err) < 0)
    return -1;
  FILE *f = fdopen (rfd, "r");
  if (f == NULL)
    close (rfd);
  char *line = NULL;
  size_t cap = 0;
  int pid_col = -1;
  int ret = 0;
  bool header = true;
  while (f && getline (&line, &cap, f) > 0)
    {
      if (header)
        {
          header = false;
          pid_col = pid_column (line);
          print (line);
          if (pid_col < 0)
            {
              ret = hv_error_set (err, 0, "ps: output has no PID column");
              break;
            }
          continue;
        }
      if (line_has_pid (line, pid_col, pids, n))
        print (line);
    }
  free (line);
  /* Closing the pipe first: a ps still writing gets EPIPE and ends. */
  if (f)
    fclose (f);
  waitpid (child, NULL, 0);
  return ret;
}

int
cmd_ps (struct hv_global *g, int argc, char **argv, hv_error **err)
{
  struct hv_opt_iter it = { argc, argv, 1, "ps" };
  bool json = false;
  cleanup_container hv_container *c = NULL;
  if (parse_format ("ps", &it, &json, NULL, err) < 0)
    return -1;
  if (it.index >= argc)
    return hv_error_set (err, 0, "ps: a container id is required");
  if (hv_container_load (&g->rt, argv[it.index], &c, err) < 0)
    return -1;
  if (hv_container_status (c) == HV_STATUS_STOPPED || c->cgroup_path[0] == '\0')
    {
      if (json)
        print ("[]\n");
      return 0;
    }
  cleanup_free pid_t *pids = NULL;
  size_t n = 0;
  if (hv_container_pids (c, &pids, &n, err) < 0)
    return -1;
  if (json)
    {
      print_pids_json (pids, n);
      return 0;
    }
  return print_ps_table (argv + it.index + 1, argc - it.index - 1, pids, n, err);
}
