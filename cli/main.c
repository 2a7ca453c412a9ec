/* haven-runc: an OCI runtime with runc's command line. */
#include "config.h"

#include <errno.h>
#include <seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "config_policy.h"
#include "engine_api_key.h"
#include "haven_annotations.h"
#include "log.h"
#include "self_exe.h"
#include "utils.h"

static const struct
{
  const char *name;
  hv_command_fn fn;
  bool enters_container; /* needs the sealed re-exec (CVE-2019-5736) */
  const char *help;
} commands[] = {
  { "create", cmd_create, true, "create a container from a bundle" },
  { "start", cmd_start, false, "start the process of a created container" },
  { "run", cmd_run, true, "create and start a container" },
  { "state", cmd_state, false, "print the state of a container" },
  { "kill", cmd_kill, false, "send a signal to a container's init (or --all processes)" },
  { "delete", cmd_delete, false, "delete a container (--force: also a running one)" },
  { "list", cmd_list, false, "list containers" },
  { "ps", cmd_ps, false, "list the processes of a container" },
  { "exec", cmd_exec, true, "run a process in a container" },
  { "spec", cmd_spec, false, "write a starting config.json" },
  { "features", cmd_features, false, "print what this runtime supports" },
  { "pause", cmd_pause, false, "freeze all processes of a container" },
  { "resume", cmd_resume, false, "thaw a paused container" },
  { "update", cmd_update, false, "change the resources of a container (--resources FILE|-, or flags)" },
};

enum
{
  G_ROOT = 1,
  G_LOG,
  G_LOG_FORMAT,
  G_DEBUG,
  G_SYSTEMD_CGROUP,
  G_ROOTLESS,
  G_CRIU,
  G_VERSION,
  G_HELP,
  G_POLICY,
  G_POLICY_LOCK,
  G_API_KEY,
};

static const struct hv_opt global_opts[] = {
  { "root", 0, true, G_ROOT },
  { "log", 0, true, G_LOG },
  { "log-format", 0, true, G_LOG_FORMAT },
  { "debug", 0, false, G_DEBUG },
  { "systemd-cgroup", 0, false, G_SYSTEMD_CGROUP },
  { "rootless", 0, true, G_ROOTLESS },
  { "criu", 0, true, G_CRIU },
  { "policy", 0, true, G_POLICY },
  { "policy-lock", 0, false, G_POLICY_LOCK },
  { HV_API_KEY_OPTION, 0, true, G_API_KEY },
  { "version", 'v', false, G_VERSION },
  { "help", 'h', false, G_HELP },
  { NULL, 0, false, 0 },
};

static void
print_version (void)
{
  const struct scmp_version *v = seccomp_version ();
  printf ("haven-runc version %s\ncommit: %s\nspec: %s\nlibseccomp: %u.%u.%u\n", PACKAGE_VERSION,
          HAVEN_GIT_COMMIT, HAVEN_OCI_VERSION, v->major, v->minor, v->micro);
}

static void
print_help (void)
{
  printf ("usage: haven-runc [global options] COMMAND [options] [ID] ...\n\n"
          "global options:\n"
          "  --root DIR          state directory (default /run/haven; $XDG_RUNTIME_DIR/haven rootless)\n"
          "  --log FILE          log file (default: stderr)\n"
          "  --log-format FMT    text or json\n"
          "  --debug             log debug messages\n"
          "  --systemd-cgroup    cgroupsPath is slice:prefix:name\n"
          "  --rootless VALUE    true, false or auto\n"
          "  --policy NAME|FILE  tighten every container with a haven policy\n"
          "  --policy-lock       refuse per-container policies (" HV_POLICY_ANNOTATION " annotations)\n"
          "  --api-key P=FILE    the key of model API P (anthropic, openai, gemini) is in FILE: containers\n"
          "                      whose policy has credentials.api for P reach it through the gateway\n"
          "  --version           print version information\n\ncommands:\n");
  for (size_t i = 0; i < N_ELEMENTS (commands); i++)
    printf ("  %-10s %s\n", commands[i].name, commands[i].help);
}

