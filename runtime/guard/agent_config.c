/* Which settings of the host's agents' project files run commands: see
 * agent_config.h.  The text is the sandbox's: it is parsed, never run. */
#include "config.h"

#include <string.h>
#include <yajl/yajl_gen.h>
#include <yajl/yajl_tree.h>

#include "agent_config.h"
#include "json_gen.h"
#include "json_walk.h"
#include "utils.h"

#define AGENT_JSON_MAX_DEPTH 64

/* Data: what the sandbox may change for the host's agent without it
 * running anything new.  permissions (Claude Code's allow/deny lists) is
 * data: it decides what the host's agent may do when its model asks, not
 * what runs on its own; but its defaultMode bypassPermissions (or a
 * value that is not a string) is a command (bypass_entry).  Everything
 * else (hooks, statusLine, apiKeyHelper,
 * awsAuthRefresh, env, enableAllProjectMcpServers, mcpServers, notify,
 * tools.discoveryCommand, settings an agent adds later) is a command. */
static const char *const claude_data[] = { "$schema", "permissions", "model", "cleanupPeriodDays",
                                           "includeCoAuthoredBy", "outputStyle", "alwaysThinkingEnabled", NULL };
static const char *const mcp_data[] = { "$schema", NULL };
static const char *const gemini_data[] = { "$schema", "model", "theme", "ui", NULL };
static const char *const codex_data[] = { "model", "model_reasoning_effort", "model_reasoning_summary",
                                          "model_verbosity", NULL };
static const char *const no_data[] = { NULL };

const hv_agent_config hv_agent_configs[] = {
  { ".claude", "settings.json", "Claude Code", HV_AGENT_JSON, claude_data },
  { ".claude", "settings.local.json", "Claude Code", HV_AGENT_JSON, claude_data },
  { NULL, ".mcp.json", "Claude Code", HV_AGENT_JSON, mcp_data },
  { ".gemini", "settings.json", "Gemini CLI", HV_AGENT_JSON, gemini_data },
  { ".codex", "config.toml", "Codex", HV_AGENT_TOML, codex_data },
  { ".vscode", "tasks.json", "VS Code", HV_AGENT_VSCODE_TASKS, no_data },
  { NULL, NULL, NULL, 0, NULL },
};

const hv_agent_code_dir hv_agent_code_dirs[] = {
  { ".claude", "hooks", "Claude Code" },
  { ".gemini", "extensions", "Gemini CLI" },
  { NULL, NULL, NULL },
};

const char *
hv_agent_code_dir_who (const char *dir_base, const char *name)
{
  for (const hv_agent_code_dir *c = hv_agent_code_dirs; c->dir; c++)
    if (strcmp (c->dir, dir_base) == 0 && strcmp (c->name, name) == 0)
      return c->who;
  return NULL;
}

bool
hv_agent_config_entry (const char *name)
{
  for (const hv_agent_config *c = hv_agent_configs; c->name; c++)
    if (strcmp (c->dir ? c->dir : c->name, name) == 0)
      return true;
  return false;
}

bool
hv_agent_config_file (const char *dir_base, const char *name)
{
  for (const hv_agent_config *c = hv_agent_configs; c->name; c++)
    if (strcmp (c->name, name) == 0 && (c->dir == NULL || strcmp (c->dir, dir_base) == 0))
      return true;
  return false;
}

bool
hv_agent_config_is_data (const hv_agent_config *c, const char *key)
{
  for (const char *const *d = c->data; *d; d++)
    if (strcmp (*d, key) == 0)
      return true;
  return false;
}

static void
gen_value (yajl_gen g, yajl_val v)
{
  if (YAJL_IS_OBJECT (v))
    {
      yajl_gen_map_open (g);
      for (size_t i = 0; i < v->u.object.len; i++)
        {
          jg_str (g, v->u.object.keys[i]);
          gen_value (g, v->u.object.values[i]);
        }
      yajl_gen_map_close (g);
    }
  else if (YAJL_IS_ARRAY (v))
    {
      yajl_gen_array_open (g);
      for (size_t i = 0; i < v->u.array.len; i++)
        gen_value (g, v->u.array.values[i]);
      yajl_gen_array_close (g);
    }
  else if (YAJL_IS_STRING (v))
    jg_str (g, YAJL_GET_STRING (v));
  else if (YAJL_IS_NUMBER (v))
    yajl_gen_number (g, YAJL_GET_NUMBER (v), strlen (YAJL_GET_NUMBER (v)));
  else if (YAJL_IS_TRUE (v) || YAJL_IS_FALSE (v))
    yajl_gen_bool (g, YAJL_IS_TRUE (v));
  else
    yajl_gen_null (g);
}

/* A value in canonical JSON (no whitespace; members in file order). */
static char *
canonical (yajl_val v)
{
  yajl_gen g = yajl_gen_alloc (NULL);
  if (g == NULL)
    abort ();
  gen_value (g, v);
  return jg_finish (g);
}

static void
push_entry (oci_strv *out, const char *key, yajl_val v)
{
  cleanup_free char *text = canonical (v);
  cleanup_free char *entry = xasprintf ("%s: %s", key, text);
  oci_strv_push (out, entry);
}

/* Claude Code's permissions are data but for one mode: bypassPermissions
 * makes the host's agent run every command its model picks without
 * asking, so an instruction the sandbox planted in the project (a
 * CLAUDE.md line) would run on the host unseen.  That member is a
 * command; the allow and deny lists stay data. */
