/* Unit tests of haven mcp's client of the service (session/mcp/
 * svc_client.c): the answer's parser on canned bytes (Content-Length,
 * chunked in every split, malformed and oversized answers, a connection
 * closed early), and whole requests against a fake service on a Unix
 * socket in a temporary directory (what is sent, the error message of an
 * error answer, a held connection). */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "svc_client.h"
#include "unix_socket.h"
#include "utils.h"

/* Feed text to a new parser in pieces of `split` bytes (0: at once),
 * then eof if asked.  Returns the last result; *c is the call. */
static int
feed_split (const char *text, size_t len, size_t split, bool eof, hv_svc_call **out, hv_error **err)
{
  hv_svc_call *c = hv_svc_call_new_for_test ();
  int r = 0;
  size_t at = 0;
  if (split == 0)
    split = len ? len : 1;
  while (at < len && r == 0)
    {
      size_t n = len - at < split ? len - at : split;
      r = hv_svc_call_feed_for_test (c, text + at, n, false, err);
      at += n;
    }
  if (r == 0 && eof)
    r = hv_svc_call_feed_for_test (c, NULL, 0, true, err);
  *out = c;
  return r;
}

static void
expect_answer (const char *text, int status, const char *body)
{
  for (size_t split = 0; split <= strlen (text); split += split < 16 ? 1 : 7)
    {
      hv_svc_call *c = NULL;
      hv_error *err = NULL;
      int r = feed_split (text, strlen (text), split, false, &c, &err);
      if (r != 1)
        fail_msg ("split %zu: %d: %s", split, r, err ? err->msg : "(more expected)");
      size_t len;
      const char *b = hv_svc_call_body (c, &len);
      assert_int_equal (hv_svc_call_status (c), status);
      assert_int_equal (len, strlen (body));
      assert_memory_equal (b, body, len);
      assert_int_equal (b[len], '\0');
      hv_svc_call_free (c);
    }
}

static void
expect_refused (const char *text, size_t len, bool eof, const char *needle)
{
  hv_svc_call *c = NULL;
  hv_error *err = NULL;
  int r = feed_split (text, len, 0, eof, &c, &err);
  if (r != -1)
    fail_msg ("accepted (%d): %s", r, text);
  if (strstr (err->msg, needle) == NULL)
    fail_msg ("message \"%s\" lacks \"%s\"", err->msg, needle);
  hv_error_free (&err);
  hv_svc_call_free (c);
}

static void
test_content_length (void **state)
{
  (void) state;
  expect_answer ("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 11\r\n\r\n{\"api\": 1}\n", 200,
                 "{\"api\": 1}\n");
  expect_answer ("HTTP/1.1 201 Created\r\nContent-Length: 0\r\n\r\n", 201, "");
  expect_answer ("HTTP/1.1 204 No Content\r\n\r\n", 204, "");
  expect_answer ("HTTP/1.1 404 Not Found\r\nContent-Length: 5\r\n\r\nnope!", 404, "nope!");
}

static void
test_chunked (void **state)
{
  (void) state;
  /* Every split of the chunk framing (the size line, its CRLF, the data,
   * the trailer) goes through expect_answer's loop. */
  expect_answer ("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
                 "5\r\nhello\r\n1;ext=1\r\n \r\na\r\n0123456789\r\n0\r\nX-Trailer: t\r\n\r\n",
                 200, "hello 0123456789");
  expect_answer ("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", 200, "");
}

static void
test_until_close (void **state)
{
  (void) state;
  /* A body framed by the close: complete only at EOF. */
  const char *t = "HTTP/1.1 200 OK\r\n\r\nstream";
  hv_svc_call *c = NULL;
  hv_error *err = NULL;
  assert_int_equal (feed_split (t, strlen (t), 3, false, &c, &err), 0);
  assert_int_equal (hv_svc_call_status (c), 0);
  assert_int_equal (hv_svc_call_feed_for_test (c, NULL, 0, true, &err), 1);
  assert_string_equal (hv_svc_call_body (c, NULL), "stream");
  hv_svc_call_free (c);
}

