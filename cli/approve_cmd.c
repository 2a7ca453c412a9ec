/* `haven approve`: approve_cmd.h. */
#include "config.h"
#include "approve_cmd.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <yajl/yajl_gen.h>

#include "approvals.h"
#include "json_gen.h"
#include "utils.h"

static int64_t
now_ms (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_REALTIME, &ts);
  return (int64_t) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Text from a request file (the user's own directory, but written by a
 * process that read a name off the network): printed with every control
 * byte as '?', so nothing in it acts on the terminal. */
static void
put_safe (FILE *out, const char *s)
{
  for (; *s; s++)
    fputc ((unsigned char) *s < 0x20 || *s == 0x7f ? '?' : *s, out);
}

static void
print_request (FILE *out, const hv_approval_request *r)
{
  int64_t left = (r->deadline_ms - now_ms () + 999) / 1000;
  fprintf (out, "%s  ", r->id);
  put_safe (out, r->name);
  fprintf (out, " (%s)  policy ", r->type);
  put_safe (out, r->policy);
  fprintf (out, "  %llds left\n    command:", (long long) (left > 0 ? left : 0));
  for (size_t i = 0; r->command[i] && i < 16; i++)
    {
      fputc (' ', out);
      put_safe (out, r->command[i]);
    }
  fprintf (out, "\n    project: ");
  put_safe (out, r->project[0] ? r->project : "-");
  fputc ('\n', out);
}

static void
print_json (const hv_approval_request *v, size_t n)
{
  for (size_t i = 0; i < n; i++)
    {
      yajl_gen g = yajl_gen_alloc (NULL);
      yajl_gen_map_open (g);
      jg_kv_utf8 (g, "id", v[i].id);
      jg_kv_utf8 (g, "run", v[i].run);
      jg_kv_utf8 (g, "policy", v[i].policy);
      jg_kv_utf8 (g, "name", v[i].name);
      jg_kv_utf8 (g, "type", v[i].type);
      jg_str (g, "command");
      yajl_gen_array_open (g);
      for (size_t k = 0; v[i].command[k]; k++)
        jg_utf8 (g, v[i].command[k]);
      yajl_gen_array_close (g);
      jg_kv_utf8 (g, "project", v[i].project);
      jg_kv_utf8 (g, "time", v[i].time);
      jg_str (g, "deadline_ms");
      yajl_gen_integer (g, v[i].deadline_ms);
      int64_t left = (v[i].deadline_ms - now_ms ()) / 1000;
      jg_str (g, "seconds_left");
      yajl_gen_integer (g, left > 0 ? left : 0);
      jg_str (g, "haven_pid");
      yajl_gen_integer (g, v[i].haven_pid);
      yajl_gen_map_close (g);
      cleanup_free char *text = jg_finish (g);
      printf ("%s\n", text);
    }
}

static int
answer (int dfd, const char *id, hv_ask_decision d, hv_error **err)
{
  if (hv_approval_answer (dfd, id, d, "approve", NULL, err) < 0)
    return -1;
  printf ("%s: %s\n", id, hv_ask_decision_name (d));
  return 0;
}

/* On a terminal: each pending request in turn. */
static int
ask_each (int dfd, const hv_approval_request *v, size_t n, hv_error **err)
{
  for (size_t i = 0; i < n; i++)
    {
      print_request (stdout, &v[i]);
      for (;;)
        {
          printf ("  [o]nce, [r]un, [a]lways, [d]eny, [s]kip? ");
          fflush (stdout);
          char line[64];
          if (fgets (line, sizeof (line), stdin) == NULL)
            return 0;
          line[strcspn (line, "\r\n")] = '\0';
          hv_ask_decision d;
          if (strcmp (line, "s") == 0 || strcmp (line, "skip") == 0)
            break;
          if (hv_ask_decision_parse (line, &d) < 0)
            continue;
          cleanup_error hv_error *aerr = NULL;
          if (answer (dfd, v[i].id, d, &aerr) < 0)
            fprintf (stderr, "haven approve: %s\n", aerr->msg);
          break;
        }
    }
  (void) err;
  return 0;
}

int
hv_cmd_approve (int argc, char **argv, hv_error **err)
{
  bool json = false;
  const char *args[2] = { NULL, NULL };
  size_t n_args = 0;
  for (int i = 1; i < argc; i++)
    {
      if (strcmp (argv[i], "--json") == 0)
        json = true;
      else if (argv[i][0] == '-' || n_args == 2)
        return hv_error_set (err, 0, "usage: haven approve [--json] [ID once|run|always|deny]");
      else
        args[n_args++] = argv[i];
    }
  if (n_args == 1 || (n_args == 2 && json))
    return hv_error_set (err, 0, "usage: haven approve [--json] [ID once|run|always|deny]");
  cleanup_free char *dir = hv_approvals_dir_path (err);
  if (dir == NULL)
    return -1;
  hv_ask_decision d = HV_ASK_DENY;
  if (n_args == 2 && hv_ask_decision_parse (args[1], &d) < 0)
    return hv_error_set (err, 0, "\"%s\" is not once, run, always or deny", args[1]);
  cleanup_close int dfd = hv_approvals_dir_open (dir, false, err);
  if (dfd < 0)
    {
      if ((*err)->errno_code != ENOENT)
        return -1;
      hv_error_free (err);
      if (n_args == 2)
        return hv_error_set (err, 0, "no pending request %s", args[0]);
      if (!json)
        printf ("No pending requests.\n");
      return 0;
    }
  if (n_args == 2)
    return answer (dfd, args[0], d, err);
  hv_approval_request *v = NULL;
  size_t n = 0;
  if (hv_approvals_list (dfd, NULL, &v, &n, err) < 0)
    return -1;
  int r = 0;
  if (json)
    print_json (v, n);
  else if (n == 0)
    printf ("No pending requests.\n");
  else if (isatty (STDIN_FILENO) && isatty (STDOUT_FILENO))
    r = ask_each (dfd, v, n, err);
  else
    {
      for (size_t i = 0; i < n; i++)
        print_request (stdout, &v[i]);
      printf ("Answer with: haven approve ID once|run|always|deny\n");
    }
  hv_approval_requests_free (v, n);
  return r;
}
