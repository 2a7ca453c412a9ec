/* The tools as tools/list shows them: name, title, a description an agent
 * can follow (what runs where, the limits, the policy) and the JSON
 * Schema of the arguments (docs/mcp.md lists the same).  The schemas use
 * only what every client's validator takes (no oneOf: some agents refuse
 * a schema with it); what they cannot say, such as "argv or command, not
 * both", mcp_tools.c checks and the description says. */
#include "config.h"

#include <stdio.h>
#include <string.h>
#include <yajl/yajl_gen.h>

#include "json_gen.h"
#include "mcp_tools_priv.h"
#include "utils.h"

const char *const hv_mcp_tool_names[HV_TOOL_N] = {
  [HV_TOOL_RUN_COMMAND] = "run_command", [HV_TOOL_RUN_CODE] = "run_code",     [HV_TOOL_READ_FILE] = "read_file",
  [HV_TOOL_WRITE_FILE] = "write_file",   [HV_TOOL_LIST_FILES] = "list_files", [HV_TOOL_WHY] = "why",
};

/* One property: {"type": TYPE, "description": DESC} and the extra
 * members the caller adds before closing it. */
static void
prop_open (yajl_gen g, const char *name, const char *type, const char *desc)
{
  jg_str (g, name);
  yajl_gen_map_open (g);
  jg_kv (g, "type", type);
  jg_kv_utf8 (g, "description", desc);
}

static void
prop (yajl_gen g, const char *name, const char *type, const char *desc)
{
  prop_open (g, name, type, desc);
  yajl_gen_map_close (g);
}

static void
prop_int (yajl_gen g, const char *name, long min, long max, const char *desc)
{
  prop_open (g, name, "integer", desc);
  jg_str (g, "minimum");
  yajl_gen_integer (g, min);
  jg_str (g, "maximum");
  yajl_gen_integer (g, max);
  yajl_gen_map_close (g);
}

/* The head of a tool up to its schema's properties (left open). */
static void
tool_open (yajl_gen g, enum hv_mcp_tool tool, const char *title, const char *desc)
{
  yajl_gen_map_open (g);
  jg_kv (g, "name", hv_mcp_tool_names[tool]);
  jg_kv (g, "title", title);
  jg_kv_utf8 (g, "description", desc);
  jg_str (g, "inputSchema");
  yajl_gen_map_open (g);
  jg_kv (g, "type", "object");
  jg_str (g, "properties");
  yajl_gen_map_open (g);
}

/* Close the properties, list the required ones (NULL-terminated), close
 * the schema and the tool. */
static void
tool_close (yajl_gen g, const char *const *required)
{
  yajl_gen_map_close (g);
  if (required && required[0])
    {
      jg_str (g, "required");
      yajl_gen_array_open (g);
      for (size_t i = 0; required[i]; i++)
        jg_str (g, required[i]);
      yajl_gen_array_close (g);
    }
  jg_str (g, "additionalProperties");
  yajl_gen_bool (g, 0);
  yajl_gen_map_close (g);
  yajl_gen_map_close (g);
}

/* "the haven sandbox of policy "P" (ABOUT), workspace W" */
static char *
where (const hv_mcp_tools *t)
{
  return xasprintf ("haven sandbox of policy \"%s\"%s%s%s (a container on the user's machine, enforced by the "
                    "kernel; its workspace %s persists between calls)",
                    t->policy, t->about ? " (" : "", t->about ? t->about : "", t->about ? ")" : "", t->workspace);
}

static void
run_props (yajl_gen g, const hv_mcp_tools *t)
{
  cleanup_free char *timeout = xasprintf ("seconds before the command is killed (default %u, at most %d; the "
                                          "policy's own limit, if shorter, wins)",
                                          t->timeout_s, 3600);
  prop (g, "stdin", "string", "text given to the command's standard input (default: none, end of file at once)");
  prop_int (g, "timeout_s", 1, 3600, timeout);
}