static void
bypass_entry (yajl_val permissions, oci_strv *out)
{
  if (!YAJL_IS_OBJECT (permissions))
    return;
  for (size_t i = 0; i < permissions->u.object.len; i++)
    {
      yajl_val v = permissions->u.object.values[i];
      if (strcmp (permissions->u.object.keys[i], "defaultMode") != 0)
        continue;
      const char *mode = YAJL_IS_STRING (v) ? v->u.string : NULL;
      if (mode == NULL || strcmp (mode, "bypassPermissions") == 0)
        push_entry (out, "permissions.defaultMode", v);
    }
}

static int
json_entries (const hv_agent_config *c, const char *text, oci_strv *out, hv_error **err)
{
  /* Far deeper than any agent's settings (hooks are 5 levels). */
  if (jw_too_deep (text, AGENT_JSON_MAX_DEPTH))
    return hv_error_set (err, 0, "nested deeper than %d levels", AGENT_JSON_MAX_DEPTH);
  char errbuf[256] = "";
  yajl_val tree = yajl_tree_parse (text, errbuf, sizeof (errbuf));
  if (tree == NULL)
    return hv_error_set (err, 0, "not JSON haven can read (%s)", errbuf[0] ? strtok (errbuf, "\n") : "parse error");
  if (!YAJL_IS_OBJECT (tree))
    {
      /* Not what the tool reads as settings; but not data haven knows. */
      push_entry (out, "(top level)", tree);
      yajl_tree_free (tree);
      return 0;
    }
  for (size_t i = 0; i < tree->u.object.len; i++)
    {
      const char *k = tree->u.object.keys[i];
      yajl_val m = tree->u.object.values[i];
      if (c->format == HV_AGENT_JSON)
        {
          if (!hv_agent_config_is_data (c, k))
            push_entry (out, k, m);
          else if (strcmp (k, "permissions") == 0)
            bypass_entry (m, out);
          continue;
        }
      /* VS Code runs a task by itself only when its runOptions say
       * runOn folderOpen: such a task (or any other member naming
       * folderOpen: platform sections) is a command, the others run
       * when the user asks for them, as a Makefile's targets do. */
      if (strcmp (k, "tasks") == 0 && YAJL_IS_ARRAY (m))
        {
          for (size_t j = 0; j < m->u.array.len; j++)
            {
              cleanup_free char *t = canonical (m->u.array.values[j]);
              if (strstr (t, "folderOpen"))
                push_entry (out, "tasks[]", m->u.array.values[j]);
            }
          continue;
        }
      cleanup_free char *t = canonical (m);
      if (strstr (t, "folderOpen"))
        push_entry (out, k, m);
    }
  yajl_tree_free (tree);
  return 0;
}

/* A table header: `[name]` or `[[name]]` alone on its line (a comment
 * after it allowed).  An array's continuation line of that shape is taken
 * for one too, which only makes more lines count as commands. */
static bool
table_header (const char *t, const char *e)
{
  const char *close = memchr (t, ']', (size_t) (e - t));
  if (close == NULL)
    return false;
  const char *rest = close + 1;
  if (t[1] == '[' && rest < e && *rest == ']')
    rest++;
  while (rest < e && (*rest == ' ' || *rest == '\t'))
    rest++;
  return rest == e || *rest == '#';
}

/* TOML, line by line: every line that is not blank, a comment or a
 * top-level `key = value` of a data key is a command (a table's lines,
 * an array's continuation lines included), named with the table it is
 * in ("[mcp_servers.x] command = ..."): a line moved to another table is
 * a new one. */
static void
toml_entries (const hv_agent_config *c, const char *text, oci_strv *out)
{
  bool top = true;
  cleanup_free char *table = NULL;
  for (const char *s = text; *s;)
    {
      const char *eol = strchrnul (s, '\n');
      const char *t = s, *e = eol;
      while (t < e && (*t == ' ' || *t == '\t'))
        t++;
      while (e > t && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r'))
        e--;
      bool header = t < e && *t == '[' && table_header (t, e);
      if (header)
        {
          top = false;
          free (table);
          table = xasprintf ("%.*s", (int) (e - t), t);
          oci_strv_push (out, table);
        }
      else if (t < e && *t != '#')
        {
          cleanup_free char *line = xasprintf ("%s%s%.*s", table ? table : "", table ? " " : "", (int) (e - t), t);
          bool data = false;
          if (top)
            {
              /* (line has no table prefix at the top) */
              size_t kl = strcspn (line, " \t=");
              char *after = line + kl + strspn (line + kl, " \t");
              cleanup_free char *key = xasprintf ("%.*s", (int) kl, line);
              /* A one-line value only: `model = "o3"`, not an array
               * continuing on the next lines. */
              data = *after == '=' && hv_agent_config_is_data (c, key) && !strchr (after, '[') && !strchr (after, '{');
            }
          if (!data)
            oci_strv_push (out, line);
        }
      s = *eol ? eol + 1 : eol;
    }
}

int
hv_agent_config_exec_entries (const hv_agent_config *c, const char *text, size_t len, oci_strv *out,
                              hv_error **err)
{
  if (memchr (text, '\0', len))
    return hv_error_set (err, 0, "it holds a NUL byte");
  /* Empty (as a file is between its truncation and its write, when the
   * live check of an engine container reads it): no settings at all. */
  if (strspn (text, " \t\r\n") == len)
    return 0;
  if (c->format == HV_AGENT_TOML)
    {
      toml_entries (c, text, out);
      return 0;
    }
  return json_entries (c, text, out, err);
}
