/* The command line of `haven install|uninstall containerd|crio`: options,
 * the files written (the engine's configuration, the policy wrapper) and
 * what to restart. */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "cri_install.h"
#include "engine_install.h"
#include "file_read.h"
#include "utils.h"

#define CRIO_MARKER "# Written by `haven install crio`"
#define WRAPPER_MARKER "#!/bin/sh\n# Written by `haven install "

enum
{
  C_CONFIG = 1,
  C_CONF,
  C_NAME,
  C_RUNTIME,
  C_POLICY,
  C_POLICY_LOCK,
  C_HANDLER_DIR,
};

static const struct hv_opt cri_opts[] = {
  { "config", 0, true, C_CONFIG },   { "conf", 0, true, C_CONF },
  { "name", 0, true, C_NAME },       { "runtime", 0, true, C_RUNTIME },
  { "policy", 0, true, C_POLICY },   { "policy-lock", 0, false, C_POLICY_LOCK },
  { "handler-dir", 0, true, C_HANDLER_DIR }, { NULL, 0, false, 0 },
};

struct cri_cmd
{
  const char *cmd;    /* "install containerd", for messages */
  const char *engine; /* "containerd" or "crio" */
  bool containerd;
  bool uninstall;
  const char *name;
  const char *runtime;
  const char *policy;
  bool lock;
  const char *file;
  const char *handler_dir;
  char *owned_file;
  char *wrapper; /* handler_dir/ENGINE-NAME */
};

/* Kubernetes takes only these as a RuntimeClass's handler. */
static bool
dns_label (const char *s)
{
  size_t n = strlen (s);
  if (n == 0 || n > 63 || s[0] == '-' || s[n - 1] == '-')
    return false;
  for (; *s; s++)
    if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') || *s == '-'))
      return false;
  return true;
}

static int
parse (int argc, char **argv, struct cri_cmd *c, hv_error **err)
{
  struct hv_opt_iter it = { argc, argv, 2, c->cmd };
  const char *arg;
  int id;
  while ((id = hv_opt_next (&it, cri_opts, &arg, err)) > 0)
    {
      bool install_only = id == C_RUNTIME || id == C_POLICY || id == C_POLICY_LOCK;
      if ((id == C_CONFIG && !c->containerd) || (id == C_CONF && c->containerd) || (install_only && c->uninstall))
        {
          const struct hv_opt *opt = cri_opts;
          while (opt->id != id)
            opt++;
          return hv_error_set (err, 0, "%s: option --%s does not apply here (see haven --help)", c->cmd, opt->name);
        }
      switch (id)
        {
        case C_CONFIG:
        case C_CONF:
          c->file = arg;
          break;
        case C_NAME:
          c->name = arg;
          break;
        case C_RUNTIME:
          c->runtime = arg;
          break;
        case C_POLICY:
          c->policy = arg;
          break;
        case C_POLICY_LOCK:
          c->lock = true;
          break;
        case C_HANDLER_DIR:
          c->handler_dir = arg;
          break;
        default:
          break;
        }
    }
  if (id < 0)
    return -1;
  if (it.index < argc)
    return hv_error_set (err, 0, "%s: unexpected argument \"%s\"", c->cmd, argv[it.index]);
  if (!dns_label (c->name))
    return hv_error_set (err, 0,
                         "%s: invalid handler name \"%s\": a RuntimeClass's handler is a DNS label (at most 63 "
                         "lowercase letters, digits and '-', a letter or digit at each end)",
                         c->cmd, c->name);
  if (c->lock && c->policy == NULL)
    return hv_error_set (err, 0, "%s: --policy-lock locks the handler to its --policy: give one", c->cmd);
  if (c->handler_dir[0] != '/')
    return hv_error_set (err, 0, "%s: --handler-dir %s: an absolute path, please", c->cmd, c->handler_dir);
  if (c->file == NULL && c->containerd)
    c->file = HV_CONTAINERD_CONFIG;
  else if (c->file == NULL)
    c->file = c->owned_file = xasprintf ("%s/%s.conf", HV_CRIO_DROP_IN_DIR, c->name);
  c->wrapper = xasprintf ("%s/%s-%s", c->handler_dir, c->engine, c->name);
  return 0;
}

