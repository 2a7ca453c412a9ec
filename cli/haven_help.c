/* `haven --help` and `haven COMMAND --help`: the usage of the `haven`
 * front end, one section per command, so that asking a command for help
 * prints its own lines (and exits 0) instead of calling --help an
 * unknown option.  man/haven.1 documents every command listed here (a
 * test checks it). */
#include "config.h"
#include "haven_help.h"

#include <stdio.h>
#include <string.h>

#include "cri_install.h"
#include "engine_install.h"
#include "haven_annotations.h"
#include "exit_status.h"
#include "mcp_server.h"
#include "service.h"

struct help_section
{
  const char *command; /* argv[1] */
  void (*print) (FILE *out);
};

static void
help_run (FILE *out)
{
  fprintf (out,
           "  haven run [--policy NAME|FILE] [--project DIR] [--isolation MODE] [--learn] [--keep-bundle] -- CMD\n"
           "            [ARGS...]\n"
           "      Run CMD sandboxed under a policy (default \"%s\", or $HAVEN_POLICY).\n"
           "      --project DIR  the writable project (default: the current directory); CMD starts\n"
           "                     there, or in the current directory when that is inside DIR\n"
           "      --isolation auto|namespaces|landlock  (default auto, or $HAVEN_ISOLATION)\n"
           "                     namespaces: the full sandbox, or fail; landlock: Landlock and\n"
           "                     seccomp only, in this host's namespaces (rules they cannot hold\n"
           "                     are refused, or weaker where the policy accepts it: haven doctor);\n"
           "                     auto: namespaces where they can be made here, else landlock\n"
           "      --learn        learn mode: the policy exactly, every refusal it can see recorded\n"
           "                     in its trail (the default trail when it keeps none); a name it\n"
           "                     does not list resolves to a sinkhole whose refused connect shows\n"
           "                     the port; says at the start what it cannot see; then a\n"
           "                     policy from the trail: policy suggest\n"
           "      --keep-bundle  keep the generated OCI bundle (for debugging)\n"
           "      Exit status: CMD's; %d when CMD may not be executed, %d when it is not found,\n"
           "      %d past the policy's timeout, %d when haven itself failed.\n",
           HV_HAVEN_DEFAULT_POLICY, HV_EXIT_CANNOT_EXECUTE, HV_EXIT_NOT_FOUND, HV_EXIT_TIMEOUT, HV_EXIT_HAVEN_FAILED);
}

static void
help_policy (FILE *out)
{
  fprintf (out, "  haven policy list\n"
                "      The policies on the search path, sorted by name, with their descriptions.\n"
                "  haven policy explain NAME|FILE\n"
                "      What a policy enforces, in words.\n"
                "  haven policy check NAME|FILE\n"
                "      Load a policy and report errors (file:line:column) and warnings.\n"
                "  haven policy compile NAME|FILE [--project DIR] [-- CMD ARGS...]\n"
                "  haven policy compile NAME|FILE --config CONFIG.JSON   (tighten an existing config)\n"
                "      Print the OCI config.json a policy gives.\n"
                "  haven policy suggest [--from TRAIL] [--run ID] [--base BASE] [-o FILE]\n"
                "      The smallest policy that extends BASE and allows what a learn run\n"
                "      (haven run --learn) was refused, commented; what it will not allow\n"
                "      (secrets, shells under block_shell, home startup files, engine sockets)\n"
                "      is listed at the end with the reason.  Default: the last learn run in\n"
                "      ~/.local/state/haven/audit.log, its own base.\n");
}

static void
help_audit (FILE *out)
{
  fprintf (out, "  haven audit [--since TIME] [--event EVENT] [--container ID] [--json] [FILE...]\n"
                "      Print audit trails, one line per record, oldest first (time, container or\n"
                "      haven-run and policy, event, details).  Without FILEs: %s.\n"
                "      --since TIME      10s, 5m, 2h, 3d ago, or 2026-11-23T10:00[:SS] (local; Z for UTC)\n"
                "      -e, --event EVENT only this event (denied, net-denied, dns-refused, start, exit, ...),\n"
                "                        or this system call or rule (--rule is the same); repeatable\n"
                "      -c, --container X only containers whose id starts with X, or policy X, or a pod's\n"
                "                        NAMESPACE/POD or NAMESPACE/POD/CONTAINER; repeatable\n"
                "      --json            the matching records as they are (JSON lines)\n"
                "  haven audit --verify [--json] [FILE...]\n"
                "      Check each trail's chain (every record's seq and the SHA-256 of the line before\n"
                "      it): OK with the records' count and span, or the first line changed, removed,\n"
                "      inserted or cut short.  Exit 0 OK, 1 a problem, 2 a trail unreadable.  Without\n"
                "      FILEs: ~/.local/state/haven/audit.log.\n",
                HV_AUDIT_DEFAULT_FILES_HELP);
}

