/* What the host offers beyond the kernel's namespaces: a cgroup for a
 * sandbox's limits, nf_tables for an allowlist's egress table, and what
 * container haven itself runs in.  Each probe takes the steps a start
 * would take (host_probe.h), and undoes what it made. */
#include "config.h"
#include "host_probe.h"
#include "host_probe_child.h"
#include "host_probe_host.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cgroup.h"
#include "cgroup_files.h"
#include "egress_table.h"
#include "utils.h"

static void
probe_set (hv_probe *out, bool ok, const char *why)
{
  out->ok = ok;
  snprintf (out->why, sizeof (out->why), "%s", why ? why : "");
}

/* The file a v1 hierarchy, or the unified one, has for each limit a
 * policy's resources set: its presence says the controller is there for
 * the sandbox's cgroup. */
struct limit_file
{
  const char *controller;
  const char *v1;
  const char *v2;
  const char *rule; /* the policy's name for it */
};

static const struct limit_file limit_files[] = {
  { "memory", "memory.limit_in_bytes", "memory.max", "resources.memory" },
  { "cpu", "cpu.cfs_quota_us", "cpu.max", "resources.cpus" },
  { "pids", "pids.max", "pids.max", "resources.pids" },
};

/* The probe's cgroup holds one process of its own (a child waiting for
 * its pipe to close): hv_cgroup_enter both makes the cgroup in every
 * hierarchy and writes cgroup.procs, and a user may be allowed the first
 * without the second (cgroup.procs of the common ancestor). */
static void
probe_cgroup_at (const char *path, pid_t child, hv_probe *out)
{
  static const char *const wanted[] = { "memory", "cpu", "pids", NULL };
  cleanup_error hv_error *err = NULL;
  if (hv_cgroup_enter (path, child, &err) < 0)
    {
      probe_set (out, false, err->msg);
      return;
    }
  /* As haven run does for a policy with limits: on cgroup v2 the
   * controllers reach the sandbox's cgroup only when its ancestors
   * enable them (no-op on a hybrid host's controller-less hierarchy). */
  hv_cgroup_enable_controllers (path, wanted, NULL);
  bool v2 = hv_cgroup_mode () == HV_CGROUP_V2;
  for (size_t i = 0; i < sizeof (limit_files) / sizeof (limit_files[0]); i++)
    {
      const struct limit_file *l = &limit_files[i];
      cleanup_free char *dir = hv_cgroup_dir (path, l->controller);
      if (dir == NULL || !hv_cg_has (dir, v2 ? l->v2 : l->v1))
        {
          char why[256];
          snprintf (why, sizeof (why), "the %s controller is not %s (%s needs it)", l->controller,
                    v2 ? "available below /sys/fs/cgroup" : "mounted", l->rule);
          probe_set (out, false, why);
          return;
        }
    }
  static const char *const mode_names[] = { [HV_CGROUP_V1] = "v1", [HV_CGROUP_HYBRID] = "hybrid",
                                            [HV_CGROUP_V2] = "v2" };
  char why[256];
  snprintf (why, sizeof (why), "cgroup %s: a cgroup under /haven with memory, cpu and pids limits",
            mode_names[hv_cgroup_mode ()]);
  probe_set (out, true, why);
}

void
hv_probe_cgroups (hv_probe *out)
{
  int p[2];
  if (pipe2 (p, O_CLOEXEC) < 0)
    {
      probe_set (out, false, "pipe for the probe's process failed");
      return;
    }
  pid_t child = fork ();
  if (child < 0)
    {
      probe_set (out, false, "fork for the probe's process failed");
      close (p[0]);
      close (p[1]);
      return;
    }
  if (child == 0)
    {
      char c;
      close (p[1]);
      /* Ends when the parent closes its end (or dies). */
      while (read (p[0], &c, 1) < 0 && errno == EINTR)
        ;
      _exit (0);
    }
  close (p[0]);
  /* Where haven run puts a sandbox's cgroup (/haven/ID in every
   * hierarchy).  /haven itself stays if the probe made it, as it does
   * after a run: removing it could race with a run making its own. */
  char path[64];
  snprintf (path, sizeof (path), "/haven/doctor-probe-%d", (int) getpid ());
  probe_cgroup_at (path, child, out);
  close (p[1]);
  /* Kills the child if it is still there, and removes the cgroup from
   * each hierarchy it was made in (what a failed enter made too). */
  hv_cgroup_destroy (path, NULL);
  while (waitpid (child, NULL, 0) < 0 && errno == EINTR)
    ;
}