static void
test_malformed (void **state)
{
  (void) state;
  const char *bad[][2] = {
    { "HTTP/1.1 200 OK\nContent-Length: 0\r\n\r\n", "" },                            /* a bare LF */
    { "HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n", "HTTP/1.0" },                  /* not 1.1 */
    { "HTTP/1.1 100 Continue\r\n\r\n", "interim" },                                 /* no 1xx */
    { "HTTP/1.1 20 OK\r\nContent-Length: 0\r\n\r\n", "" },                           /* status */
    { "HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n", "" },     /* two lengths */
    { "HTTP/1.1 200 OK\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n", "" },
    { "HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n", "" },
    { "HTTP/1.1 200 OK\r\n Folded: x\r\n\r\n", "" },                                  /* obs-fold */
    { "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nz\r\n", "" },            /* chunk size */
    { "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nabc\r\n", "" },     /* chunk too long */
    { "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nabEXTRA", "after its end" },      /* bytes after */
    { "GARBAGE\r\n\r\n", "" },
  };
  for (size_t i = 0; i < sizeof (bad) / sizeof (bad[0]); i++)
    expect_refused (bad[i][0], strlen (bad[i][0]), false, bad[i][1]);
  /* A NUL in the head. */
  static const char nul[] = "HTTP/1.1 200 OK\r\nX: a\0b\r\nContent-Length: 0\r\n\r\n";
  expect_refused (nul, sizeof (nul) - 1, false, "");
}

static void
test_oversize (void **state)
{
  (void) state;
  /* A Content-Length over the bound is refused at the head, before any
   * byte of the body is kept. */
  char *t = xasprintf ("HTTP/1.1 200 OK\r\nContent-Length: %llu\r\n\r\n", (unsigned long long) HV_SVC_BODY_MAX + 1);
  expect_refused (t, strlen (t), false, "");
  free (t);
  /* Chunks that add up to more than the bound. */
  hv_svc_call *c = NULL;
  hv_error *err = NULL;
  const char *head = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n";
  assert_int_equal (feed_split (head, strlen (head), 0, false, &c, &err), 0);
  size_t piece = 1024 * 1024;
  char *chunk = xmalloc0 (piece + 32);
  int n = snprintf (chunk, 32, "%zx\r\n", piece);
  memset (chunk + n, 'x', piece);
  memcpy (chunk + n + piece, "\r\n", 2);
  int r = 0;
  size_t fed = 0;
  while (r == 0 && fed <= (size_t) HV_SVC_BODY_MAX + piece)
    {
      r = hv_svc_call_feed_for_test (c, chunk, (size_t) n + piece + 2, false, &err);
      fed += piece;
    }
  assert_int_equal (r, -1);
  assert_true (fed <= (size_t) HV_SVC_BODY_MAX + piece);
  hv_error_free (&err);
  free (chunk);
  hv_svc_call_free (c);
  /* A head line over the parser's bound. */
  size_t big = 40000;
  char *line = xmalloc0 (big + 64);
  strcpy (line, "HTTP/1.1 200 OK\r\nX-Long: ");
  memset (line + strlen (line), 'a', big);
  expect_refused (line, strlen (line), false, "");
  free (line);
}

static void
test_early_close (void **state)
{
  (void) state;
  const char *cut[] = {
    "",                                                    /* nothing at all */
    "HTTP/1.1 200 OK\r\nContent-Len",                      /* in the head */
    "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc",    /* in a Content-Length body */
    "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n", /* before the last chunk */
  };
  for (size_t i = 0; i < sizeof (cut) / sizeof (cut[0]); i++)
    expect_refused (cut[i], strlen (cut[i]), true, "closed the connection");
}

/* --- a fake service on a socket ------------------------------------------ */

struct fake
{
  char dir[64];
  char *socket;
  pid_t pid;
};

/* A child that accepts one connection per answer, reads the request's
 * head (and a body of Content-Length bytes), writes what it read to
 * DIR/reqN and answers answers[N] in two pieces, then closes or (hold)
 * keeps the connection until the client closes it, and writes
 * DIR/closedN when it has. */
