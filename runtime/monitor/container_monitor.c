/* The per-container monitor, the runtime's side: create starts it and
 * hands it init, delete stops it (container_monitor.h).  The monitor
 * itself is monitor_loop.c. */
#include "config.h"
#include "container_monitor.h"

#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "egress_fds.h"
#include "file_read.h"
#include "git_broker.h"
#include "haven_annotations.h"
#include "json_gen.h"
#include "json_merge.h"
#include "landlock_audit.h"
#include "monitor_gateway.h"
#include "monitor_git.h"
#include "monitor_loop.h"
#include "pod_identity.h"
#include "safe_path.h"
#include "ssh_agent_service.h"
#include "sync.h"
#include "unix_socket.h"
#include "user_namespace.h"
#include "utils.h"

const char *
hv_monitor_trail_request (const oci_spec *spec)
{
  return oci_kv_get (&spec->annotations, HV_MONITOR_ANNOTATION);
}

/* run.haven.timeout: whole seconds, 1 to a year; 0 when absent. */
static int
monitor_timeout (const oci_spec *spec, const char *name, unsigned *seconds, hv_error **err)
{
  const char *text = oci_kv_get (&spec->annotations, HV_TIMEOUT_ANNOTATION);
  *seconds = 0;
  if (text == NULL)
    return 0;
  char *end;
  errno = 0;
  unsigned long v = strtoul (text, &end, 10);
  if (text[0] < '0' || text[0] > '9' || *end || errno || v == 0 || v > 366UL * 24 * 3600)
    return hv_error_set (err, 0, "%s: .annotations[\"%s\"]: \"%s\" is not a number of seconds (1 to a year)", name,
                         HV_TIMEOUT_ANNOTATION, text);
  /* The monitor keeps the time: without one nothing would. */
  if (hv_monitor_trail_request (spec) == NULL)
    return hv_error_set (err, 0, "%s: .annotations[\"%s\"] needs the per-container monitor (.annotations[\"%s\"])",
                         name, HV_TIMEOUT_ANNOTATION, HV_MONITOR_ANNOTATION);
  *seconds = (unsigned) v;
  return 0;
}

int
hv_monitor_prepare_config (const char *state_dir, const char *name, char **text, oci_spec **spec, hv_error **err)
{
  unsigned timeout_s;
  if (monitor_timeout (*spec, name, &timeout_s, err) < 0)
    return -1;
  const char *trail = hv_monitor_trail_request (*spec);
  if (trail == NULL)
    return 0;
  if (strcmp (trail, HV_AUDIT_TRAIL_DEFAULT) != 0 && trail[0] != '/')
    return hv_error_set (err, 0, "%s: .annotations[\"%s\"]: \"%s\" is neither \"default\" nor an absolute path", name,
                         HV_MONITOR_ANNOTATION, trail);
  const oci_seccomp *sc = &(*spec)->linux_cfg.seccomp;
  if (!sc->present)
    return 0; /* nothing to listen to: the trail has start and exit */
  cleanup_free char *sock = xasprintf ("%s/%s", state_dir, HV_MONITOR_SOCKET);
  if (sc->listener_path && sc->listener_path[0])
    {
      if (strcmp (sc->listener_path, sock) == 0)
        return 0;
      return hv_error_set (err, 0,
                           "%s: .linux.seccomp.listenerPath: \"%s\" is another listener, but %s asks for haven's "
                           "monitor as the seccomp listener",
                           name, sc->listener_path, HV_MONITOR_ANNOTATION);
    }
  /* The saved config says where the monitor is: exec reads it there. */
  yajl_gen g = yajl_gen_alloc (NULL);
  yajl_gen_map_open (g);
  jg_kv (g, "listenerPath", sock);
  yajl_gen_map_close (g);
  cleanup_free char *patch = jg_finish (g);
  static const char *const at[] = { "linux", "seccomp" };
  cleanup_free char *merged = NULL;
  oci_spec *fresh = NULL;
  if (jm_merge_at (*text, name, at, N_ELEMENTS (at), patch, "the monitor's listenerPath", &merged, err) < 0
      || oci_spec_parse (merged, strlen (merged), name, &fresh, err) < 0)
    return -1;
  oci_spec_free (*spec);
  *spec = fresh;
  free (*text);
  *text = steal_pointer (&merged);
  return 0;
}