/* In the child: the egress table made and deleted in a network namespace
 * of its own, as a start makes it (as root in the sandbox's network
 * namespace; otherwise in one owned by the sandbox's user namespace). */
static int
nftables_child (hv_error **err)
{
  bool root = geteuid () == 0;
  int flags = root ? CLONE_NEWNET : CLONE_NEWUSER | CLONE_NEWNET;
  if (unshare (flags) < 0)
    return hv_error_set (err, errno, "unshare(%s)", root ? "CLONE_NEWNET" : "CLONE_NEWUSER|CLONE_NEWNET");
  hv_egress_table *t = NULL;
  if (hv_egress_table_open ("haven-doctor", -1, &t, err) < 0)
    return -1;
  hv_egress_spec spec = { 0 };
  int r = hv_egress_table_create (t, &spec, NULL, err);
  if (r == 0)
    r = hv_egress_table_delete (t, err);
  hv_egress_table_close (t);
  return r;
}

static void
nftables_entry (int fd, void *data)
{
  (void) data;
  hv_error *err = NULL;
  if (nftables_child (&err) == 0)
    _exit (0);
  const char *msg = err ? err->msg : "failed";
  ssize_t ignored = write (fd, msg, strnlen (msg, sizeof (((hv_probe *) NULL)->why) - 1));
  (void) ignored;
  _exit (1);
}

void
hv_probe_nftables (hv_probe *out)
{
  int status = hv_probe_in_child (out, nftables_entry, NULL);
  if (out->ok)
    probe_set (out, true, "an nf_tables table made and deleted in a new network namespace");
  else if (status >= 0 && WIFSIGNALED (status))
    {
      char msg[sizeof (out->why)];
      snprintf (msg, sizeof (msg), "the probe's process was killed by signal %d", WTERMSIG (status));
      probe_set (out, false, msg);
    }
}

static bool
exists_in (const char *root, const char *path)
{
  struct stat st;
  cleanup_free char *full = xasprintf ("%s%s", root, path);
  return lstat (full, &st) == 0;
}

static bool
env_set (const char *(*env) (const char *), const char *name)
{
  const char *v = env (name);
  return v != NULL && v[0] != '\0';
}

const char *
hv_probe_container_in (const char *root, const char *(*env) (const char *name))
{
  /* Most specific first: a devcontainer is a Docker or Podman container,
   * a pod's may carry Docker's marker too. */
  if (env_set (env, "REMOTE_CONTAINERS") || env_set (env, "DEVCONTAINER") || env_set (env, "CODESPACES"))
    return "devcontainer";
  if (env_set (env, "KUBERNETES_SERVICE_HOST") || exists_in (root, "/var/run/secrets/kubernetes.io/serviceaccount")
      || exists_in (root, "/run/secrets/kubernetes.io/serviceaccount"))
    return "kubernetes";
  const char *container = env ("container");
  if (exists_in (root, "/run/.containerenv") || (container && strcmp (container, "podman") == 0))
    return "podman";
  if (exists_in (root, "/.dockerenv") || (container && strcmp (container, "docker") == 0))
    return "docker";
  if (container && container[0])
    return "container";
  return NULL;
}

static const char *
real_env (const char *name)
{
  return getenv (name);
}

const char *
hv_probe_container (void)
{
  return hv_probe_container_in ("", real_env);
}
