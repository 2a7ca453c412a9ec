#include "config.h"
#include "file_read.h"
#include "process.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/sched.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "capabilities.h"
#include "exit_status.h"
#include "haven_annotations.h"
#include "landlock.h"
#include "mounts.h"
#include "safe_path.h"
#include "seccomp_filter.h"
#include "utils.h"

#define DEFAULT_PATH "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

static const char *
env_get (char *const *envp, const char *name)
{
  size_t l = strlen (name);
  for (; envp && *envp; envp++)
    if (strncmp (*envp, name, l) == 0 && (*envp)[l] == '=')
      return *envp + l + 1;
  return NULL;
}

int
hv_process_find_exe (const char *name, char *const *envp, char **out, char **refused)
{
  struct stat st;
  *refused = NULL;
  if (strchr (name, '/'))
    {
      if (stat (name, &st) < 0)
        return errno;
      if (S_ISDIR (st.st_mode))
        return EISDIR;
      /* As runc: a file nobody may execute fails create, not the start
       * that follows (engines then report exit status 126). */
      if (!(st.st_mode & 0111))
        {
          *refused = xstrdup (name);
          return EACCES;
        }
      *out = xstrdup (name);
      return 0;
    }
  const char *path = env_get (envp, "PATH");
  cleanup_free char *copy = xstrdup (path ? path : DEFAULT_PATH);
  char *save = NULL;
  for (char *dir = strtok_r (copy, ":", &save); dir; dir = strtok_r (NULL, ":", &save))
    {
      cleanup_free char *candidate = xasprintf ("%s/%s", dir[0] ? dir : ".", name);
      if (stat (candidate, &st) < 0 || S_ISDIR (st.st_mode))
        continue;
      if (S_ISREG (st.st_mode) && (st.st_mode & 0111))
        {
          free (*refused);
          *refused = NULL;
          *out = steal_pointer (&candidate);
          return 0;
        }
      /* There, but not executable (a policy masks a blocked shell with
       * a device node): as execvp, "permission denied" if nothing later
       * in PATH is executable, not "not found". */
      if (*refused == NULL)
        *refused = steal_pointer (&candidate);
    }
  return *refused ? EACCES : ENOENT;
}

/* PATH search in the container's root with the container's PATH, so that
 * create fails with a clear message instead of the exec failing later.
 * A command that cannot be executed is marked with the status a shell
 * gives it (hv_error_set_exit_status): 127 not found, 126 found but not
 * executable (haven run exits with it). */
static int
resolve_exe (const char *name, char **envp, char **out, hv_error **err)
{
  cleanup_free char *refused = NULL;
  int e = hv_process_find_exe (name, envp, out, &refused);
  if (e == 0)
    return 0;
  if (strchr (name, '/'))
    {
      if (e == EISDIR)
        hv_error_set (err, 0, "exec: \"%s\": is a directory", name);
      else if (refused)
        hv_error_set (err, EACCES, "exec: \"%s\"", name);
      else
        {
          hv_error_set (err, e, "exec: \"%s\": stat %s", name, name);
          return hv_error_set_exit_status (err, e == ENOENT ? HV_EXIT_NOT_FOUND : HV_EXIT_CANNOT_EXECUTE);
        }
      return hv_error_set_exit_status (err, HV_EXIT_CANNOT_EXECUTE);
    }
  if (refused)
    {
      hv_error_set (err, EACCES, "exec: \"%s\": %s", name, refused);
      return hv_error_set_exit_status (err, HV_EXIT_CANNOT_EXECUTE);
    }
  hv_error_set (err, 0, "exec: \"%s\": executable file not found in $PATH", name);
  return hv_error_set_exit_status (err, HV_EXIT_NOT_FOUND);
}

/* One passwd line, split at every ':' (an empty comment field, as
 * useradd writes, is a field: strtok would merge it and take the shell
 * for the home).  The strings point into line, which is modified. */