static void
fake_start (struct fake *f, const char *const *answers, bool hold)
{
  strcpy (f->dir, "/tmp/h-mcpclient-unit-XXXXXX");
  assert_non_null (mkdtemp (f->dir));
  f->socket = xasprintf ("%s/s.sock", f->dir);
  hv_error *err = NULL;
  int lfd = hv_unix_listen (f->socket, 4, &err);
  assert_true (lfd >= 0);
  f->pid = fork ();
  assert_true (f->pid >= 0);
  if (f->pid > 0)
    {
      close (lfd);
      return;
    }
  for (int i = 0; answers[i]; i++)
    {
      int c = accept (lfd, NULL, NULL);
      if (c < 0)
        _exit (1);
      char req[65536];
      size_t got = 0;
      req[0] = '\0';
      char *end = NULL;
      while (got < sizeof (req) - 1 && (end = strstr (req, "\r\n\r\n")) == NULL)
        {
          ssize_t n = read (c, req + got, sizeof (req) - 1 - got);
          if (n <= 0)
            _exit (2);
          got += (size_t) n;
          req[got] = '\0';
        }
      const char *cl = strstr (req, "Content-Length: ");
      size_t want = (size_t) (end - req) + 4 + (cl ? strtoul (cl + 16, NULL, 10) : 0);
      while (got < want)
        {
          ssize_t n = read (c, req + got, sizeof (req) - 1 - got);
          if (n <= 0)
            _exit (3);
          got += (size_t) n;
          req[got] = '\0';
        }
      char path[128];
      snprintf (path, sizeof (path), "%s/req%d", f->dir, i);
      FILE *fp = fopen (path, "w");
      fwrite (req, 1, got, fp);
      fclose (fp);
      size_t alen = strlen (answers[i]), half = alen / 2;
      if (write (c, answers[i], half) < 0)
        _exit (4);
      usleep (20000);
      if (write (c, answers[i] + half, alen - half) < 0)
        _exit (4);
      if (hold)
        {
          char b;
          while (read (c, &b, 1) > 0)
            ;
          snprintf (path, sizeof (path), "%s/closed%d", f->dir, i);
          close (open (path, O_WRONLY | O_CREAT, 0600));
        }
      close (c);
    }
  _exit (0);
}

static char *
fake_file (struct fake *f, const char *name)
{
  char path[128];
  snprintf (path, sizeof (path), "%s/%s", f->dir, name);
  FILE *fp = fopen (path, "r");
  if (fp == NULL)
    return NULL;
  char *buf = xmalloc0 (65536);
  size_t n = fread (buf, 1, 65535, fp);
  buf[n] = '\0';
  fclose (fp);
  return buf;
}

static void
fake_stop (struct fake *f)
{
  int status;
  kill (f->pid, SIGKILL);
  waitpid (f->pid, &status, 0);
  char cmd[128];
  snprintf (cmd, sizeof (cmd), "rm -rf '%s'", f->dir);
  assert_int_equal (system (cmd), 0);
  free (f->socket);
}

static void
test_requests (void **state)
{
  (void) state;
  static const char *const answers[] = {
    "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 13\r\n\r\n{\"ok\": true}\n",
    "HTTP/1.1 422 Unprocessable Content\r\nContent-Type: application/json\r\nContent-Length: 74\r\n\r\n"
    "{\"error\": {\"code\": \"policy_error\", \"message\": \"p.yaml:3:5: unknown key\"}}\n",
    "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\n{\"a\r\n4\r\n\":1}\r\n0\r\n\r\n",
    "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\ncut",
    NULL,
  };
  struct fake f;
  fake_start (&f, answers, false);
  struct hv_svc_endpoint e = HV_SVC_ENDPOINT_INIT;
  e.socket = f.socket;
  char *out = NULL;
  size_t len = 0;
  int status = 0;
  hv_error *err = NULL;

  /* A body goes out with its type and length, after a head that asks
   * for the connection's close. */
  assert_int_equal (hv_svc_request (&e, "POST", "/v1/sandboxes/hvs-1/run", "application/json", "{\"argv\":[\"x\"]}",
                                    14, 5000, &out, &len, &status, &err),
                    0);
  assert_int_equal (status, 200);
  assert_string_equal (out, "{\"ok\": true}\n");
  assert_int_equal (len, 13);
  free (out);
  char *req = fake_file (&f, "req0");
  assert_non_null (req);
  assert_string_equal (req, "POST /v1/sandboxes/hvs-1/run HTTP/1.1\r\nHost: haven\r\nConnection: close\r\n"
                            "Content-Type: application/json\r\nContent-Length: 14\r\n\r\n{\"argv\":[\"x\"]}");
  free (req);

  /* An error answer: its message, its status. */
  out = NULL;
  assert_int_equal (hv_svc_request (&e, "POST", "/v1/sandboxes", "application/json", "{}", 2, 5000, &out, &len,
                                    &status, &err),
                    -1);
  assert_int_equal (status, 422);
  assert_null (out);
  assert_string_equal (err->msg, "p.yaml:3:5: unknown key");
  hv_error_free (&err);

  /* A chunked answer through the polled interface. */
  hv_svc_call *c = NULL;
  assert_int_equal (hv_svc_call_start (&e, "GET", "/v1/sandboxes", NULL, NULL, 0, &c, &err), 0);
  assert_true (hv_svc_call_fd (c) >= 0);
  assert_int_equal (hv_svc_call_wait (c, 5000, &err), 0);
  assert_int_equal (hv_svc_call_status (c), 200);
  assert_string_equal (hv_svc_call_body (c, NULL), "{\"a\":1}");
  hv_svc_call_free (c);
  req = fake_file (&f, "req2");
  assert_string_equal (req, "GET /v1/sandboxes HTTP/1.1\r\nHost: haven\r\nConnection: close\r\n\r\n");
  free (req);

  /* Closed before the whole body. */
  assert_int_equal (hv_svc_request (&e, "GET", "/v1/version", NULL, NULL, 0, 5000, &out, &len, &status, &err), -1);
  assert_non_null (strstr (err->msg, "closed the connection"));
  hv_error_free (&err);

  /* Nothing can be smuggled into the head. */
  assert_int_equal (hv_svc_call_start (&e, "GET", "/v1/x\r\nX: y", NULL, NULL, 0, &c, &err), -1);
  hv_error_free (&err);
  assert_int_equal (hv_svc_call_start (&e, "GET", "/v1/x y", NULL, NULL, 0, &c, &err), -1);
  hv_error_free (&err);
  assert_int_equal (hv_svc_call_start (&e, "PUT", "/v1/x", "text/plain\r\nX: y", "", 0, &c, &err), -1);
  hv_error_free (&err);
  fake_stop (&f);
}