static void
help_approve (FILE *out)
{
  fprintf (out, "  haven approve [--json] [ID once|run|always|deny]\n"
                "      Names a policy asks for (network.ask, network.mode: ask) wait here for an answer:\n"
                "      without ID, list the pending requests (name, policy, command, project, seconds left)\n"
                "      and, on a terminal, ask about each; with ID, answer it: once (the held lookups only),\n"
                "      run (the rest of that run), always (also ~/.config/haven/approved/POLICY.yaml, for\n"
                "      later runs), deny.  --json: the pending requests, one JSON object a line.\n");
}

static void
help_why (FILE *out)
{
  fprintf (out, "  haven why [-n N] [--json]\n"
                "  haven why PATH...\n"
                "      Inside a sandbox: the last N (default 10) things this run was refused, each with the\n"
                "      policy rule that refused it and the policy line that would allow it (or why none\n"
                "      should); with PATHs, which rule keeps each path read-only or hidden (a write to a\n"
                "      read-only mount or a hidden file is refused before anything records it).\n"
                "      Outside a sandbox it says to use haven audit.\n"
                "      --json  the denial records as they are (JSON lines)\n");
}

static void
help_install (FILE *out)
{
  fprintf (out,
           "  haven install docker [--daemon-json PATH] [--name NAME] [--runtime PATH] [--policy NAME]\n"
           "                       [--policy-lock] [--default] [--api-key PROVIDER=FILE]...   (default %s)\n"
           "  haven install podman [--conf PATH] [--name NAME] [--runtime PATH] [--default]\n"
           "                       (default %s, with --name %s/NAME.conf)\n"
           "      Register haven-runc with an engine.  --api-key (Docker only): the root-only file holding\n"
           "      the key of PROVIDER (anthropic, openai, gemini) for containers whose policy has\n"
           "      credentials.api for it: the key stays outside the container (model API gateway).\n"
           "  haven install containerd [--config PATH] [--name NAME] [--runtime PATH] [--policy NAME]\n"
           "                       [--policy-lock] [--handler-dir DIR]   (default %s)\n"
           "  haven install crio [--conf PATH] [--name NAME] [--runtime PATH] [--policy NAME]\n"
           "                       [--policy-lock] [--handler-dir DIR]   (default %s/NAME.conf)\n"
           "      Register haven-runc as a Kubernetes runtime handler (a RuntimeClass's handler, default\n"
           "      \"haven\").  --policy binds the policy to the handler through a root-owned wrapper,\n"
           "      DIR/ENGINE-NAME (default DIR %s); pods may ask for a stricter one with the\n"
           "      " HV_POLICY_ANNOTATION " annotation unless --policy-lock.\n",
           HV_DOCKER_DAEMON_JSON, HV_PODMAN_DROP_IN, HV_PODMAN_DROP_IN_DIR, HV_CONTAINERD_CONFIG, HV_CRIO_DROP_IN_DIR,
           HV_CRI_HANDLER_DIR);
}

static void
help_uninstall (FILE *out)
{
  fprintf (out, "  haven uninstall docker [--daemon-json PATH] [--name NAME]\n"
                "  haven uninstall podman [--conf PATH] [--name NAME]\n"
                "  haven uninstall containerd [--config PATH] [--name NAME] [--handler-dir DIR]\n"
                "  haven uninstall crio [--conf PATH] [--name NAME] [--handler-dir DIR]\n"
                "      Take a registration out again.\n");
}