/* The runtime (this binary unless --runtime) and the policy, by absolute
 * paths: the engine runs the wrapper in the container's bundle
 * directory, where a relative policy file would be the image's. */
static int
resolve (struct cri_cmd *c, char **runtime, char **policy, hv_error **err)
{
  *runtime = realpath (c->runtime ? c->runtime : "/proc/self/exe", NULL);
  if (*runtime == NULL)
    return hv_error_set (err, errno, "%s: runtime %s", c->cmd, c->runtime ? c->runtime : "/proc/self/exe");
  if (access (*runtime, X_OK) < 0)
    return hv_error_set (err, errno, "%s: runtime %s", c->cmd, *runtime);
  c->runtime = *runtime;
  if (c->policy == NULL)
    return 0;
  /* What hv_policy_load takes for a file rather than a name. */
  if (strchr (c->policy, '/') || c->policy[0] == '.' || strstr (c->policy, ".yaml"))
    {
      *policy = realpath (c->policy, NULL);
      if (*policy == NULL)
        return hv_error_set (err, errno, "%s: --policy %s", c->cmd, c->policy);
      c->policy = *policy;
    }
  return hv_install_check_policy (c->cmd, c->policy, NULL, err);
}

/* A file of ours at path (starts with marker); 0 when there is none. */
static int
ours (const struct cri_cmd *c, const char *path, const char *marker, hv_error **err)
{
  cleanup_free char *cur = NULL;
  cleanup_error hv_error *rerr = NULL;
  if (read_file_at (AT_FDCWD, path, &cur, &rerr) < 0)
    {
      if (rerr->errno_code == ENOENT)
        return 0;
      return hv_error_set (err, 0, "%s: %s", c->cmd, rerr->msg);
    }
  if (!str_has_prefix (cur, marker))
    return hv_error_set (err, 0, "%s: %s exists and was not written by haven install %s: not replaced or removed",
                         c->cmd, path, c->engine);
  return 1;
}

/* The engine runs the wrapper as root: its directory, and each one above
 * it, must be root's (or yours) alone, or whoever could write there could
 * replace the wrapper and run anything as root.  A sticky directory (/tmp)
 * above is fine: others cannot rename or remove what is not theirs. */
static int
check_handler_dir (const struct cri_cmd *c, hv_error **err)
{
  struct stat st;
  if (mkdir_p (c->handler_dir, 0755, err) < 0)
    return hv_error_wrap (err, "%s", c->cmd);
  if (lstat (c->handler_dir, &st) < 0)
    return hv_error_set (err, errno, "%s: %s", c->cmd, c->handler_dir);
  if (!S_ISDIR (st.st_mode) || (st.st_uid != 0 && st.st_uid != geteuid ()) || (st.st_mode & 022))
    return hv_error_set (err, 0,
                         "%s: %s must be a directory (not a link) that only its owner, root or you, can write",
                         c->cmd, c->handler_dir);
  cleanup_free char *up = xstrdup (c->handler_dir);
  for (char *slash = strrchr (up, '/'); slash; slash = strrchr (up, '/'))
    {
      *slash = '\0';
      const char *dir = up[0] ? up : "/";
      if (stat (dir, &st) < 0)
        return hv_error_set (err, errno, "%s: %s", c->cmd, dir);
      if ((st.st_uid != 0 && st.st_uid != geteuid ()) || ((st.st_mode & 022) && !(st.st_mode & S_ISVTX)))
        return hv_error_set (err, 0,
                             "%s: --handler-dir %s: %s above it can be written by others than root or you, who "
                             "could replace the wrapper the engine runs as root",
                             c->cmd, c->handler_dir, dir);
      if (up[0] == '\0')
        break;
    }
  return 0;
}

static int
write_wrapper (const struct cri_cmd *c, int *changed, hv_error **err)
{
  cleanup_free char *text = hv_cri_wrapper_text (c->engine, c->name, c->runtime, c->policy, c->lock);
  if (check_handler_dir (c, err) < 0 || ours (c, c->wrapper, WRAPPER_MARKER, err) < 0)
    return -1;
  /* Unchanged only when it is still a plain file that only root (or
   * you) can change; anything else is replaced by a new file. */
  cleanup_free char *cur = NULL;
  cleanup_error hv_error *rerr = NULL;
  struct stat st;
  if (lstat (c->wrapper, &st) == 0 && S_ISREG (st.st_mode) && (st.st_uid == 0 || st.st_uid == geteuid ())
      && (st.st_mode & 07777) == 0755 && read_file_at (AT_FDCWD, c->wrapper, &cur, &rerr) == 0
      && strcmp (cur, text) == 0)
    return 0;
  struct hv_replace_opts o = { .mode = 0755, .durable = true };
  const char *base = c->wrapper + strlen (c->handler_dir) + 1;
  if (write_file_replace (c->handler_dir, base, text, strlen (text), &o, err) < 0)
    return hv_error_wrap (err, "%s", c->cmd);
  *changed = 1;
  return 0;
}