static void
test_timeout (void **state)
{
  (void) state;
  /* A service that takes the request and never answers. */
  static const char *const answers[] = { "", NULL };
  struct fake f;
  fake_start (&f, answers, true);
  struct hv_svc_endpoint e = HV_SVC_ENDPOINT_INIT;
  e.socket = f.socket;
  hv_error *err = NULL;
  hv_svc_call *c = NULL;
  assert_int_equal (hv_svc_call_start (&e, "GET", "/v1/version", NULL, NULL, 0, &c, &err), 0);
  /* progress never blocks */
  assert_int_equal (hv_svc_call_progress (c, &err), 0);
  assert_int_equal (hv_svc_call_wait (c, 100, &err), -1);
  assert_int_equal (err->errno_code, ETIMEDOUT);
  hv_error_free (&err);
  hv_svc_call_free (c);
  fake_stop (&f);
}

static void
test_create_held (void **state)
{
  (void) state;
  static const char *const answers[] = {
    "HTTP/1.1 201 Created\r\nContent-Type: application/json\r\nContent-Length: 16\r\n\r\n{\"id\": \"hvs-1\"}\n",
    NULL,
  };
  struct fake f;
  fake_start (&f, answers, true);
  struct hv_svc_endpoint e = HV_SVC_ENDPOINT_INIT;
  e.socket = f.socket;
  hv_error *err = NULL;
  int fd = -1;
  char *out = NULL;
  assert_int_equal (hv_svc_create_held (&e, "{\"policy\":\"offline\"}", &fd, &out, &err), 0);
  assert_string_equal (out, "{\"id\": \"hvs-1\"}\n");
  free (out);
  assert_true (fd >= 0);
  char *req = fake_file (&f, "req0");
  /* No Connection: close: the connection is the sandbox's life. */
  assert_string_equal (req, "POST /v1/sandboxes HTTP/1.1\r\nHost: haven\r\nContent-Type: application/json\r\n"
                            "Content-Length: 20\r\n\r\n{\"policy\":\"offline\"}");
  free (req);
  usleep (100000);
  char *closed = fake_file (&f, "closed0");
  assert_null (closed);
  close (fd);
  for (int i = 0; i < 200 && (closed = fake_file (&f, "closed0")) == NULL; i++)
    usleep (10000);
  assert_non_null (closed);
  free (closed);
  fake_stop (&f);
}

static void
test_endpoint_explicit_none (void **state)
{
  (void) state;
  /* An explicit socket where nothing answers is an error, never a
   * private service started in its place. */
  struct hv_svc_endpoint e;
  hv_error *err = NULL;
  assert_int_equal (hv_svc_endpoint_open ("/nonexistent/haven", "/tmp/h-mcpclient-none/haven.sock", &e, &err), -1);
  assert_non_null (strstr (err->msg, "no haven serve answers at /tmp/h-mcpclient-none/haven.sock"));
  assert_null (e.socket);
  assert_int_equal (e.private_pid, 0);
  hv_error_free (&err);
}