static void
help_serve (FILE *out)
{
  fprintf (out,
           "  haven serve [--socket PATH] [--pool-size N] [--max-sandboxes N] [--max-runs N]\n"
           "              [--idle-timeout S] [--pool-max-age S] [--max-output BYTES] [--verbose]\n"
           "      The sandbox service: an HTTP API on a Unix socket (docs/api.md) that only this\n"
           "      user may use, to create sandboxes, run commands in them and read and write their\n"
           "      workspaces.  Default socket $XDG_RUNTIME_DIR/haven/haven.sock (root: /run/haven/haven.sock).\n"
           "      --pool-size N      sandboxes kept made per policy asked for with pool (default %d)\n"
           "      --max-sandboxes N  sandboxes at once, pooled ones not counted (default %d)\n"
           "      --max-runs N       commands running at once in a sandbox (default %d)\n"
           "      --idle-timeout S   a sandbox with nothing running and no request is destroyed (default %d)\n"
           "      --pool-max-age S   a pooled sandbox older than this is made again (default %d)\n"
           "      --max-output BYTES the most a run may ask to keep of each output stream (default %d)\n"
           "      --verbose          log every request, not only sandboxes made and destroyed\n",
           HV_SERVICE_DEFAULT_POOL_SIZE, HV_SERVICE_DEFAULT_MAX_SANDBOXES, HV_SERVICE_DEFAULT_MAX_RUNS,
           HV_SERVICE_DEFAULT_IDLE_S, HV_SERVICE_DEFAULT_POOL_MAX_AGE_S, HV_SERVICE_MAX_OUTPUT);
}

static void
help_mcp (FILE *out)
{
  fprintf (out,
           "  haven mcp [--policy NAME|FILE] [--project DIR] [--socket PATH] [--max-output BYTES]\n"
           "            [--timeout S] [--verbose]\n"
           "      An MCP server on stdin/stdout (docs/mcp.md) for an agent's MCP client: its tools\n"
           "      (run_command, run_code, read_file, write_file, list_files, why) run in one sandbox of\n"
           "      the policy (default \"%s\"), made at the start and destroyed at the end, by haven\n"
           "      serve at --socket (default: the user's; if none answers, one started for the session).\n"
           "      --project DIR      the sandbox's workspace is DIR (default: an empty scratch one)\n"
           "      --max-output BYTES what the model gets of each output stream (default %d)\n"
           "      --timeout S        a command's time limit when the call names none (default %d)\n"
           "      --verbose          diagnostics on stderr\n"
           "      Exit status: 0 at the end of input, 1 when the sandbox cannot be made, 2 on bad options.\n",
           HV_MCP_DEFAULT_POLICY, HV_MCP_DEFAULT_MAX_OUTPUT, HV_MCP_DEFAULT_TIMEOUT_S);
}

static void
help_doctor (FILE *out)
{
  fprintf (out,
           "  haven doctor [--json] [--policy NAME|FILE]... [--project DIR]\n"
           "      What this host or container offers haven (namespaces, user namespaces, mount, Landlock\n"
           "      and its parts, seccomp, cgroups, nftables, /dev/net/tun, pasta), each ok or missing and\n"
           "      why; the isolation haven run uses here (namespaces, or Landlock and seccomp only) and\n"
           "      how allowlists go out (pasta or haven's forwarder); then, for each policy on the search\n"
           "      path (or each --policy), whether it runs here, runs with rules in a weaker form it\n"
           "      accepts (best_effort), or is refused, naming each rule and why.\n"
           "      --policy P     only these policies (repeatable)\n"
           "      --project DIR  compile them for DIR (default: the current directory)\n"
           "      --json         the report as one JSON object\n"
           "      Exit status: 0 (a report, whatever it says), 2 on bad options.\n");
}

static const struct help_section sections[] = {
  { "run", help_run },         { "policy", help_policy },       { "audit", help_audit },
  { "approve", help_approve },
  { "why", help_why },
  { "install", help_install }, { "uninstall", help_uninstall }, { "serve", help_serve },
  { "mcp", help_mcp },         { "doctor", help_doctor },
};

void
hv_haven_usage (FILE *out, const char *command)
{
  fprintf (out, "usage:\n");
  for (size_t i = 0; i < sizeof (sections) / sizeof (sections[0]); i++)
    if (command == NULL || strcmp (command, sections[i].command) == 0)
      sections[i].print (out);
  if (command == NULL)
    fprintf (out, "  haven --version\n"
                  "See haven(1) and haven policy explain NAME.\n");
}

bool
hv_haven_is_command (const char *command)
{
  for (size_t i = 0; i < sizeof (sections) / sizeof (sections[0]); i++)
    if (strcmp (command, sections[i].command) == 0)
      return true;
  return false;
}

bool
hv_haven_asks_help (int argc, char **argv)
{
  /* Options end at "--": `haven run -- grep --help` is the command's. */
  for (int i = 2; i < argc && strcmp (argv[i], "--") != 0; i++)
    if (strcmp (argv[i], "--help") == 0 || strcmp (argv[i], "-h") == 0)
      return true;
  return false;
}