static int
remove_wrapper (const struct cri_cmd *c, int *changed, hv_error **err)
{
  int r = ours (c, c->wrapper, WRAPPER_MARKER, err);
  if (r <= 0)
    return r;
  if (unlink (c->wrapper) < 0)
    return hv_error_set (err, errno, "%s: remove %s", c->cmd, c->wrapper);
  printf ("removed %s\n", c->wrapper);
  *changed = 1;
  return 0;
}

/* containerd's config.toml edited; 1 written, 0 unchanged. */
static int
edit_containerd (const struct cri_cmd *c, const struct hv_cri_opts *o, hv_error **err)
{
  cleanup_free char *old = NULL;
  cleanup_error hv_error *rerr = NULL;
  if (read_file_at (AT_FDCWD, c->file, &old, &rerr) < 0 && rerr->errno_code != ENOENT)
    return hv_error_set (err, 0, "%s: %s", c->cmd, rerr->msg);
  if (c->uninstall && old == NULL)
    return 0;
  cleanup_free char *text = NULL;
  cleanup_free char *note = NULL;
  if (hv_containerd_config_edit (old, c->file, o, c->uninstall, &text, &note, err) < 0)
    return hv_error_wrap (err, "%s", c->cmd);
  if (note)
    fprintf (stderr, "haven: %s: note: %s\n", c->cmd, note);
  int r = hv_install_write (c->file, text, err);
  return r < 0 ? hv_error_wrap (err, "%s", c->cmd) : r;
}

static int
write_crio (const struct cri_cmd *c, const struct hv_cri_opts *o, hv_error **err)
{
  if (ours (c, c->file, CRIO_MARKER, err) < 0)
    return -1;
  if (c->uninstall)
    {
      if (unlink (c->file) == 0)
        return 1;
      if (errno == ENOENT)
        return 0;
      return hv_error_set (err, errno, "%s: remove %s", c->cmd, c->file);
    }
  cleanup_free char *text = hv_crio_conf_text (o);
  int r = hv_install_write (c->file, text, err);
  return r < 0 ? hv_error_wrap (err, "%s", c->cmd) : r;
}

/* The config file a running daemon (exe basename) reads, from its
 * --config/-c option or its default; NULL when pid is not that daemon. */
static char *
daemon_config_of (const char *pid, const char *exe, const char *dflt)
{
  cleanup_free char *path = xasprintf ("/proc/%s/cmdline", pid);
  cleanup_free char *cmdline = NULL;
  size_t len = 0;
  cleanup_error hv_error *ignored = NULL;
  if (hv_read_file (path, &cmdline, &len, &ignored) < 0 || len == 0)
    return NULL;
  const char *arg0 = strrchr (cmdline, '/') ? strrchr (cmdline, '/') + 1 : cmdline;
  if (strcmp (arg0, exe) != 0)
    return NULL;
  const char *config = dflt;
  for (const char *a = cmdline; a < cmdline + len; a += strlen (a) + 1)
    {
      const char *next = a + strlen (a) + 1 < cmdline + len ? a + strlen (a) + 1 : NULL;
      if ((strcmp (a, "--config") == 0 || strcmp (a, "-c") == 0) && next)
        config = next;
      else if (str_has_prefix (a, "--config="))
        config = a + strlen ("--config=");
    }
  cleanup_free char *full = config[0] == '/' ? xstrdup (config) : xasprintf ("/proc/%s/cwd/%s", pid, config);
  return realpath (full, NULL);
}

/* The pids of the running daemons that read file (CRI-O: any crio, since
 * every drop-in directory is its own). */