char *
hv_mcp_tools_list_make (const hv_mcp_tools *t)
{
  yajl_gen g = yajl_gen_alloc (NULL);
  cleanup_free char *w = where (t);
  const char *shell = t->shell == 0 ? " This policy lets no shell run (process.block_shell): use argv; a command "
                                      "line is refused."
                                    : "";
  cleanup_free char *run_desc = xasprintf (
      "Run a program in the %s. Give argv (the program and its arguments, no shell involved) or command (a shell "
      "line, run as sh -c COMMAND), not both.%s It starts in the workspace (or cwd), with no terminal; stdin is "
      "empty unless given. At most %llu bytes of stdout and of stderr each are returned (the result says when "
      "output was cut). Default time limit %u s. The result says the exit status; exit status 126 with \"haven: "
      "exec\" means the policy refused to run the program: call why to see the rule.",
      w, shell, (unsigned long long) t->max_output, t->timeout_s);
  cleanup_free char *code_desc = xasprintf (
      "Run a snippet of code in the %s: language python (python3 -c CODE), bash (bash -c), sh (sh -c) or node "
      "(node -e); the code is an argument, no file is written. Same limits as run_command (at most %llu bytes of "
      "each output stream, default time limit %u s).%s",
      w, (unsigned long long) t->max_output, t->timeout_s,
      t->shell == 0 ? " bash and sh are refused: this policy lets no shell run (process.block_shell)." : "");
  cleanup_free char *read_desc = xasprintf (
      "Read a UTF-8 text file of the workspace of the %s. At most %llu bytes are returned (the result says when "
      "the text was cut). A file that is not UTF-8 text is refused with its size: read it through run_command "
      "(argv [\"base64\", PATH]). Files of at most 16 MiB.",
      w, (unsigned long long) t->max_output);
  cleanup_free char *write_desc = xasprintf (
      "Write a file in the workspace of the %s: made or replaced whole, missing directories made. content is "
      "UTF-8 text, or base64 with encoding \"base64\" for bytes. At most 16 MiB.",
      w);
  cleanup_free char *list_desc = xasprintf ("List a directory of the workspace of the %s: one line per entry: type "
                                            "(file, dir, link, other), size in bytes, name.",
                                            w);
  cleanup_free char *why_desc = xasprintf (
      "Why was something refused in the %s? The last denials of this sandbox with the rule behind each (from the "
      "policy's audit trail: system calls, network connections, DNS names, programs), and what the service "
      "refused this session (an environment variable, a path outside the workspace, a blocked shell, a time "
      "limit hit), newest last.",
      w);
  cleanup_free char *path_rel = xasprintf ("the file's path, relative to the workspace %s", t->workspace);

  yajl_gen_array_open (g);

  tool_open (g, HV_TOOL_RUN_COMMAND, "Run a command in the haven sandbox", run_desc);
  prop_open (g, "argv", "array", "the program and its arguments, e.g. [\"make\", \"test\"]");
  jg_str (g, "items");
  yajl_gen_map_open (g);
  jg_kv (g, "type", "string");
  yajl_gen_map_close (g);
  jg_str (g, "minItems");
  yajl_gen_integer (g, 1);
  yajl_gen_map_close (g);
  prop (g, "command", "string", "a shell command line (instead of argv), run as [\"sh\", \"-c\", command]");
  prop (g, "cwd", "string", "the working directory: relative to the workspace, or absolute (default: the workspace)");
  prop_open (g, "env", "object", "environment variables to set, NAME: value (within the policy's env rules)");
  jg_str (g, "additionalProperties");
  yajl_gen_map_open (g);
  jg_kv (g, "type", "string");
  yajl_gen_map_close (g);
  yajl_gen_map_close (g);
  run_props (g, t);
  tool_close (g, NULL);

  tool_open (g, HV_TOOL_RUN_CODE, "Run code in the haven sandbox", code_desc);
  prop_open (g, "language", "string", "python, bash, sh or node (also python3, javascript, js)");
  jg_str (g, "enum");
  yajl_gen_array_open (g);
  static const char *const langs[] = { "python", "python3", "bash", "sh", "node", "javascript", "js" };
  for (size_t i = 0; i < sizeof (langs) / sizeof (langs[0]); i++)
    jg_str (g, langs[i]);
  yajl_gen_array_close (g);
  yajl_gen_map_close (g);
  prop (g, "code", "string", "the code");
  run_props (g, t);
  static const char *const code_req[] = { "language", "code", NULL };
  tool_close (g, code_req);

  static const char *const path_req[] = { "path", NULL };
  tool_open (g, HV_TOOL_READ_FILE, "Read a file of the haven sandbox's workspace", read_desc);
  prop (g, "path", "string", path_rel);
  tool_close (g, path_req);

  tool_open (g, HV_TOOL_WRITE_FILE, "Write a file in the haven sandbox's workspace", write_desc);
  prop (g, "path", "string", path_rel);
  prop (g, "content", "string", "the file's content");
  prop_open (g, "encoding", "string", "how content is written: utf-8 (the default) or base64");
  jg_str (g, "enum");
  yajl_gen_array_open (g);
  jg_str (g, "utf-8");
  jg_str (g, "base64");
  yajl_gen_array_close (g);
  yajl_gen_map_close (g);
  static const char *const write_req[] = { "path", "content", NULL };
  tool_close (g, write_req);

  tool_open (g, HV_TOOL_LIST_FILES, "List a directory of the haven sandbox's workspace", list_desc);
  prop (g, "path", "string", "the directory, relative to the workspace (default \".\", the workspace itself)");
  tool_close (g, NULL);

  tool_open (g, HV_TOOL_WHY, "Why the haven sandbox refused something", why_desc);
  prop_int (g, "limit", 1, 100, "how many of the last denials (default 20)");
  tool_close (g, NULL);

  yajl_gen_array_close (g);
  return jg_finish (g);
}

char *
hv_mcp_tools_instructions_make (const hv_mcp_tools *t)
{
  return xasprintf ("These tools run commands and handle files in one haven sandbox of policy \"%s\"%s%s%s, made "
                    "for this session: a container on the user's machine, enforced by the kernel. Its workspace, "
                    "%s, is the commands' working directory and persists between calls like a terminal's; it is "
                    "destroyed when the session ends. Use run_command for shell work (builds, tests, git), "
                    "read_file/write_file/list_files for the workspace's files, and why when something is "
                    "refused: it names the policy's rule.",
                    t->policy, t->about ? " (" : "", t->about ? t->about : "", t->about ? ")" : "", t->workspace);
}
