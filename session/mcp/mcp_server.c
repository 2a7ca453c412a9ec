/* `haven mcp`: the service found (or a private one started), the one
 * sandbox made on a held connection before anything is read from the
 * client, then one poll loop over: the client's lines (stdin), the
 * calls in flight (a connection each), the held connection (it closes
 * when the sandbox is gone), the answers waiting for stdout, and a
 * signal pipe.  stdout carries the protocol and nothing else; what this
 * process has to say goes to stderr. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <yajl/yajl_gen.h>
#include <yajl/yajl_tree.h>

#include "json_gen.h"
#include "json_walk.h"
#include "mcp_proto.h"
#include "mcp_server.h"
#include "mcp_session.h"
#include "mcp_tools.h"
#include "policy.h"
#include "policy_load.h"
#include "svc_client.h"
#include "utils.h"

/* At the end, how long answers already made may take to go out, and
 * how long the sandbox's DELETE may take. */
#define FLUSH_MS 2000
#define DELETE_MS 30000
/* The reads of stdin. */
#define READ_CHUNK 65536

static int signal_pipe[2] = { -1, -1 };

static void
on_signal (int sig)
{
  (void) sig;
  int saved = errno;
  char c = 1;
  /* Non-blocking: a full pipe already says it. */
  if (write (signal_pipe[1], &c, 1) < 0)
    {
    }
  errno = saved;
}

static int
signals_setup (void)
{
  if (pipe2 (signal_pipe, O_CLOEXEC | O_NONBLOCK) < 0)
    return -1;
  struct sigaction sa = { .sa_handler = on_signal };
  sigemptyset (&sa.sa_mask);
  /* No SA_RESTART: poll returns at once, and so does a blocked write. */
  sigaction (SIGTERM, &sa, NULL);
  sigaction (SIGINT, &sa, NULL);
  struct sigaction ign = { .sa_handler = SIG_IGN };
  sigemptyset (&ign.sa_mask);
  /* A client gone before its answers: EPIPE, an ordinary end. */
  sigaction (SIGPIPE, &ign, NULL);
  return 0;
}

/* A few words on what the policy allows, for the tools' descriptions:
 * from the policy file as this user loads it (the service loads the same
 * one); NULL when it does not load here (the service then says why). */
static char *
policy_about (const char *policy)
{
  cleanup_policy hv_policy *p = NULL;
  cleanup_error hv_error *err = NULL;
  if (hv_policy_load (policy, &p, &err) < 0)
    return NULL;
  cleanup_free char *net = NULL;
  switch (p->net_mode)
    {
    case HV_NET_NONE:
      net = xstrdup ("no network");
      break;
    case HV_NET_OPEN:
      net = xstrdup ("the host's network");
      break;
    case HV_NET_ALLOWLIST:
      {
        /* The entries as written, once each (a name is two rules). */
        net = xstrdup ("network only to");
        size_t shown = 0;
        for (size_t i = 0; i < p->net_allow.n; i++)
          {
            const char *e = p->net_allow.v[i].entry;
            bool seen = e == NULL;
            for (size_t j = 0; j < i && !seen; j++)
              seen = p->net_allow.v[j].entry && strcmp (p->net_allow.v[j].entry, e) == 0;
            if (seen)
              continue;
            char *n = shown < 12 ? xasprintf ("%s%s %s", net, shown ? "," : "", e) : xasprintf ("%s, ...", net);
            free (net);
            net = n;
            if (++shown > 12)
              break;
          }
        if (shown == 0)
          {
            free (net);
            net = xstrdup ("no network");
          }
        break;
      }
    case HV_NET_UNSET:
      break;
    }
  const char *shell = p->block_shell.value ? "no shell" : NULL;
  if (net && shell)
    return xasprintf ("%s; %s", net, shell);
  return net ? steal_pointer (&net) : shell ? xstrdup (shell) : NULL;
}

/* The create request: the policy and project as the service takes them
 * (absolute: the service's working directory is not this one's). */