bool
hv_passwd_parse (char *line, struct hv_passwd_entry *e)
{
  char *fields[7] = { 0 };
  int n = 0;
  line[strcspn (line, "\n")] = '\0';
  for (char *p = line; p && n < 7; n++)
    fields[n] = strsep (&p, ":");
  if (n < 6)
    return false;
  unsigned long ids[2];
  for (int i = 0; i < 2; i++)
    {
      const char *f = fields[2 + i];
      char *end;
      errno = 0;
      ids[i] = strtoul (f, &end, 10);
      if (f[0] < '0' || f[0] > '9' || errno || *end || ids[i] > UINT32_MAX)
        return false;
    }
  e->name = fields[0];
  e->uid = (uint32_t) ids[0];
  e->gid = (uint32_t) ids[1];
  e->home = fields[5];
  return true;
}

char *
hv_passwd_home (char *line, uid_t uid)
{
  struct hv_passwd_entry e;
  if (!hv_passwd_parse (line, &e) || e.uid != uid || e.home[0] == '\0')
    return NULL;
  return xstrdup (e.home);
}

/* HOME from the container's /etc/passwd when the config sets none. */
static char *
home_for_uid (uid_t uid)
{
  FILE *f = fopen ("/etc/passwd", "re");
  char *line = NULL, *home = NULL;
  size_t cap = 0;
  if (f == NULL)
    return xstrdup ("/");
  while (home == NULL && getline (&line, &cap, f) > 0)
    home = hv_passwd_home (line, uid);
  free (line);
  fclose (f);
  return home ? home : xstrdup ("/");
}

static char **
build_env (const oci_process *p)
{
  size_t n = p->env.n;
  char **envp = xmalloc0 ((n + 2) * sizeof (char *));
  for (size_t i = 0; i < n; i++)
    envp[i] = xstrdup (p->env.v[i]);
  if (env_get (envp, "HOME") == NULL)
    {
      cleanup_free char *home = home_for_uid (p->user.uid);
      envp[n++] = xasprintf ("HOME=%s", home);
    }
  return envp;
}

bool
hv_apparmor_enabled (void)
{
  cleanup_free char *text = NULL;
  if (read_file_at (AT_FDCWD, "/sys/module/apparmor/parameters/enabled", &text, NULL) < 0)
    return false;
  return text[0] == 'Y';
}

bool
hv_setgroups_denied (int procfd)
{
  char path[64], buf[16] = { 0 };
  if (procfd < 0)
    return false;
  snprintf (path, sizeof (path), "%d/setgroups", getpid ());
  cleanup_close int fd = hv_open_in_proc (procfd, path, O_RDONLY);
  return fd >= 0 && pread (fd, buf, sizeof (buf) - 1, 0) > 0 && str_has_prefix (buf, "deny");
}

int
hv_open_private_procfs (hv_error **err)
{
  int fd = hv_fs_new_mount ("proc", "proc", NULL, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC, err);
  if (fd < 0)
    return hv_error_wrap (err, "private procfs");
  return fd;
}

static int
apply_apparmor (struct hv_process_ctx *ctx, hv_error **err)
{
  const char *profile = ctx->process->apparmor_profile;
  if (profile == NULL || profile[0] == '\0')
    return 0;
  if (!hv_apparmor_enabled ())
    return hv_error_set (err, 0, "apparmor profile \"%s\" requested, but AppArmor is not enabled on this host",
                         profile);
  if (ctx->procfd < 0)
    return hv_error_set (err, 0, "apparmor: no trusted procfs to set the profile through");
  char path[64];
  snprintf (path, sizeof (path), "%d/attr/apparmor/exec", getpid ());
  int fd = hv_open_in_proc (ctx->procfd, path, O_WRONLY);
  if (fd < 0)
    {
      snprintf (path, sizeof (path), "%d/attr/exec", getpid ());
      fd = hv_open_in_proc (ctx->procfd, path, O_WRONLY);
    }
  if (fd < 0)
    return hv_error_set (err, errno, "apparmor: open exec attribute");
  cleanup_free char *cmd = xasprintf ("exec %s", profile);
  int r = write_all (fd, cmd, strlen (cmd));
  int e = errno;
  close (fd);
  if (r < 0)
    return hv_error_set (err, e, "apparmor: set profile \"%s\"", profile);
  return 0;
}