static void
test_endpoint_private (void **state)
{
  (void) state;
  /* The built haven (make check runs in the build directory). */
  char exe[4096];
  if (getcwd (exe, sizeof (exe) - 16) == NULL)
    fail ();
  strcat (exe, "/haven");
  if (access (exe, X_OK) < 0)
    skip ();
  /* With no service at the default socket, a private one is started in
   * a 0700 directory under $XDG_RUNTIME_DIR, answers, and is gone with
   * its directory after close.  (Root's default socket is /run/haven's:
   * when a service answers there, it is used instead.) */
  char rt[] = "/tmp/h-mcpclient-rt-XXXXXX";
  assert_non_null (mkdtemp (rt));
  char *old = getenv ("XDG_RUNTIME_DIR") ? xstrdup (getenv ("XDG_RUNTIME_DIR")) : NULL;
  setenv ("XDG_RUNTIME_DIR", rt, 1);
  struct hv_svc_endpoint e;
  hv_error *err = NULL;
  if (hv_svc_endpoint_open (exe, NULL, &e, &err) < 0)
    fail_msg ("%s", err->msg);
  if (e.private_pid > 0)
    {
      assert_non_null (e.private_dir);
      assert_memory_equal (e.private_dir, rt, strlen (rt));
      struct stat st;
      assert_int_equal (stat (e.private_dir, &st), 0);
      assert_int_equal (st.st_mode & 07777, 0700);
      char *sock = xasprintf ("%s/haven.sock", e.private_dir);
      assert_string_equal (e.socket, sock);
      free (sock);
    }
  else
    assert_int_equal (geteuid (), 0);
  char *body = NULL;
  size_t len;
  int status;
  assert_int_equal (hv_svc_request (&e, "GET", "/v1/version", NULL, NULL, 0, 5000, &body, &len, &status, &err), 0);
  assert_non_null (strstr (body, "\"api\""));
  free (body);
  pid_t pid = e.private_pid;
  char *dir = e.private_dir ? xstrdup (e.private_dir) : NULL;
  hv_svc_endpoint_close (&e);
  if (pid > 0)
    {
      assert_int_equal (kill (pid, 0), -1);
      assert_int_equal (access (dir, F_OK), -1);
    }
  free (dir);
  if (old)
    setenv ("XDG_RUNTIME_DIR", old, 1);
  else
    unsetenv ("XDG_RUNTIME_DIR");
  free (old);
  assert_int_equal (rmdir (rt), 0);
}

static void
test_endpoint_private_fails (void **state)
{
  (void) state;
  /* A "haven" whose serve fails at once: the error says how, with what
   * it logged (its stdout and stderr go to the log, never to ours), and
   * its directory is gone. */
  char rt[] = "/tmp/h-mcpclient-rt-XXXXXX";
  assert_non_null (mkdtemp (rt));
  char *exe = xasprintf ("%s/fake-haven", rt);
  FILE *f = fopen (exe, "w");
  assert_non_null (f);
  fputs ("#!/bin/sh\necho \"to stdout $1\"\necho 'fake serve: cannot listen' >&2\nexit 3\n", f);
  fclose (f);
  assert_int_equal (chmod (exe, 0700), 0);
  char *old = getenv ("XDG_RUNTIME_DIR") ? xstrdup (getenv ("XDG_RUNTIME_DIR")) : NULL;
  char *sub = xasprintf ("%s/rt", rt);
  assert_int_equal (mkdir (sub, 0700), 0);
  setenv ("XDG_RUNTIME_DIR", sub, 1);
  struct hv_svc_endpoint e;
  hv_error *err = NULL;
  if (geteuid () == 0 && access ("/run/haven/haven.sock", F_OK) == 0)
    skip (); /* root's default socket answers: no private start */
  assert_int_equal (hv_svc_endpoint_open (exe, NULL, &e, &err), -1);
  assert_non_null (strstr (err->msg, "the private haven serve exited with status 3"));
  assert_non_null (strstr (err->msg, "fake serve: cannot listen"));
  assert_non_null (strstr (err->msg, "to stdout serve"));
  hv_error_free (&err);
  assert_null (e.private_dir);
  /* Nothing left under the runtime directory. */
  assert_int_equal (rmdir (sub), 0);
  if (old)
    setenv ("XDG_RUNTIME_DIR", old, 1);
  else
    unsetenv ("XDG_RUNTIME_DIR");
  free (old);
  unlink (exe);
  free (exe);
  free (sub);
  assert_int_equal (rmdir (rt), 0);
}

int
main (void)
{
  signal (SIGPIPE, SIG_IGN);
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_content_length),   cmocka_unit_test (test_chunked),
    cmocka_unit_test (test_until_close),      cmocka_unit_test (test_malformed),
    cmocka_unit_test (test_oversize),         cmocka_unit_test (test_early_close),
    cmocka_unit_test (test_requests),         cmocka_unit_test (test_timeout),
    cmocka_unit_test (test_create_held),      cmocka_unit_test (test_endpoint_explicit_none),
    cmocka_unit_test (test_endpoint_private),  cmocka_unit_test (test_endpoint_private_fails),
  };
  return cmocka_run_group_tests (tests, NULL, NULL);
}