/* The global options before the command, into G; 1 when one of them
 * (--version, --help) was all there was to do. */
static int
parse_global_opts (struct hv_opt_iter *it, struct hv_global *g, const char **log_format, hv_error **err)
{
  const char *arg;
  int id;
  while ((id = hv_opt_next (it, global_opts, &arg, err)) > 0)
    switch (id)
      {
      case G_ROOT:
        g->rt.root = arg;
        break;
      case G_LOG:
        g->log = arg;
        break;
      case G_LOG_FORMAT:
        *log_format = arg;
        break;
      case G_DEBUG:
        g->debug = true;
        break;
      case G_SYSTEMD_CGROUP:
        g->rt.systemd_cgroup = hv_opt_bool (arg);
        break;
      case G_ROOTLESS:
        g->rt.rootless = arg;
        break;
      case G_POLICY:
        g->policy = arg;
        break;
      case G_POLICY_LOCK:
        g->policy_lock = true;
        break;
      case G_API_KEY:
        /* Strict: a runtime that cannot tell which key file was meant
         * fails every create rather than run containers without it. */
        if (hv_api_key_arg ("--" HV_API_KEY_OPTION, arg, g->api_keys, err) < 0)
          return -1;
        break;
      case G_VERSION:
        print_version ();
        return 1;
      case G_HELP:
        print_help ();
        return 1;
      default:
        break;
      }
  return id < 0 ? -1 : 0;
}

/* --log-format and --log: the log is open before any command runs. */
static int
open_log (struct hv_global *g, const char *log_format, hv_error **err)
{
  if (strcmp (log_format, "json") == 0)
    g->log_json = true;
  else if (strcmp (log_format, "text") != 0)
    return hv_error_set (err, 0, "invalid --log-format \"%s\" (text or json)", log_format);
  if (hv_log_init (g->log, g->log_json, g->debug) < 0)
    return hv_error_set (err, errno, "open log file %s", g->log);
  return 0;
}

/* The command at argv[index], with its arguments; those that enter the
 * container run from the sealed copy of this binary first. */
static int
run_command (struct hv_global *g, int argc, char **argv, int index, hv_error **err)
{
  const char *name = argv[index];
  for (size_t i = 0; i < N_ELEMENTS (commands); i++)
    {
      if (strcmp (commands[i].name, name) != 0)
        continue;
      if (commands[i].enters_container && hv_ensure_sealed_self (argv, err) < 0)
        return -1;
      hv_log (HV_LOG_DEBUG, "%s", name);
      return commands[i].fn (g, argc - index, argv + index, err) < 0 ? -1 : 0;
    }
  return hv_error_set (err, 0, "unknown command \"%s\" (see --help)", name);
}

int
main (int argc, char **argv)
{
  struct hv_global g = { .rt = { .config_filter = hv_config_apply_policies } };
  g.rt.config_filter_data = &g;
  struct hv_opt_iter it = { argc, argv, 1, "haven-runc" };
  hv_error *err = NULL;
  const char *log_format = "text";
  cleanup_free char *root = NULL;

  const char *base = strrchr (argv[0], '/') ? strrchr (argv[0], '/') + 1 : argv[0];
  if (strcmp (base, "haven") == 0)
    return haven_main (argc, argv);

  int r = parse_global_opts (&it, &g, &log_format, &err);
  if (r > 0)
    return 0;
  if (r < 0 || open_log (&g, log_format, &err) < 0)
    goto fail;
  if (g.rt.root == NULL)
    g.rt.root = root = hv_default_state_root ();
  if (it.index >= argc)
    {
      print_help ();
      return 1;
    }
  if (run_command (&g, argc, argv, it.index, &err) < 0)
    goto fail;
  return g.exit_status;
fail:
  hv_log_fatal (err ? err->msg : "unknown error");
  hv_error_free (&err);
  return 1;
}