static char *
daemon_pids (const struct cri_cmd *c)
{
  cleanup_free char *want = c->containerd ? realpath (c->file, NULL) : xstrdup ("");
  char *pids = xstrdup ("");
  DIR *d = want ? opendir ("/proc") : NULL;
  struct dirent *de;
  while (d && (de = readdir (d)) != NULL)
    {
      if (de->d_name[0] < '1' || de->d_name[0] > '9')
        continue;
      cleanup_free char *config
          = daemon_config_of (de->d_name, c->engine, c->containerd ? HV_CONTAINERD_CONFIG : "/etc/crio/crio.conf");
      if (config && (!c->containerd || strcmp (config, want) == 0))
        {
          char *more = xasprintf ("%s%s%s", pids, pids[0] ? " " : "", de->d_name);
          free (pids);
          pids = more;
        }
    }
  if (d)
    closedir (d);
  return pids;
}

static void
report (const struct cri_cmd *c, bool changed, bool config_changed)
{
  if (c->uninstall && changed && !config_changed)
    {
      printf ("runtime handler \"%s\" was not in %s; only its wrapper was left\n", c->name, c->file);
      return;
    }
  if (!c->uninstall && changed && !config_changed)
    {
      /* The engine runs the wrapper for each call: no restart needed. */
      printf ("runtime handler \"%s\" now runs %s%s%s (%s; %s unchanged): containers created from now on get it, "
              "and so does every exec; no restart needed\n",
              c->name, c->runtime, c->policy ? " under policy " : "", c->policy ? c->policy : "",
              c->policy ? c->wrapper : "no wrapper", c->file);
      return;
    }
  if (!changed)
    {
      printf (c->uninstall ? "runtime handler \"%s\" is not in %s: unchanged\n"
                           : "already registered: runtime handler \"%s\" in %s, unchanged\n",
              c->name, c->file);
      return;
    }
  cleanup_free char *pids = daemon_pids (c);
  /* containerd and CRI-O read their runtimes at start only; pods that
   * run keep their shim or conmon through a restart. */
  cleanup_free char *restart
      = pids[0] ? xasprintf ("restart %s (pid %s: systemctl restart %s; running pods keep running)", c->engine, pids,
                             c->engine)
                : xasprintf ("restart the %s that should read %s (none running does: systemctl restart %s)",
                             c->engine, c->file, c->engine);
  if (c->uninstall)
    printf ("removed runtime handler \"%s\" from %s; delete its pods first, then %s\n", c->name, c->file, restart);
  else
    printf ("registered runtime handler \"%s\" (%s%s%s) in %s; %s, then use it with a RuntimeClass whose handler "
            "is %s\n",
            c->name, c->runtime, c->policy ? ", policy " : "", c->policy ? c->policy : "", c->file, restart,
            c->name);
}

static int
run (struct cri_cmd *c, hv_error **err)
{
  cleanup_free char *runtime = NULL;
  cleanup_free char *policy = NULL;
  if (!c->uninstall && resolve (c, &runtime, &policy, err) < 0)
    return -1;
  struct hv_cri_opts o = { .name = c->name, .binary = c->policy ? c->wrapper : c->runtime, .annotations = !c->lock };
  int changed = 0;
  /* The wrapper before the configuration that names it, and out after. */
  if (!c->uninstall && c->policy && write_wrapper (c, &changed, err) < 0)
    return -1;
  int r = c->containerd ? edit_containerd (c, &o, err) : write_crio (c, &o, err);
  if (r < 0)
    return -1;
  changed |= r;
  if ((c->uninstall || c->policy == NULL) && remove_wrapper (c, &changed, err) < 0)
    return -1;
  report (c, changed, r == 1);
  return 0;
}

int
hv_cmd_install_cri (int argc, char **argv, bool uninstall, hv_error **err)
{
  cleanup_free char *cmd = xasprintf ("%s %s", uninstall ? "uninstall" : "install", argv[1]);
  struct cri_cmd c = { .cmd = cmd,
                       .engine = argv[1],
                       .containerd = strcmp (argv[1], "containerd") == 0,
                       .uninstall = uninstall,
                       .name = "haven",
                       .handler_dir = HV_CRI_HANDLER_DIR };
  int r = parse (argc, argv, &c, err);
  if (r == 0)
    r = run (&c, err);
  free (c.owned_file);
  free (c.wrapper);
  return r;
}
