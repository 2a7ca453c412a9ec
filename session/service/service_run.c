/* Commands in a sandbox: the keeper forks and executes them (keeper.h);
 * the service gives them pipes it made for their stdio, writes their
 * stdin, keeps their output up to max_output per stream (the rest is read
 * and dropped), kills their process group at the time limit or when the
 * client leaves, and answers with the result, or streams the output as
 * NDJSON chunks while they run. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "keeper.h"
#include "service_reply.h"
#include "service_run.h"
#include "utf8.h"
#include "utils.h"

static void
close_fd (int *fd)
{
  if (*fd >= 0)
    close (*fd);
  *fd = -1;
}

static size_t
request_size (const struct hv_api_run *req, const oci_strv *envp, const char *cwd)
{
  size_t n = cwd ? strlen (cwd) + 1 : 0;
  for (size_t i = 0; i < req->argv.n; i++)
    n += strlen (req->argv.v[i]) + 1;
  for (size_t i = 0; i < envp->n; i++)
    n += strlen (envp->v[i]) + 1;
  return n;
}

static int
nonblock (int fd)
{
  int fl = fcntl (fd, F_GETFL);
  return fl < 0 ? -1 : fcntl (fd, F_SETFL, fl | O_NONBLOCK);
}

void
svc_handle_run (struct svc *s, struct svc_conn *c, struct svc_sandbox *x)
{
  struct hv_api_run req = { 0 };
  cleanup_error hv_error *err = NULL;
  cleanup_strv oci_strv envp = { 0 };
  cleanup_free char *cwd = NULL;
  int in[2] = { -1, -1 }, out[2] = { -1, -1 }, errp[2] = { -1, -1 };
  if (hv_api_parse_run (c->body.data ? c->body.data : "", c->body.len, &req, &err) < 0)
    {
      svc_reply_error (c, 400, "bad_request", "%s", err->msg);
      goto out;
    }
  if (x->runs >= s->o->max_runs)
    {
      svc_reply_error (c, 429, "limit", "at most %u commands run at once in a sandbox (--max-runs)", s->o->max_runs);
      goto out;
    }
  if (hv_sandbox_command_env (x->sb, req.env.v, &envp, &err) < 0)
    {
      svc_reply_error (c, 403, "forbidden", "%s", err->msg);
      goto out;
    }
  /* The workspace is at the same path inside: a relative cwd is beneath it. */
  if (req.cwd == NULL)
    cwd = xstrdup (hv_sandbox_workspace (x->sb));
  else if (req.cwd[0] == '/')
    cwd = xstrdup (req.cwd);
  else
    cwd = xasprintf ("%s/%s", hv_sandbox_workspace (x->sb), req.cwd);
  if (request_size (&req, &envp, cwd) > HV_KEEPER_MAX_REQUEST - 1024)
    {
      svc_reply_error (c, 413, "too_large", "argv, environment and cwd together: at most %d bytes",
                       HV_KEEPER_MAX_REQUEST - 1024);
      goto out;
    }
  if (req.stdin_data)
    {
      if (pipe2 (in, O_CLOEXEC) < 0)
        goto sys;
    }
  else if ((in[0] = open ("/dev/null", O_RDONLY | O_CLOEXEC)) < 0)
    goto sys;
  if (pipe2 (out, O_CLOEXEC) < 0 || pipe2 (errp, O_CLOEXEC) < 0)
    goto sys;
  if ((in[1] >= 0 && nonblock (in[1]) < 0) || nonblock (out[0]) < 0 || nonblock (errp[0]) < 0)
    goto sys;
  uint32_t run_id = ++x->next_run_id;
  struct hv_keeper_spawn sp = { .run_id = run_id,
                                .argv = req.argv.v,
                                .envp = envp.v,
                                .cwd = cwd,
                                .stdio = { in[0], out[1], errp[1] } };
  if (hv_keeper_spawn (hv_sandbox_keeper_fd (x->sb), &sp, &err) < 0)
    {
      svc_log (s, false, "sandbox %s: run: %s", x->id, err->msg);
      svc_reply_error (c, 500, "internal", "%s", err->msg);
      goto out;
    }
  close_fd (&in[0]);
  close_fd (&out[1]);
  close_fd (&errp[1]);
  struct svc_run *r = xmalloc0 (sizeof (*r));
  r->sb = x;
  r->conn = c;
  r->run_id = run_id;
  r->in_fd = in[1];
  r->out_fd = out[0];
  r->err_fd = errp[0];
  in[1] = out[0] = errp[0] = -1;
  r->stdin_data = steal_pointer (&req.stdin_data);
  r->stdin_len = req.stdin_len;
  uint64_t max = req.max_output ? req.max_output : HV_SERVICE_DEFAULT_RUN_OUTPUT;
  r->max_output = max > s->o->max_output ? s->o->max_output : max;
  r->stream = req.stream;
  r->start_ms = svc_now_ms ();
  /* The policy's own time limit bounds every command, as it bounds
   * haven run's: a request asks for less, never for more. */
  uint64_t limit_s = req.timeout_s ? req.timeout_s : HV_SERVICE_DEFAULT_RUN_TIMEOUT_S;
  unsigned policy_s = hv_sandbox_timeout_s (x->sb);
  if (policy_s && limit_s > policy_s)
    limit_s = policy_s;
  r->deadline_ms = r->start_ms + limit_s * 1000;
  for (size_t i = 0; i < req.argv.n; i++)
    oci_strv_push (&r->argv, req.argv.v[i]);
  if (r->stdin_len == 0)
    close_fd (&r->in_fd);
  r->next = s->runs;
  s->runs = r;
  x->runs++;
  c->run = r;
  svc_log (s, true, "sandbox %s: run %u: %s", x->id, run_id, r->argv.v[0]);
  if (r->stream)
    {
      static const char head[] = "HTTP/1.1 200 OK\r\nContent-Type: application/x-ndjson\r\n"
                                 "Transfer-Encoding: chunked\r\n";
      svc_buf_add (&c->out, head, sizeof (head) - 1);
      if (!c->keep_alive)
        svc_buf_add (&c->out, "Connection: close\r\n", 19);
      svc_buf_add (&c->out, "\r\n", 2);
    }
  goto out;