static char *
create_body (const struct hv_mcp_opts *o, hv_error **err)
{
  cleanup_free char *policy = NULL, *project = NULL;
  bool is_file = strchr (o->policy, '/') || o->policy[0] == '.' || strstr (o->policy, ".yaml");
  if (is_file && o->policy[0] != '/' && (policy = realpath (o->policy, NULL)) == NULL)
    {
      hv_error_set (err, errno, "--policy %s", o->policy);
      return NULL;
    }
  if (o->project && (project = realpath (o->project, NULL)) == NULL)
    {
      hv_error_set (err, errno, "--project %s", o->project);
      return NULL;
    }
  yajl_gen g = yajl_gen_alloc (NULL);
  yajl_gen_map_open (g);
  jg_kv_utf8 (g, "policy", policy ? policy : o->policy);
  if (project)
    jg_kv_utf8 (g, "project", project);
  jg_str (g, "destroy_on_disconnect");
  yajl_gen_bool (g, 1);
  /* The session, not idleness, decides the sandbox's end: an agent may
   * think for long between calls. */
  jg_str (g, "idle_timeout_s");
  yajl_gen_integer (g, 86400);
  yajl_gen_map_close (g);
  return jg_finish (g);
}

struct server
{
  const struct hv_mcp_opts *o;
  struct hv_svc_endpoint endpoint;
  int held_fd;
  char *sandbox_json;
  yajl_val sandbox;
  const char *id;
  hv_mcp_tools *tools;
  hv_mcp_session *session;
  hv_mcp_reader *reader;
  bool stdin_done;
  bool stdout_broken;
  int stdout_flags;
};

/* The sandbox's JSON as the service answered the create. */
static int
sandbox_read (struct server *sv, struct hv_mcp_sandbox *sb, hv_error **err)
{
  json_walk w;
  jw_init (&w, "the service's sandbox", err);
  if (jw_parse (&w, sv->sandbox_json, &sv->sandbox) < 0 || jw_expect_object (&w, sv->sandbox) < 0
      || jw_member_string (&w, sv->sandbox, "id", true, &sb->id) < 0
      || jw_member_string (&w, sv->sandbox, "workspace", true, &sb->workspace) < 0
      || jw_member_string (&w, sv->sandbox, "policy", false, &sb->policy) < 0)
    return -1;
  yajl_val shell = jw_lookup (sv->sandbox, "shell");
  sb->shell = shell && YAJL_IS_TRUE (shell) ? 1 : shell && YAJL_IS_FALSE (shell) ? 0 : -1;
  if (sb->policy == NULL)
    sb->policy = sv->o->policy;
  sv->id = sb->id;
  return 0;
}

static void
write_output (struct server *sv)
{
  size_t len = 0;
  const char *out = hv_mcp_session_output (sv->session, &len);
  while (len > 0 && !sv->stdout_broken)
    {
      ssize_t n = write (STDOUT_FILENO, out, len);
      if (n < 0 && (errno == EAGAIN || errno == EINTR))
        return;
      if (n <= 0)
        {
          /* The client closed its end: nobody is left to answer. */
          sv->stdout_broken = true;
          return;
        }
      hv_mcp_session_output_consumed (sv->session, (size_t) n);
      out = hv_mcp_session_output (sv->session, &len);
    }
}

static void
read_input (struct server *sv)
{
  char buf[READ_CHUNK];
  ssize_t n = read (STDIN_FILENO, buf, sizeof (buf));
  if (n < 0 && (errno == EAGAIN || errno == EINTR))
    return;
  if (n > 0)
    hv_mcp_reader_feed (sv->reader, buf, (size_t) n);
  else
    hv_mcp_reader_eof (sv->reader);
  const char *line;
  size_t len;
  int r;
  while ((r = hv_mcp_reader_next (sv->reader, &line, &len)) > 0)
    hv_mcp_session_input (sv->session, line, len, r == 2);
  if (r < 0)
    sv->stdin_done = true;
}

static void
held_check (struct server *sv)
{
  char buf[512];
  ssize_t n = read (sv->held_fd, buf, sizeof (buf));
  if (n < 0 && (errno == EAGAIN || errno == EINTR))
    return;
  if (n > 0)
    return; /* the service says nothing more there; ignored */
  if (sv->o->verbose)
    fprintf (stderr, "haven mcp: the service closed sandbox %s's connection: the sandbox is gone\n", sv->id);
  hv_mcp_tools_sandbox_gone (sv->tools, "the sandbox service closed its connection: it stopped, or destroyed the "
                                        "sandbox");
  close (sv->held_fd);
  sv->held_fd = -1;
}