/* setrlimit's resource: glibc declares it as its __rlimit_resource_t, an
 * enum (unsigned to clang) under _GNU_SOURCE, where other C libraries take
 * an int.  The value came from the table of RLIMIT_* names: >= 0. */
#ifdef __GLIBC__
#define rlimit_resource(r) ((__rlimit_resource_t) (r))
#else
#define rlimit_resource(r) (r)
#endif

static int
apply_rlimits (const oci_process *p, hv_error **err)
{
  for (size_t i = 0; i < p->n_rlimits; i++)
    {
      struct rlimit rl = { .rlim_cur = p->rlimits[i].soft, .rlim_max = p->rlimits[i].hard };
      if (setrlimit (rlimit_resource (p->rlimits[i].resource), &rl) < 0)
        return hv_error_set (err, errno, "setrlimit %s (soft %llu, hard %llu)", p->rlimits[i].type,
                             (unsigned long long) rl.rlim_cur, (unsigned long long) rl.rlim_max);
    }
  return 0;
}

struct sched_attr_v1
{
  uint32_t size, sched_policy;
  uint64_t sched_flags;
  int32_t sched_nice;
  uint32_t sched_priority;
  uint64_t sched_runtime, sched_deadline, sched_period;
};

static int
apply_scheduling (const oci_process *p, hv_error **err)
{
  if (p->scheduler.present)
    {
      struct sched_attr_v1 a = { .size = sizeof (a),
                                 .sched_policy = (uint32_t) p->scheduler.policy,
                                 .sched_nice = p->scheduler.nice,
                                 .sched_priority = (uint32_t) p->scheduler.priority,
                                 .sched_runtime = p->scheduler.runtime,
                                 .sched_deadline = p->scheduler.deadline,
                                 .sched_period = p->scheduler.period };
      for (size_t i = 0; i < p->scheduler.flags.n; i++)
        {
          const char *f = p->scheduler.flags.v[i];
          if (strcmp (f, "SCHED_FLAG_RESET_ON_FORK") == 0)
            a.sched_flags |= SCHED_FLAG_RESET_ON_FORK;
          else if (strcmp (f, "SCHED_FLAG_RECLAIM") == 0)
            a.sched_flags |= SCHED_FLAG_RECLAIM;
          else if (strcmp (f, "SCHED_FLAG_DL_OVERRUN") == 0)
            a.sched_flags |= SCHED_FLAG_DL_OVERRUN;
          else if (strcmp (f, "SCHED_FLAG_KEEP_POLICY") == 0)
            a.sched_flags |= SCHED_FLAG_KEEP_POLICY;
          else if (strcmp (f, "SCHED_FLAG_KEEP_PARAMS") == 0)
            a.sched_flags |= SCHED_FLAG_KEEP_PARAMS;
          else if (strcmp (f, "SCHED_FLAG_UTIL_CLAMP_MIN") == 0)
            a.sched_flags |= SCHED_FLAG_UTIL_CLAMP_MIN;
          else if (strcmp (f, "SCHED_FLAG_UTIL_CLAMP_MAX") == 0)
            a.sched_flags |= SCHED_FLAG_UTIL_CLAMP_MAX;
          else
            return hv_error_set (err, 0, "unknown scheduler flag \"%s\"", f);
        }
      if (syscall (SYS_sched_setattr, 0, &a, 0) < 0)
        return hv_error_set (err, errno, "sched_setattr");
    }
  if (p->io_priority.present)
    {
      int value = (p->io_priority.klass << 13) | p->io_priority.priority;
      if (syscall (SYS_ioprio_set, 1 /* IOPRIO_WHO_PROCESS */, 0, value) < 0)
        return hv_error_set (err, errno, "ioprio_set");
    }
  return 0;
}