/* Root's trails go to the host's /var/log; root of a rootless engine's
 * user namespace is the user, who can write only its own state directory
 * (and whose containers' records are its to read). */
static bool
trail_in_var_log (void)
{
  return geteuid () == 0 && !hv_root_of_user_namespace ();
}

char *
hv_monitor_default_trail (const char *id, hv_error **err)
{
  if (trail_in_var_log ())
    return xasprintf ("/var/log/haven/containers/%s.jsonl", id);
  const char *state = getenv ("XDG_STATE_HOME"), *home = getenv ("HOME");
  if (state && state[0] == '/')
    return xasprintf ("%s/haven/containers/%s.jsonl", state, id);
  if (home && home[0] == '/')
    return xasprintf ("%s/.local/state/haven/containers/%s.jsonl", home, id);
  hv_error_set (err, 0, "no place for the audit trail: neither XDG_STATE_HOME nor HOME is an absolute path");
  return NULL;
}

/* The directory fd where the trail goes and the trail's name in it.
 * The default place is made from a base we trust (the host's /var/log,
 * or the caller's own state directory, which its environment names),
 * every directory ours and no link followed below it; a path from the
 * annotation is followed from / without any link. */
static int
open_trail_dir (const char *id, const char *request, char **path, char **name, hv_error **err)
{
  cleanup_free char *base = NULL;
  const char *rel;
  bool owned = true;
  if (strcmp (request, HV_AUDIT_TRAIL_DEFAULT) != 0)
    {
      base = xstrdup ("/");
      *path = xstrdup (request);
      rel = *path + 1;
      owned = false;
    }
  else
    {
      *path = hv_monitor_default_trail (id, err);
      if (*path == NULL)
        return -1;
      const char *state = getenv ("XDG_STATE_HOME");
      if (trail_in_var_log ())
        base = xstrdup ("/var/log");
      else if (state && state[0] == '/')
        base = xstrdup (state);
      else
        base = xstrdup (getenv ("HOME"));
      rel = *path + strlen (base) + 1;
    }
  const char *slash = strrchr (rel, '/');
  *name = xstrdup (slash ? slash + 1 : rel);
  if ((*name)[0] == '\0' || strcmp (*name, ".") == 0 || strcmp (*name, "..") == 0)
    return hv_error_set (err, 0, "audit trail %s: not a file name", *path);
  cleanup_free char *dirs = slash ? xasprintf ("%.*s", (int) (slash - rel), rel) : xstrdup ("");
  cleanup_close int basefd = open (base, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (basefd < 0)
    return hv_error_set (err, errno, "audit trail directory %s", base);
  int fd = hv_mkdirs_beneath (basefd, dirs, 0700, owned, err);
  if (fd < 0)
    return hv_error_wrap (err, "audit trail %s", *path);
  return fd;
}

/* Open (create) the trail; a trail this create made is noted in m, so
 * that a failed create leaves no empty file behind. */
static int
open_trail (const char *id, const char *request, struct hv_monitor *m, hv_error **err)
{
  cleanup_free char *path = NULL, *name = NULL;
  cleanup_close int dirfd = open_trail_dir (id, request, &path, &name, err);
  if (dirfd < 0)
    return -1;
  /* O_NOFOLLOW: the trail is ours, never a link planted in its place;
   * O_NONBLOCK: a FIFO planted there cannot hold create. */
  int flags = O_WRONLY | O_APPEND | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC;
  bool created = true;
  cleanup_close int fd = openat (dirfd, name, flags | O_CREAT | O_EXCL, 0600);
  if (fd < 0 && errno == EEXIST)
    {
      created = false;
      fd = openat (dirfd, name, flags);
    }
  if (fd < 0)
    return hv_error_set (err, errno, "open audit trail %s", path);
  struct stat st;
  if (fstat (fd, &st) < 0 || !S_ISREG (st.st_mode))
    return hv_error_set (err, 0, "audit trail %s is not a regular file", path);
  if (fcntl (fd, F_SETFL, O_APPEND) < 0)
    return hv_error_set (err, errno, "audit trail %s", path);
  if (created)
    {
      m->trail_dir = steal_fd (&dirfd);
      m->trail_name = steal_pointer (&name);
    }
  return steal_fd (&fd);
}

/* Move the monitor's fds to 3, 4, 5, ... (in *fds' order) and close every
 * other fd: nothing of the runtime's (the engine's pipes, init's sync
 * socket, namespace fds) stays open in a process that outlives it. */
static void
keep_only (int *fds, size_t n)
{
  int devnull = open ("/dev/null", O_RDWR | O_CLOEXEC);
  for (int i = 0; i < 3 && devnull >= 0; i++)
    dup2 (devnull, i);
  /* Above every target first, so that no dup2 lands on a kept fd. */
  for (size_t i = 0; i < n; i++)
    if (fds[i] >= 0)
      fds[i] = fcntl (fds[i], F_DUPFD_CLOEXEC, 64);
  for (size_t i = 0; i < n; i++)
    if (fds[i] >= 0)
      {
        dup3 (fds[i], 3 + (int) i, O_CLOEXEC);
        fds[i] = 3 + (int) i;
      }
    else
      close (3 + (int) i);
  syscall (SYS_close_range, 3 + (unsigned) n, ~0U, 0);
}

/* The first child: a session of its own, then the monitor as its child,
 * which init (or the engine's subreaper) inherits once we exit. */
static void __attribute__ ((noreturn))
detach_monitor (struct hv_monitor_args *a)
{
  if (setsid () < 0)
    _exit (1);
  pid_t pid = fork ();
  if (pid != 0)
    _exit (pid < 0 ? 1 : 0);
  /* Not dumpable: a process of the same uid (a rootless container's)
   * cannot ptrace it or take its notify fds through /proc. */
  prctl (PR_SET_DUMPABLE, 0, 0, 0, 0);
  prctl (PR_SET_NAME, "haven-monitor", 0, 0, 0);
  if (chdir ("/") < 0)
    _exit (1);
  umask (077);
  int fds[6] = { a->control_fd, a->trail_fd, a->listen_fd, a->notice_fd,
                 a->git_broker ? hv_git_broker_fd (a->git_broker) : -1,
                 a->ssh_view ? hv_ssh_agent_service_fd (a->ssh_view) : -1 };
  keep_only (fds, 6);
  if (a->ssh_view)
    hv_ssh_agent_service_set_fd (a->ssh_view, fds[5]);
  a->control_fd = fds[0];
  a->trail_fd = fds[1];
  a->listen_fd = fds[2];
  a->notice_fd = fds[3];
  if (a->git_broker)
    hv_git_broker_set_fd (a->git_broker, fds[4]);
  /* The live git check's watches, before create goes on to make init. */
  a->git_watch = hv_monitor_git_new (a->git_guards, a->n_git_guards);
  /* The gateway's trust store is read now, from the environment the
   * runtime gave us: one that cannot be read fails create. */
  if (a->gateway)
    {
      hv_error *err = NULL;
      a->gateway_live = hv_monitor_gateway_new (a->gateway, a->gateway_keys, &err);
      if (a->gateway_live == NULL)
        {
          hv_sync_send_error (a->control_fd, err);
          _exit (1);
        }
    }
  int self = (int) syscall (SYS_pidfd_open, getpid (), 0);
  char pid_text[32];
  snprintf (pid_text, sizeof (pid_text), "%d", getpid ());
  if (self < 0 || hv_sync_send (a->control_fd, HV_SYNC_READY, pid_text, strlen (pid_text), self, NULL) < 0)
    _exit (1);
  close (self);
  /* The monitor is a copy of create and lives as long as the container:
   * the heap create had freed by now would stay resident in it (about 70
   * KiB a monitor, two monitors a Kubernetes pod); give those pages back. */
  malloc_trim (0);
  hv_monitor_main (a);
}

static int
save_pid (const char *dir, pid_t pid, hv_error **err)
{
  unsigned long long start = 0;
  if (proc_start_time (pid, &start, NULL) < 0 || start == 0)
    return hv_error_set (err, 0, "the audit monitor exited at start");
  char text[64];
  int n = snprintf (text, sizeof (text), "%d %llu\n", pid, start);
  return write_file_atomic (dir, HV_MONITOR_PID_FILE, text, (size_t) n, err);
}

/* Fork the monitor; on success m holds a pidfd of it and the control socket. */
static int
spawn_monitor (struct hv_monitor_args *a, const char *dir, struct hv_monitor *m, hv_error **err)
{
  int ctl[2];
  if (socketpair (AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, ctl) < 0)
    return hv_error_set (err, errno, "audit monitor: socketpair");
  pid_t child = fork ();
  if (child == 0)
    {
      close (ctl[0]);
      a->control_fd = ctl[1];
      detach_monitor (a);
    }
  close (ctl[1]);
  m->control = ctl[0];
  int status = 0;
  if (child < 0)
    return hv_error_set (err, errno, "audit monitor: fork");
  while (waitpid (child, &status, 0) < 0 && errno == EINTR)
    ;
  enum hv_sync_type type = HV_SYNC_GO;
  cleanup_free char *payload = NULL;
  int pidfd = -1;
  if (!WIFEXITED (status) || WEXITSTATUS (status) != 0
      || hv_sync_recv (m->control, &type, &payload, &pidfd, err) < 0 || type != HV_SYNC_READY || pidfd < 0)
    {
      if (pidfd >= 0)
        close (pidfd);
      /* It said why (the gateway's trust store). */
      if (*err == NULL && type == HV_SYNC_ERROR && payload)
        return hv_sync_error (payload, err);
      return hv_error_set (err, 0, "the audit monitor did not start");
    }
  m->pidfd = pidfd;
  return save_pid (dir, (pid_t) atoi (payload), err);
}

/* The host file an engine binds on /etc/resolv.conf (the last mount
 * there wins, as it is mounted last), or NULL. */
static const char *
bound_resolv_conf (const oci_spec *spec)
{
  const char *source = NULL;
  for (size_t i = 0; i < spec->n_mounts; i++)
    {
      const oci_mount *mt = &spec->mounts[i];
      if (mt->destination == NULL || strcmp (mt->destination, "/etc/resolv.conf") != 0)
        continue;
      bool bind = mt->type && strcmp (mt->type, "bind") == 0;
      for (size_t j = 0; j < mt->options.n; j++)
        bind = bind || strcmp (mt->options.v[j], "bind") == 0 || strcmp (mt->options.v[j], "rbind") == 0;
      source = bind && mt->source && mt->source[0] == '/' ? mt->source : NULL;
    }
  return source;
}

static bool
own_pid_namespace (const oci_spec *spec)
{
  const oci_namespace *ns = oci_spec_find_namespace (spec, CLONE_NEWPID);
  return ns && ns->path == NULL;
}

struct git_guards
{
  hv_project_guard **v;
  size_t n;
};

static void
git_guards_free (struct git_guards *gs)
{
  for (size_t i = 0; i < gs->n; i++)
    hv_project_guard_free (gs->v[i]);
  free (gs->v);
  gs->v = NULL;
  gs->n = 0;
}

/* What git would execute in each project, before init exists (so before
 * anything of the container's has run).  A project that cannot be
 * recorded fails create: a container whose check would be missing does
 * not start. */
static int
snapshot_projects (const char *list, struct git_guards *gs, hv_error **err)
{
  cleanup_free char *copy = xstrdup (list);
  char *save = NULL;
  for (char *dir = strtok_r (copy, "\n", &save); dir; dir = strtok_r (NULL, "\n", &save))
    {
      if (dir[0] != '/')
        return hv_error_set (err, 0, "config.json: .annotations[\"%s\"]: \"%s\" is not an absolute path",
                             HV_GIT_GUARD_ANNOTATION, dir);
      cleanup_free char *real = realpath (dir, NULL);
      if (real == NULL)
        return hv_error_set (err, errno, "config.json: .annotations[\"%s\"]: %s", HV_GIT_GUARD_ANNOTATION, dir);
      /* The policy filter's walk, when it made one in this create. */
      hv_project_guard *g = hv_project_guard_take (real);
      if (g == NULL && hv_project_guard_snapshot_with_dirs (real, &g, err) < 0)
        return -1;
      gs->v = xrealloc (gs->v, (gs->n + 1) * sizeof (*gs->v));
      gs->v[gs->n++] = g;
    }
  return 0;
}

int
hv_monitor_start (const struct hv_monitor_target *c, const oci_spec *spec, int egress_trail_fd, int notice_fd,
                  struct hv_monitor *m, hv_error **err)
{
  const char *request = hv_monitor_trail_request (spec);
  /* Egress needs the monitor for its resolver, trail or not. */
  bool egress = oci_kv_get (&spec->annotations, HV_EGRESS_ANNOTATION) != NULL;
  /* haven run's trail with Landlock's refusals in it: the monitor reads
   * them from the kernel's audit (landlock_audit.h). */
  const char *landlock_audit = oci_kv_get (&spec->annotations, HV_LANDLOCK_AUDIT_ANNOTATION);
  bool ll_borrowed = request == NULL && landlock_audit && egress_trail_fd > 2;
  const char *git_guard = oci_kv_get (&spec->annotations, HV_GIT_GUARD_ANNOTATION);
  if (git_guard && request == NULL)
    return hv_error_set (err, 0, "config.json: .annotations[\"%s\"] needs the per-container monitor (.annotations[\"%s\"])",
                         HV_GIT_GUARD_ANNOTATION, HV_MONITOR_ANNOTATION);
  /* The gateway is served by the monitor, trail or not. */
  bool gateway = c->gateway != NULL;
  /* The restricted ssh-agent view: its socket is bound here, in create,
   * so that a directory or agent it cannot have fails create.  Create's
   * copy (its socket) goes when this returns: the monitor has its own. */
  cleanup_ssh_agent_service hv_ssh_agent_service *ssh_view = NULL;
  if (hv_ssh_agent_service_prepare (spec, &ssh_view, err) < 0)
    return -1;
  /* The git credential broker: its socket is bound here, in create, so
   * that a directory or secret it cannot have fails create. */
  hv_git_broker *broker = NULL;
  if (hv_git_broker_prepare (spec, c->service_secrets, c->n_service_secrets, &broker, err) < 0)
    return -1;
  if (request == NULL && !egress && !ll_borrowed && !gateway && broker == NULL && ssh_view == NULL)
    return 0;
  /* A pod's container: its records name the pod, so that a node's log
   * collector and haven audit find them by pod (the trail's name is
   * only the container's id). */
  hv_pod_identity pod_id;
  if (hv_pod_identity_read (spec, "config.json", &pod_id, err) < 0)
    {
      hv_git_broker_free (broker);
      return hv_error_wrap (err, "audit monitor");
    }
  struct hv_audit_pod pod = { .pod_namespace = pod_id.pod_namespace, .name = pod_id.pod_name,
                              .uid = pod_id.pod_uid, .container = pod_id.container_name };
  struct git_guards guards = { 0 };
  if (git_guard && snapshot_projects (git_guard, &guards, err) < 0)
    {
      git_guards_free (&guards);
      hv_git_broker_free (broker);
      return -1;
    }
  /* Create's copy of the broker (its secrets, its socket) goes when this
   * returns: the monitor has its own, by fork. */
  cleanup_git_broker hv_git_broker *broker_copy = broker;
  cleanup_close int trail = request ? open_trail (c->id, request, m, err) : -1;
  if (request && trail < 0)
    {
      git_guards_free (&guards);
      return -1;
    }
  /* haven run's own trail: a copy, which the monitor writes records to
   * as the session does (O_APPEND, one write per record). */
  bool borrowed = request == NULL && (egress || ll_borrowed || gateway || broker || ssh_view) && egress_trail_fd > 2;
  if (borrowed && (trail = fcntl (egress_trail_fd, F_DUPFD_CLOEXEC, 3)) < 0)
    {
      git_guards_free (&guards);
      return hv_error_set (err, errno, "audit monitor: the run's trail");
    }
  /* The line about the first refused name (egress_notice.h): a copy of
   * haven run's fd, used by nothing but the egress side. */
  cleanup_close int notice = -1;
  if (egress && notice_fd > 2 && (notice = fcntl (notice_fd, F_DUPFD_CLOEXEC, 3)) < 0)
    return hv_error_set (err, errno, "audit monitor: the run's notice fd");
  cleanup_free char *sock = xasprintf ("%s/%s", c->dir, HV_MONITOR_SOCKET);
  cleanup_close int listen_fd = -1;
  if (request && spec->linux_cfg.seccomp.present)
    {
      listen_fd = hv_unix_listen (sock, 16, err);
      if (listen_fd < 0)
        return hv_error_wrap (err, "audit monitor");
    }
  const char *policy = spec->linux_cfg.seccomp.listener_metadata;
  /* The records' run id: haven run's or the service sandbox's, whose
   * session writes the same in its own records; an engine container's
   * trail is its own, and so is its id, made here. */
  char own_run[HV_AUDIT_RUN_ID_SIZE];
  const char *run = borrowed ? c->run : NULL;
  if (request)
    {
      hv_audit_run_id (own_run);
      run = own_run;
    }
  unsigned timeout_s;
  if (monitor_timeout (spec, "config.json", &timeout_s, err) < 0)
    return -1;
  struct hv_monitor_args a = { .id = c->id, .policy = policy ? policy : "",
                               .pod = pod_id.role != HV_POD_NONE ? &pod : NULL, .bundle = c->bundle, .socket_path = sock,
                               .command = &spec->process.args, .listen_fd = listen_fd, .control_fd = -1,
                               .trail_fd = trail, .timeout_s = timeout_s,
                               .resolv_conf = egress ? bound_resolv_conf (spec) : NULL,
                               .ask = egress ? oci_kv_get (&spec->annotations, HV_ASK_ANNOTATION) : NULL,
                               .borrowed_trail = borrowed, .sandbox = borrowed ? c->sandbox : NULL,
                               .run = run,
                               .notice_fd = notice,
                               .landlock_audit = trail >= 0 ? landlock_audit : NULL,
                               /* haven run's and a service's only: the view's
                                * directory it names is written as the monitor
                                * (root for an engine), and an engine's config
                                * is its user's to write. */
                               .denials = borrowed ? oci_kv_get (&spec->annotations, HV_DENIALS_ANNOTATION) : NULL,
                               .git_guards = guards.v, .n_git_guards = guards.n,
                               .gateway = c->gateway, .gateway_keys = c->gateway_keys,
                               .check_after_delete = !own_pid_namespace (spec), .git_broker = broker,
                               .ssh_view = ssh_view };
  int r = spawn_monitor (&a, c->dir, m, err);
  /* The monitor has its copy (fork); create's goes. */
  git_guards_free (&guards);
  if (r < 0)
    {
      hv_monitor_release (m, true);
      return hv_error_wrap (err, "audit monitor");
    }
  return 0;
}

/* One fd, taken from *fd (closed here once sent, whatever happens), and
 * what it is. */
static int
pass_fd (struct hv_monitor *m, const char *what, const char *text, int *fd, hv_error **err)
{
  cleanup_close int ours = hv_egress_fd_take (fd);
  cleanup_free char *payload = xasprintf ("%s%s%s", what, text ? " " : "", text ? text : "");
  return ours >= 0 ? hv_sync_send (m->control, HV_SYNC_EGRESS, payload, strlen (payload), ours, err) : 0;
}

int
hv_monitor_pass_egress (struct hv_monitor *m, struct hv_egress_sandbox *s, hv_error **err)
{
  if (m->control < 0)
    return hv_error_set (err, 0, "egress: the per-container monitor did not start");
  /* The namespace first, with the annotation: the monitor needs both
   * before it can use the sockets. */
  /* What is not passed stays in s->fds, for hv_egress_sandbox_release. */
  if (pass_fd (m, "netns", s->text, &s->fds.netns, err) < 0)
    return hv_error_wrap (err, "egress: hand the resolver's sockets to the monitor");
  /* The table's socket is a copy: create keeps its handle to delete the
   * table if it fails later.  It and the denial listener's were made in
   * the sandbox's namespace, so the monitor never has to enter it (which
   * a rootless one could not). */
  if (s->table && (s->fds.nft = fcntl (hv_egress_table_fd (s->table), F_DUPFD_CLOEXEC, 3)) < 0)
    return hv_error_set (err, errno, "egress: copy the table's socket");
  for (unsigned i = 0; i < HV_EGRESS_N_SOCKETS; i++)
    if (pass_fd (m, hv_egress_socket_names[i], NULL, hv_egress_fds_socket (&s->fds, i), err) < 0)
      return hv_error_wrap (err, i < HV_EGRESS_N_RESOLVER_SOCKETS ? "egress: hand the resolver's sockets to the monitor"
                                       : "egress: hand the table's and the denial listener's sockets to the monitor");
  return 0;
}

int
hv_monitor_pass_gateway (struct hv_monitor *m, const char *name, int *fd, hv_error **err)
{
  if (m->control < 0)
    {
      int ours = hv_egress_fd_take (fd);
      if (ours >= 0)
        close (ours);
      return hv_error_set (err, 0, "model API gateway: the per-container monitor did not start");
    }
  if (pass_fd (m, "gateway", name, fd, err) < 0)
    return hv_error_wrap (err, "model API gateway: hand the %s listener to the monitor", name);
  return 0;
}

int
hv_monitor_attach_init (struct hv_monitor *m, pid_t pid, unsigned long long start_time, hv_error **err)
{
  if (m->control < 0)
    return 0;
  /* The pidfd is init's if init still has the start time create saw
   * after it was opened (a reused pid would not). */
  cleanup_close int pidfd = (int) syscall (SYS_pidfd_open, pid, 0);
  unsigned long long now = 0;
  if (pidfd < 0 || proc_start_time (pid, &now, NULL) < 0 || now != start_time)
    return hv_error_set (err, 0, "audit monitor: container init exited during create");
  char text[32];
  snprintf (text, sizeof (text), "%d", pid);
  if (hv_sync_send (m->control, HV_SYNC_GO, text, strlen (text), pidfd, err) < 0)
    return hv_error_wrap (err, "audit monitor");
  return 0;
}

void
hv_monitor_release (struct hv_monitor *m, bool abort)
{
  if (m->control >= 0)
    close (m->control);
  m->control = -1;
  if (abort && m->pidfd >= 0)
    syscall (SYS_pidfd_send_signal, m->pidfd, SIGKILL, NULL, 0);
  if (m->pidfd >= 0)
    close (m->pidfd);
  m->pidfd = -1;
  /* A trail this create made, still empty (nothing ran): not left behind. */
  struct stat st;
  if (abort && m->trail_dir >= 0 && fstatat (m->trail_dir, m->trail_name, &st, AT_SYMLINK_NOFOLLOW) == 0
      && S_ISREG (st.st_mode) && st.st_size == 0)
    unlinkat (m->trail_dir, m->trail_name, 0);
  if (m->trail_dir >= 0)
    close (m->trail_dir);
  m->trail_dir = -1;
  free (m->trail_name);
  m->trail_name = NULL;
}

/* Until pidfd's process is gone, at most ms milliseconds. */
static bool
wait_gone (int pidfd, int ms)
{
  struct pollfd p = { .fd = pidfd, .events = POLLIN };
  int r;
  do
    r = poll (&p, 1, ms);
  while (r < 0 && errno == EINTR);
  return r > 0;
}

int
hv_monitor_stop (const char *dir, hv_error **err)
{
  cleanup_close int dirfd = open (dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  cleanup_free char *text = NULL;
  if (dirfd < 0 || read_file_at (dirfd, HV_MONITOR_PID_FILE, &text, NULL) < 0)
    return 0; /* no monitor was started */
  pid_t pid = 0;
  unsigned long long start = 0, now = 0;
  if (sscanf (text, "%d %llu", &pid, &start) != 2 || pid <= 0)
    return hv_error_set (err, 0, "%s/%s: not a pid and start time", dir, HV_MONITOR_PID_FILE);
  /* Opened first, then checked: a pidfd of a process that still has the
   * recorded start time is the monitor's, never a reused pid's. */
  cleanup_close int pidfd = (int) syscall (SYS_pidfd_open, pid, 0);
  if (pidfd < 0 || proc_start_time (pid, &now, NULL) < 0 || now != start)
    return 0; /* it has exited (init died, or it was killed) */
  syscall (SYS_pidfd_send_signal, pidfd, SIGTERM, NULL, 0);
  /* Its git check (run.haven.git-guard) walks the projects before it
   * exits: waited for, so that the engine reports the container gone only
   * once what it left for git is in quarantine. */
  if (wait_gone (pidfd, HV_MONITOR_CHECK_WAIT_S * 1000))
    return 0;
  syscall (SYS_pidfd_send_signal, pidfd, SIGKILL, NULL, 0);
  if (wait_gone (pidfd, 3000))
    return 0;
  return hv_error_set (err, 0, "the audit monitor (pid %d) did not exit", pid);
}
