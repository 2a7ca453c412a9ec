/* The `run.haven.ask` annotation: egress_ask.h. */
#include "config.h"
#include "egress_ask.h"

#include <limits.h>
#include <string.h>
#include <yajl/yajl_tree.h>

#include "haven_annotations.h"
#include "json_walk.h"
#include "utils.h"

/* The command is for a person to read in `haven approve`: bounded. */
#define ASK_COMMAND_MAX 256

void
hv_egress_ask_config_free (hv_egress_ask_config *c)
{
  if (c == NULL)
    return;
  free (c->dir);
  free (c->project);
  for (size_t i = 0; c->command && c->command[i]; i++)
    free (c->command[i]);
  free (c->command);
  free (c->policy);
  free (c);
}

int
hv_egress_ask_config_parse (const char *json, const char *doc, hv_egress_ask_config **out, hv_error **err)
{
  static const char *const known[] = { "dir", "run", "project", "command", "haven_pid", NULL };
  json_walk w;
  jw_init (&w, doc, err);
  jw_push_key (&w, "annotations[\"" HV_ASK_ANNOTATION "\"]");
  yajl_val root = NULL;
  if (jw_parse (&w, json, &root) < 0)
    return -1;
  hv_egress_ask_config *c = xmalloc0 (sizeof (*c));
  const char *dir = NULL, *project = NULL;
  int r = jw_expect_object (&w, root);
  if (r == 0)
    r = jw_only_keys (&w, root, known);
  if (r == 0)
    r = jw_member_string (&w, root, "dir", true, &dir);
  if (r == 0 && dir[0] != '/')
    r = jw_fail_key (&w, "dir", "\"%s\" is not an absolute path", dir);
  if (r == 0)
    {
      c->dir = xstrdup (dir);
      r = jw_member_string (&w, root, "project", false, &project);
    }
  if (r == 0)
    c->project = xstrdup (project ? project : "");
  const char *run = NULL;
  if (r == 0)
    r = jw_member_string (&w, root, "run", false, &run);
  if (r == 0 && run)
    {
      size_t n_hex = strspn (run, "0123456789abcdef");
      if (n_hex != 16 || run[16] != '\0')
        r = jw_fail_key (&w, "run", "\"%s\" is not 16 lower-case hex digits", run);
      else
        memcpy (c->run, run, 17);
    }
  yajl_val pid = jw_lookup (root, "haven_pid");
  if (r == 0 && !jw_absent (pid))
    {
      int64_t v = 0;
      size_t saved = jw_push_key (&w, "haven_pid");
      r = jw_as_i64 (&w, pid, &v);
      if (r == 0 && (v < 0 || v > INT_MAX))
        r = jw_fail (&w, "not a pid");
      jw_pop (&w, saved);
      c->haven_pid = (pid_t) v;
    }
  yajl_val cmd = jw_lookup (root, "command");
  size_t n = 0;
  if (r == 0 && !jw_absent (cmd))
    {
      size_t saved = jw_push_key (&w, "command");
      r = jw_expect_array (&w, cmd);
      if (r == 0)
        n = cmd->u.array.len < ASK_COMMAND_MAX ? cmd->u.array.len : ASK_COMMAND_MAX;
      c->command = xmalloc0 ((n + 1) * sizeof (char *));
      for (size_t i = 0; r == 0 && i < n; i++)
        {
          size_t at = jw_push_index (&w, i);
          r = jw_as_string (&w, cmd->u.array.values[i], &c->command[i]);
          jw_pop (&w, at);
        }
      jw_pop (&w, saved);
    }
  if (c->command == NULL)
    c->command = xmalloc0 (sizeof (char *));
  yajl_tree_free (root);
  if (r < 0)
    {
      hv_egress_ask_config_free (c);
      return -1;
    }
  *out = c;
  return 0;
}