static int
parse_cpu_list (const char *list, cpu_set_t *set, hv_error **err)
{
  CPU_ZERO (set);
  cleanup_free char *copy = xstrdup (list);
  char *save = NULL;
  for (char *tok = strtok_r (copy, ",", &save); tok; tok = strtok_r (NULL, ",", &save))
    {
      char *end;
      unsigned long a = strtoul (tok, &end, 10), b = a;
      if (end == tok)
        return hv_error_set (err, 0, "invalid CPU list \"%s\"", list);
      if (*end == '-')
        b = strtoul (end + 1, &end, 10);
      if (*end != '\0' || b < a || b >= CPU_SETSIZE)
        return hv_error_set (err, 0, "invalid CPU list \"%s\"", list);
      for (unsigned long c = a; c <= b; c++)
        CPU_SET (c, set);
    }
  return 0;
}

static int
set_user (struct hv_process_ctx *ctx, hv_error **err)
{
  const oci_user *u = &ctx->process->user;
  if (!ctx->setgroups_denied)
    {
      gid_t *gids = xmalloc0 ((u->n_additional_gids + 1) * sizeof (gid_t));
      for (size_t i = 0; i < u->n_additional_gids; i++)
        gids[i] = u->additional_gids[i];
      int r = setgroups (u->n_additional_gids, gids);
      int e = errno;
      free (gids);
      if (r < 0)
        return hv_error_set (err, e, "setgroups");
    }
  else if (u->n_additional_gids > 0)
    return hv_error_set (err, 0, "additionalGids need setgroups, which this user namespace denies");
  if (setresgid (u->gid, u->gid, u->gid) < 0)
    return hv_error_set (err, errno, "setgid %u", u->gid);
  if (setresuid (u->uid, u->uid, u->uid) < 0)
    return hv_error_set (err, errno, "setuid %u", u->uid);
  return 0;
}

int
hv_process_prepare (struct hv_process_ctx *ctx, hv_error **err)
{
  const oci_process *p = ctx->process;
  if (p->args.n == 0)
    return hv_error_set (err, 0, "process.args is empty");
  ctx->envp = build_env (p);
  if (apply_rlimits (p, err) < 0 || apply_apparmor (ctx, err) < 0 || apply_scheduling (p, err) < 0)
    return -1;
  if (p->exec_cpu_affinity_final || p->exec_cpu_affinity_initial)
    {
      cpu_set_t set;
      const char *list = p->exec_cpu_affinity_final ? p->exec_cpu_affinity_final : p->exec_cpu_affinity_initial;
      if (parse_cpu_list (list, &set, err) < 0)
        return -1;
      if (sched_setaffinity (0, sizeof (set), &set) < 0)
        return hv_error_set (err, errno, "set CPU affinity %s", list);
    }
  /* CVE-2024-21626: a cwd reached through a leaked host fd resolves outside
   * our root, and getcwd() then fails or reports "(unreachable)".  Checked
   * before seccomp, which may deny getcwd itself. */
  if (chdir (p->cwd) < 0)
    return hv_error_set (err, errno, "chdir to cwd \"%s\"", p->cwd);
  char buf[4096];
  if (getcwd (buf, sizeof (buf)) == NULL || buf[0] != '/')
    return hv_error_set (err, 0, "cwd \"%s\" is outside the container root", p->cwd);
  /* In the cwd, as a shell and execve() see it: `./script.sh` (and a
   * relative PATH entry) is relative to the cwd, not to the root where
   * setup left us.  haven run's cwd is the project.  A keeper runs no
   * program of the config's: each command it starts is resolved then. */
  if (!ctx->keeper && resolve_exe (p->args.v[0], ctx->envp, &ctx->exe, err) < 0)
    return -1;
  /* A second profile (run.haven.seccomp) is stacked on the config's:
   * the kernel runs both filters and the stricter answer wins, so it
   * can refuse what the first allows (the argument rules haven adds to
   * an engine's profile, which libseccomp cannot merge into an
   * unconditional allow of the same call).  Parsed now so that a bad one
   * fails create; loaded last, right before execve. */
  if (ctx->seccomp_extra
      && oci_seccomp_parse (ctx->seccomp_extra, strlen (ctx->seccomp_extra), "annotation " HV_SECCOMP_ANNOTATION,
                            &ctx->seccomp_extra_parsed, err)
             < 0)
    return -1;
  if (ctx->seccomp_extra_parsed && ctx->seccomp_extra_parsed->listener_path)
    return hv_error_set (err, 0, "annotation " HV_SECCOMP_ANNOTATION ": a stacked profile cannot have a listener");
  if (ctx->seccomp && ctx->seccomp->present && !p->no_new_privileges)
    {
      int notify_fd = -1;
      if (hv_seccomp_load (ctx->seccomp, &notify_fd, err) < 0)
        return -1;
      ctx->seccomp_loaded = true;
      if (notify_fd >= 0)
        {
          int r = hv_seccomp_send_notify_fd (ctx->seccomp, ctx->seccomp_listener, ctx->state_json, ctx->host_pid, notify_fd, err);
          close (notify_fd);
          if (r < 0)
            return -1;
        }
    }
  if (prctl (PR_SET_KEEPCAPS, 1, 0, 0, 0) < 0)
    return hv_error_set (err, errno, "PR_SET_KEEPCAPS");
  if (hv_caps_drop_bounding (&p->capabilities, err) < 0 || set_user (ctx, err) < 0
      || hv_caps_apply (&p->capabilities, err) < 0)
    return -1;
  prctl (PR_SET_KEEPCAPS, 0, 0, 0, 0);
  /* Again as the container's user: it must be allowed in there. */
  if (chdir (p->cwd) < 0)
    return hv_error_set (err, errno, "chdir to cwd \"%s\"", p->cwd);
  return 0;
}