sys:
  svc_reply_error (c, 500, "internal", "run: %s", strerror (errno));
out:
  close_fd (&in[0]);
  close_fd (&in[1]);
  close_fd (&out[0]);
  close_fd (&out[1]);
  close_fd (&errp[0]);
  close_fd (&errp[1]);
  hv_api_run_free (&req);
}

/* One streamed line of a run's output: the bytes held back from the
 * read before (tail) and data, less the start of a character the next
 * read may complete, which is held back in its turn (all of it when
 * flush: the stream's end). */
static void
stream_out (struct svc_run *r, const char *name, char *tail, size_t *tail_len, const char *data, size_t len,
            bool flush)
{
  cleanup_free char *joined = xmalloc0 (*tail_len + len + 1);
  memcpy (joined, tail, *tail_len);
  if (len)
    memcpy (joined + *tail_len, data, len);
  size_t total = *tail_len + len;
  size_t hold = flush ? 0 : hv_utf8_partial_tail (joined, total);
  *tail_len = hold;
  memcpy (tail, joined + total - hold, hold);
  if (total - hold == 0 || r->conn == NULL)
    return;
  cleanup_free char *line = hv_api_stream_line (name, joined, total - hold);
  svc_chunk (r->conn, line, strlen (line));
}

/* Read what a pipe holds now (until EAGAIN or its end). */
static void
read_pipe (struct svc_run *r, int *fd, struct svc_buf *keep, bool *trunc, const char *name)
{
  bool is_out = fd == &r->out_fd;
  char *tail = is_out ? r->out_tail : r->err_tail;
  size_t *tail_len = is_out ? &r->out_tail_len : &r->err_tail_len;
  char buf[65536];
  for (;;)
    {
      ssize_t n = read (*fd, buf, sizeof (buf));
      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
        return;
      if (n <= 0)
        {
          if (r->stream)
            stream_out (r, name, tail, tail_len, NULL, 0, true);
          close_fd (fd);
          return;
        }
      size_t room = keep->len < r->max_output ? (size_t) (r->max_output - keep->len) : 0;
      size_t take = (size_t) n < room ? (size_t) n : room;
      if (take < (size_t) n)
        *trunc = true;
      if (take == 0)
        continue;
      if (r->stream)
        {
          /* Counted against max_output as kept output is, sent at once. */
          keep->len += take;
          stream_out (r, name, tail, tail_len, buf, take, false);
        }
      else
        svc_buf_add (keep, buf, take);
    }
}

static void
write_stdin (struct svc_run *r)
{
  while (r->in_fd >= 0 && r->stdin_off < r->stdin_len)
    {
      ssize_t w = write (r->in_fd, r->stdin_data + r->stdin_off, r->stdin_len - r->stdin_off);
      if (w < 0 && errno == EINTR)
        continue;
      if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
        return;
      if (w <= 0)
        break; /* EPIPE: it stopped reading */
      r->stdin_off += (size_t) w;
    }
  close_fd (&r->in_fd);
}

void
svc_run_io (struct svc *s, struct svc_run *r, int fd, short revents)
{
  (void) revents;
  if (fd == r->in_fd)
    write_stdin (r);
  else if (fd == r->out_fd)
    read_pipe (r, &r->out_fd, &r->out, &r->out_trunc, "stdout");
  else if (fd == r->err_fd)
    read_pipe (r, &r->err_fd, &r->err, &r->err_trunc, "stderr");
  if (r->conn)
    svc_conn_output (s, r->conn);
}