enum
{
  FD_SIGNAL,
  FD_STDIN,
  FD_HELD,
  FD_STDOUT,
  FD_CALLS
};

/* Until stdin ends, stdout breaks or a signal comes. */
static void
loop (struct server *sv)
{
  struct pollfd fds[FD_CALLS + HV_MCP_CALLS_MAX];
  while (!sv->stdin_done && !sv->stdout_broken)
    {
      size_t pending = 0;
      hv_mcp_session_output (sv->session, &pending);
      int timeout = -1;
      size_t n = hv_mcp_tools_pollfds (sv->tools, fds + FD_CALLS, HV_MCP_CALLS_MAX, &timeout);
      fds[FD_SIGNAL] = (struct pollfd) { .fd = signal_pipe[0], .events = POLLIN };
      /* Past the session's bound on answers the client has not read, its
       * requests wait (a client that only writes must not grow this
       * process without bound). */
      fds[FD_STDIN] = (struct pollfd) { .fd = hv_mcp_session_output_full (sv->session) ? -1 : STDIN_FILENO, .events = POLLIN };
      fds[FD_HELD] = (struct pollfd) { .fd = sv->held_fd, .events = POLLIN };
      fds[FD_STDOUT] = (struct pollfd) { .fd = pending ? STDOUT_FILENO : -1, .events = POLLOUT };
      if (poll (fds, FD_CALLS + n, timeout) < 0 && errno != EINTR)
        {
          fprintf (stderr, "haven mcp: poll: %s\n", strerror (errno));
          return;
        }
      if (fds[FD_SIGNAL].revents)
        {
          if (sv->o->verbose)
            fprintf (stderr, "haven mcp: signalled: ending\n");
          return;
        }
      if (fds[FD_HELD].fd >= 0 && fds[FD_HELD].revents)
        held_check (sv);
      if (fds[FD_STDIN].fd >= 0 && fds[FD_STDIN].revents)
        read_input (sv);
      hv_mcp_tools_progress (sv->tools);
      write_output (sv);
    }
}

/* Answers already made go out, for a bounded time. */
static void
flush_output (struct server *sv)
{
  struct timespec start, now;
  clock_gettime (CLOCK_MONOTONIC, &start);
  size_t pending = 0;
  while (!sv->stdout_broken && (hv_mcp_session_output (sv->session, &pending), pending > 0))
    {
      clock_gettime (CLOCK_MONOTONIC, &now);
      long spent = (now.tv_sec - start.tv_sec) * 1000 + (now.tv_nsec - start.tv_nsec) / 1000000;
      if (spent >= FLUSH_MS)
        return;
      struct pollfd p[2] = { { .fd = STDOUT_FILENO, .events = POLLOUT }, { .fd = signal_pipe[0], .events = POLLIN } };
      if (poll (p, 2, (int) (FLUSH_MS - spent)) <= 0 || p[1].revents)
        return;
      write_output (sv);
    }
}

static void
finish (struct server *sv)
{
  /* The runs in flight first (each connection closed: the service kills
   * its process group), then the sandbox itself. */
  if (sv->tools)
    hv_mcp_tools_cancel_all (sv->tools);
  if (sv->session)
    flush_output (sv);
  if (sv->held_fd >= 0 && sv->id)
    {
      cleanup_free char *target = xasprintf ("/v1/sandboxes/%s", sv->id);
      cleanup_free char *out = NULL;
      cleanup_error hv_error *err = NULL;
      size_t len = 0;
      int status = 0;
      if (hv_svc_request (&sv->endpoint, "DELETE", target, NULL, NULL, 0, DELETE_MS, &out, &len, &status, &err) < 0
          && sv->o->verbose)
        fprintf (stderr, "haven mcp: DELETE %s: %s\n", target, err->msg);
    }
  /* Closing the held connection ends the sandbox too, whatever the
   * DELETE did. */
  if (sv->held_fd >= 0)
    close (sv->held_fd);
  sv->held_fd = -1;
  if (sv->session)
    hv_mcp_session_free (sv->session);
  if (sv->tools)
    hv_mcp_tools_free (sv->tools);
  if (sv->reader)
    hv_mcp_reader_free (sv->reader);
  if (sv->sandbox)
    yajl_tree_free (sv->sandbox);
  free (sv->sandbox_json);
  hv_svc_endpoint_close (&sv->endpoint);
  if (sv->stdout_flags >= 0)
    fcntl (STDOUT_FILENO, F_SETFL, sv->stdout_flags);
}