int
hv_process_finish (struct hv_process_ctx *ctx, hv_error **err)
{
  const oci_process *p = ctx->process;
  /* Landlock rules imply no_new_privs (the kernel requires it without
   * CAP_SYS_ADMIN, and a setuid binary must not escape them anyway). */
  if ((p->no_new_privileges || ctx->landlock) && prctl (PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
    return hv_error_set (err, errno, "set no_new_privs");
  if (ctx->landlock && hv_landlock_apply (ctx->landlock, ctx->landlock_log, err) < 0)
    return -1;
  if (ctx->seccomp_extra_parsed)
    {
      int none = -1;
      if (!p->no_new_privileges && !ctx->landlock)
        return hv_error_set (err, 0, "annotation " HV_SECCOMP_ANNOTATION " needs no_new_privs");
      if (hv_seccomp_load (ctx->seccomp_extra_parsed, &none, err) < 0)
        return hv_error_wrap (err, "annotation " HV_SECCOMP_ANNOTATION);
    }
  if (ctx->seccomp && ctx->seccomp->present && !ctx->seccomp_loaded)
    {
      int notify_fd = -1;
      if (hv_seccomp_load (ctx->seccomp, &notify_fd, err) < 0)
        return -1;
      if (notify_fd >= 0)
        {
          int r = hv_seccomp_send_notify_fd (ctx->seccomp, ctx->seccomp_listener, ctx->state_json, ctx->host_pid, notify_fd, err);
          close (notify_fd);
          if (r < 0)
            return -1;
        }
    }
  umask (p->user.umask.set ? (mode_t) p->user.umask.value : 022);
  /* No fd of the runtime may reach the container (CVE-2024-21626). */
  cloexec_from (3 + ctx->preserve_fds);
  return 0;
}

int
hv_process_exec (struct hv_process_ctx *ctx, hv_error **err)
{
  const oci_process *p = ctx->process;
  if (hv_process_finish (ctx, err) < 0)
    return -1;
  execve (ctx->exe, p->args.v, ctx->envp);
  /* Refused by Landlock (allow_exec, block_shell), a noexec mount, or
   * not a program at all: 126, as a shell says; a missing interpreter
   * or loader: 127. */
  int e = errno;
  hv_error_set (err, e, "exec %s", ctx->exe);
  return hv_error_set_exit_status (err, e == ENOENT ? HV_EXIT_NOT_FOUND : HV_EXIT_CANNOT_EXECUTE);
}

void
hv_process_ctx_free (struct hv_process_ctx *ctx)
{
  free (ctx->exe);
  oci_seccomp_free (ctx->seccomp_extra_parsed);
  ctx->seccomp_extra_parsed = NULL;
  if (ctx->envp)
    for (char **e = ctx->envp; *e; e++)
      free (*e);
  free (ctx->envp);
}