static void
answer (struct svc *s, struct svc_run *r)
{
  struct svc_conn *c = r->conn;
  r->conn = NULL;
  r->done = true;
  if (c == NULL)
    return;
  struct hv_api_run_result res = { .exit_code = r->timed_out ? 124 : r->status,
                                   .timed_out = r->timed_out,
                                   .duration_s = (double) (svc_now_ms () - r->start_ms) / 1000.0,
                                   .stdout_data = r->stream ? "" : (r->out.data ? r->out.data : ""),
                                   .stdout_len = r->stream ? 0 : r->out.len,
                                   .stderr_data = r->stream ? "" : (r->err.data ? r->err.data : ""),
                                   .stderr_len = r->stream ? 0 : r->err.len,
                                   .stdout_truncated = r->out_trunc,
                                   .stderr_truncated = r->err_trunc };
  cleanup_free char *json = hv_api_run_result_json (&res);
  if (r->stream)
    {
      cleanup_free char *line = xasprintf ("%s\n", json);
      svc_chunk (c, line, strlen (line));
      svc_chunk (c, "", 0);
    }
  else
    svc_reply (c, 200, "application/json", json, strlen (json));
  svc_request_done (s, c);
}

static void
finished (struct svc *s, struct svc_run *r, int status)
{
  r->exited = true;
  r->status = status;
  /* What it wrote before it exited is in the pipes: read it, then stop
   * (a background process holding them open does not hold the answer). */
  if (r->out_fd >= 0)
    read_pipe (r, &r->out_fd, &r->out, &r->out_trunc, "stdout");
  if (r->err_fd >= 0)
    read_pipe (r, &r->err_fd, &r->err, &r->err_trunc, "stderr");
  if (r->stream)
    {
      /* What was held back of a character never completed. */
      stream_out (r, "stdout", r->out_tail, &r->out_tail_len, NULL, 0, true);
      stream_out (r, "stderr", r->err_tail, &r->err_tail_len, NULL, 0, true);
    }
  close_fd (&r->out_fd);
  close_fd (&r->err_fd);
  close_fd (&r->in_fd);
  struct svc_sandbox *x = r->sb;
  if (x)
    {
      x->runs--;
      x->active_ms = svc_now_ms ();
      hv_sandbox_trail_command (x->sb, r->run_id, r->argv.v, r->timed_out ? 124 : status);
      svc_log (s, true, "sandbox %s: run %u exited %d%s", x->id, r->run_id, r->timed_out ? 124 : status,
               r->timed_out ? " (time limit)" : "");
    }
  answer (s, r);
}

bool
svc_run_exited (struct svc *s, struct svc_sandbox *x, uint32_t run_id, int status)
{
  for (struct svc_run *r = s->runs; r; r = r->next)
    if (r->sb == x && r->run_id == run_id && !r->exited)
      {
        finished (s, r, status);
        return true;
      }
  return false;
}

static void
kill_run (struct svc *s, struct svc_run *r)
{
  if (r->killed || r->exited || r->sb == NULL)
    return;
  r->killed = true;
  cleanup_error hv_error *err = NULL;
  if (hv_keeper_signal (hv_sandbox_keeper_fd (r->sb->sb), r->run_id, SIGKILL, &err) < 0)
    svc_log (s, false, "sandbox %s: kill run %u: %s", r->sb->id, r->run_id, err->msg);
}

void
svc_run_timers (struct svc *s, uint64_t now, uint64_t *next)
{
  for (struct svc_run *r = s->runs; r; r = r->next)
    {
      if (r->exited || r->killed || r->sb == NULL)
        continue;
      if (r->deadline_ms <= now)
        {
          r->timed_out = true;
          kill_run (s, r);
        }
      else if (r->deadline_ms < *next)
        *next = r->deadline_ms;
    }
}

void
svc_run_client_gone (struct svc *s, struct svc_run *r)
{
  r->conn = NULL;
  if (!r->exited)
    {
      svc_log (s, true, "sandbox %s: run %u: its client left: killed", r->sb ? r->sb->id : "?", r->run_id);
      kill_run (s, r);
    }
  else
    r->done = true;
}

void
svc_run_sandbox_gone (struct svc *s, struct svc_sandbox *x)
{
  for (struct svc_run *r = s->runs; r; r = r->next)
    {
      if (r->sb != x)
        continue;
      r->sb = NULL;
      close_fd (&r->in_fd);
      close_fd (&r->out_fd);
      close_fd (&r->err_fd);
      if (r->exited)
        continue;
      r->exited = true;
      r->done = true;
      struct svc_conn *c = r->conn;
      r->conn = NULL;
      if (c == NULL)
        continue;
      if (r->stream)
        {
          /* The head went out already: the stream ends without its result. */
          c->keep_alive = false;
          svc_chunk (c, "", 0);
        }
      else
        svc_reply_error (c, 404, "not_found", "sandbox %s ended while the command ran", x->id);
      c->run = NULL;
      svc_request_done (s, c);
    }
}

void
svc_run_reap (struct svc *s)
{
  for (struct svc_run **p = &s->runs; *p;)
    {
      struct svc_run *r = *p;
      if (r->done && r->conn == NULL && (r->exited || r->sb == NULL))
        {
          *p = r->next;
          svc_forget (s, r);
          close_fd (&r->in_fd);
          close_fd (&r->out_fd);
          close_fd (&r->err_fd);
          free (r->stdin_data);
          svc_buf_free (&r->out);
          svc_buf_free (&r->err);
          oci_strv_free (&r->argv);
          free (r);
        }
      else
        p = &r->next;
    }
}