int
hv_mcp_main (const struct hv_mcp_opts *o)
{
  struct server sv = { .o = o, .endpoint = HV_SVC_ENDPOINT_INIT, .held_fd = -1, .stdout_flags = -1 };
  cleanup_error hv_error *err = NULL;
  cleanup_free char *body = create_body (o, &err);
  if (body == NULL)
    {
      fprintf (stderr, "haven mcp: %s\n", err->msg);
      return HV_MCP_EXIT_START;
    }
  if (hv_svc_endpoint_open (o->haven_exe, o->socket, &sv.endpoint, &err) < 0)
    {
      fprintf (stderr, "haven mcp: the sandbox service: %s\n", err->msg);
      return HV_MCP_EXIT_START;
    }
  if (o->verbose)
    fprintf (stderr, "haven mcp: the sandbox service at %s%s\n", sv.endpoint.socket,
             sv.endpoint.private_pid ? " (started for this session)" : "");
  /* Only now: a private service started above must not inherit SIGPIPE
   * ignored (an ignored signal survives exec; a handled one does not). */
  if (signals_setup () < 0)
    {
      fprintf (stderr, "haven mcp: pipe: %s\n", strerror (errno));
      finish (&sv);
      return HV_MCP_EXIT_START;
    }
  /* The sandbox before the first message: a policy that does not load is
   * said at once (the service's message names FILE:LINE), never as an
   * error to the first call. */
  struct hv_mcp_sandbox sb = { 0 };
  if (hv_svc_create_held (&sv.endpoint, body, &sv.held_fd, &sv.sandbox_json, &err) < 0
      || sandbox_read (&sv, &sb, &err) < 0)
    {
      fprintf (stderr, "haven mcp: %s\n", err->msg);
      finish (&sv);
      return HV_MCP_EXIT_START;
    }
  cleanup_free char *about = policy_about (o->policy);
  sb.about = about;
  if (o->verbose)
    fprintf (stderr, "haven mcp: sandbox %s, policy \"%s\"%s%s%s, workspace %s\n", sb.id, sb.policy,
             about ? " (" : "", about ? about : "", about ? ")" : "", sb.workspace);

  struct hv_mcp_tools_conf tc = {
    .endpoint = &sv.endpoint, .sandbox = sb, .max_output = o->max_output, .timeout_s = o->timeout_s,
    .verbose = o->verbose,
  };
  sv.tools = hv_mcp_tools_new (&tc);
  struct hv_mcp_server_info info
      = { .name = "haven", .version = PACKAGE_VERSION, .instructions = hv_mcp_tools_instructions (sv.tools) };
  sv.session = hv_mcp_session_new (&info, &hv_mcp_tools_session_ops, sv.tools);
  hv_mcp_tools_set_session (sv.tools, sv.session);
  sv.reader = hv_mcp_reader_new (HV_MCP_LINE_MAX);
  /* Answers are written as stdout takes them: a client slow to read
   * must not stop the loop (the flags are put back at the end). */
  sv.stdout_flags = fcntl (STDOUT_FILENO, F_GETFL);
  if (sv.stdout_flags >= 0)
    fcntl (STDOUT_FILENO, F_SETFL, sv.stdout_flags | O_NONBLOCK);

  loop (&sv);
  if (o->verbose)
    fprintf (stderr, "haven mcp: ending: %zu calls in flight cancelled, sandbox %s %s\n",
             hv_mcp_tools_in_flight (sv.tools), sb.id, sv.held_fd >= 0 ? "destroyed" : "already gone");
  finish (&sv);
  return HV_MCP_EXIT_OK;
}
