/* Unit tests of the keeper's messages (runtime/keeper_proto.c) and of the
 * caller's side (runtime/keeper_client.c) over a socket pair: round
 * trips, every refusal of a malformed request or event, and an event
 * that carries fds (closed, refused). */
#include "config.h"

#include <dirent.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include "keeper_proto.h"
#include "utils.h"

static char *argv3[] = { "sh", "-c", "", NULL };
static char *env2[] = { "PATH=/bin", "EMPTY=", NULL };

static void
encode (const struct hv_keeper_spawn *s, char **buf, size_t *len)
{
  hv_error *err = NULL;
  if (hv_keeper_encode_spawn (s, buf, len, &err) < 0)
    fail_msg ("encode refused: %s", err->msg);
}

static void
refuse_encode (const struct hv_keeper_spawn *s, const char *why)
{
  hv_error *err = NULL;
  char *buf = NULL;
  size_t len = 0;
  assert_int_equal (hv_keeper_encode_spawn (s, &buf, &len, &err), -1);
  assert_non_null (strstr (err->msg, why));
  assert_null (buf);
  hv_error_free (&err);
}

static int
decode (char *buf, size_t len, size_t nfds, struct hv_keeper_request *req)
{
  hv_error *err = NULL;
  int r = hv_keeper_decode_request (buf, len, nfds, req, &err);
  assert_true (r == 0 ? err == NULL : err != NULL);
  hv_error_free (&err);
  return r;
}

static void
test_spawn_round_trip (void **state)
{
  (void) state;
  struct hv_keeper_spawn s = { .run_id = 0xfeedbeef, .argv = argv3, .envp = env2, .cwd = "/tmp/x y",
                               .stdio = { 0, 1, 2 } };
  cleanup_free char *buf = NULL;
  size_t len;
  encode (&s, &buf, &len);
  struct hv_keeper_request req;
  assert_int_equal (decode (buf, len, 3, &req), 0);
  assert_int_equal (req.type, HV_KEEPER_REQ_SPAWN);
  assert_int_equal (req.run_id, 0xfeedbeef);
  for (int i = 0; i < 3; i++)
    assert_string_equal (req.argv[i], argv3[i]);
  assert_null (req.argv[3]);
  assert_string_equal (req.envp[0], "PATH=/bin");
  assert_string_equal (req.envp[1], "EMPTY=");
  assert_null (req.envp[2]);
  assert_string_equal (req.cwd, "/tmp/x y");
  hv_keeper_request_clear (&req);

  /* No cwd, no environment at all. */
  char *one[] = { "true", NULL };
  struct hv_keeper_spawn s2 = { .run_id = 1, .argv = one, .envp = NULL, .stdio = { 3, 4, 5 } };
  cleanup_free char *buf2 = NULL;
  encode (&s2, &buf2, &len);
  assert_int_equal (len, HV_KEEPER_SPAWN_HEADER + 5);
  assert_int_equal (decode (buf2, len, 3, &req), 0);
  assert_null (req.cwd);
  assert_null (req.envp[0]);
  assert_string_equal (req.argv[0], "true");
  hv_keeper_request_clear (&req);
}

static void
test_spawn_encode_refusals (void **state)
{
  (void) state;
  char *none[] = { NULL }, *empty0[] = { "", "x", NULL }, *bad_env[] = { "=x", NULL }, *no_eq[] = { "X", NULL };
  struct hv_keeper_spawn s = { .argv = none, .stdio = { 0, 1, 2 } };
  refuse_encode (&s, "without a command");
  s.argv = NULL;
  refuse_encode (&s, "without a command");
  s.argv = empty0;
  refuse_encode (&s, "without a command");
  s.argv = argv3;
  s.cwd = "tmp";
  refuse_encode (&s, "absolute");
  s.cwd = NULL;
  s.envp = bad_env;
  refuse_encode (&s, "NAME=VALUE");
  s.envp = no_eq;
  refuse_encode (&s, "NAME=VALUE");
  s.envp = NULL;
  s.stdio[1] = -1;
  refuse_encode (&s, "stdio fd 1");
  s.stdio[1] = 1;
  /* Exactly the limit passes; a byte more does not. */
  cleanup_free char *big = xmalloc0 (HV_KEEPER_MAX_REQUEST);
  memset (big, 'a', HV_KEEPER_MAX_REQUEST - 1);
  char *args[] = { big, NULL };
  s.argv = args;
  cleanup_free char *buf = NULL;
  size_t len;
  encode (&s, &buf, &len);
  assert_int_equal (len, HV_KEEPER_MAX_MESSAGE);
  struct hv_keeper_request req;
  assert_int_equal (decode (buf, len, 3, &req), 0);
  hv_keeper_request_clear (&req);
  char *args2[] = { big, "", NULL };
  s.argv = args2;
  refuse_encode (&s, "more than");
}

static void
put32 (char *p, uint32_t v)
{
  memcpy (p, &v, 4);
}

static void
test_spawn_decode_refusals (void **state)
{
  (void) state;
  struct hv_keeper_spawn s = { .run_id = 7, .argv = argv3, .envp = env2, .cwd = "/w", .stdio = { 0, 1, 2 } };
  cleanup_free char *buf = NULL;
  size_t len;
  encode (&s, &buf, &len);
  struct hv_keeper_request req;
  /* Every cut of the message, and a byte more, is refused. */
  for (size_t l = 0; l < len; l++)
    {
      cleanup_free char *copy = xmalloc0 (len);
      memcpy (copy, buf, l);
      assert_int_equal (decode (copy, l, 3, &req), -1);
    }
  cleanup_free char *longer = xmalloc0 (len + 1);
  memcpy (longer, buf, len);
  assert_int_equal (decode (longer, len + 1, 3, &req), -1);
  /* Fds: exactly three. */
  assert_int_equal (decode (buf, len, 2, &req), -1);
  assert_int_equal (decode (buf, len, 4, &req), -1);
  assert_int_equal (decode (buf, len, 0, &req), -1);
  /* Counts that do not match the strings, or cannot. */
  uint32_t fields[][3] = { { 0, 2, 1 }, { 4, 2, 1 }, { 3, 3, 1 }, { 2, 2, 1 }, { 3, 2, 0 }, { 3, 2, 2 },
                           { 0xffffffff, 0xffffffff, 1 }, { 3, 0xfffffffe, 1 }, { 1, 4, 1 } };
  for (size_t i = 0; i < sizeof (fields) / sizeof (fields[0]); i++)
    {
      cleanup_free char *copy = xmalloc0 (len);
      memcpy (copy, buf, len);
      put32 (copy + 8, fields[i][0]);
      put32 (copy + 12, fields[i][1]);
      put32 (copy + 16, fields[i][2]);
      assert_int_equal (decode (copy, len, 3, &req), -1);
    }
  /* A string's content: an empty command, an environment entry without
   * a name, a relative cwd. */
  char msg[HV_KEEPER_SPAWN_HEADER + 32];
  const struct
  {
    uint32_t argc, envc, cwd;
    const char *body;
    size_t size;
    int ok;
  } cases[] = {
    { 1, 0, 0, "x", 2, 0 },      { 1, 0, 0, "", 1, -1 },        { 1, 1, 0, "x\0=v", 5, -1 },
    { 1, 1, 0, "x\0v", 4, -1 },  { 1, 1, 0, "x\0n=", 5, 0 },    { 1, 0, 1, "x\0rel", 6, -1 },
    { 1, 0, 1, "x\0/", 4, 0 },   { 2, 0, 0, "x\0", 3, 0 },      { 1, 0, 0, "x\0\0", 3, -1 },
  };
  for (size_t i = 0; i < sizeof (cases) / sizeof (cases[0]); i++)
    {
      memset (msg, 0, sizeof (msg));
      put32 (msg, HV_KEEPER_REQ_SPAWN);
      put32 (msg + 8, cases[i].argc);
      put32 (msg + 12, cases[i].envc);
      put32 (msg + 16, cases[i].cwd);
      memcpy (msg + HV_KEEPER_SPAWN_HEADER, cases[i].body, cases[i].size);
      if (decode (msg, HV_KEEPER_SPAWN_HEADER + cases[i].size, 3, &req) != cases[i].ok)
        fail_msg ("case %zu: expected %d", i, cases[i].ok);
      hv_keeper_request_clear (&req);
    }
  /* An unknown type. */
  put32 (msg, 3);
  assert_int_equal (decode (msg, HV_KEEPER_SPAWN_HEADER + 2, 3, &req), -1);
}

static void
test_signal (void **state)
{
  (void) state;
  unsigned char buf[HV_KEEPER_SIGNAL_SIZE + 1] = { 0 };
  hv_error *err = NULL;
  assert_int_equal (hv_keeper_encode_signal (42, 15, buf, &err), 0);
  struct hv_keeper_request req;
  assert_int_equal (decode ((char *) buf, HV_KEEPER_SIGNAL_SIZE, 0, &req), 0);
  assert_int_equal (req.type, HV_KEEPER_REQ_SIGNAL);
  assert_int_equal (req.run_id, 42);
  assert_int_equal (req.sig, 15);
  /* With an fd, a byte more or less: refused. */
  assert_int_equal (decode ((char *) buf, HV_KEEPER_SIGNAL_SIZE, 1, &req), -1);
  assert_int_equal (decode ((char *) buf, HV_KEEPER_SIGNAL_SIZE + 1, 0, &req), -1);
  assert_int_equal (decode ((char *) buf, HV_KEEPER_SIGNAL_SIZE - 1, 0, &req), -1);
  int bad[] = { 0, -1, 65, 1000 };
  for (size_t i = 0; i < 4; i++)
    {
      assert_int_equal (hv_keeper_encode_signal (1, bad[i], buf, &err), -1);
      hv_error_free (&err);
      put32 ((char *) buf + 8, (uint32_t) bad[i]);
      assert_int_equal (decode ((char *) buf, HV_KEEPER_SIGNAL_SIZE, 0, &req), -1);
    }
  assert_int_equal (hv_keeper_encode_signal (1, 64, buf, &err), 0);
  assert_int_equal (hv_keeper_encode_signal (1, 1, buf, &err), 0);
}

static void
test_event (void **state)
{
  (void) state;
  unsigned char buf[HV_KEEPER_EVENT_SIZE + 1] = { 0 };
  struct hv_keeper_event ev = { .kind = HV_KEEPER_STARTED, .run_id = 9, .pid = 1234 }, out;
  hv_error *err = NULL;
  hv_keeper_encode_event (&ev, buf);
  assert_int_equal (hv_keeper_decode_event (buf, HV_KEEPER_EVENT_SIZE, &out, &err), 0);
  assert_int_equal (out.kind, HV_KEEPER_STARTED);
  assert_int_equal (out.run_id, 9);
  assert_int_equal (out.pid, 1234);
  ev = (struct hv_keeper_event) { .kind = HV_KEEPER_EXITED, .run_id = 10, .status = 255 };
  hv_keeper_encode_event (&ev, buf);
  assert_int_equal (hv_keeper_decode_event (buf, HV_KEEPER_EVENT_SIZE, &out, &err), 0);
  assert_int_equal (out.kind, HV_KEEPER_EXITED);
  assert_int_equal (out.status, 255);
  assert_int_equal (hv_keeper_decode_event (buf, HV_KEEPER_EVENT_SIZE + 1, &out, &err), -1);
  hv_error_free (&err);
  assert_int_equal (hv_keeper_decode_event (buf, HV_KEEPER_EVENT_SIZE - 1, &out, &err), -1);
  hv_error_free (&err);
  const int32_t bad[][2] = { { HV_KEEPER_STARTED, 0 }, { HV_KEEPER_STARTED, -5 }, { HV_KEEPER_EXITED, 256 },
                             { HV_KEEPER_EXITED, -1 }, { 0, 1 }, { 3, 1 } };
  for (size_t i = 0; i < sizeof (bad) / sizeof (bad[0]); i++)
    {
      put32 ((char *) buf, (uint32_t) bad[i][0]);
      put32 ((char *) buf + 8, (uint32_t) bad[i][1]);
      assert_int_equal (hv_keeper_decode_event (buf, HV_KEEPER_EVENT_SIZE, &out, &err), -1);
      assert_int_equal (out.kind, 0);
      hv_error_free (&err);
    }
}

static size_t
open_fds (void)
{
  size_t n = 0;
  DIR *d = opendir ("/proc/self/fd");
  while (readdir (d))
    n++;
  closedir (d);
  return n;
}

static void
send_raw (int fd, const void *buf, size_t len, int pass_fd)
{
  struct iovec iov = { .iov_base = (void *) buf, .iov_len = len };
  union
  {
    char b[CMSG_SPACE (sizeof (int))];
    struct cmsghdr align;
  } ctl;
  struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1 };
  if (pass_fd >= 0)
    {
      msg.msg_control = ctl.b;
      msg.msg_controllen = sizeof (ctl.b);
      struct cmsghdr *c = CMSG_FIRSTHDR (&msg);
      c->cmsg_level = SOL_SOCKET;
      c->cmsg_type = SCM_RIGHTS;
      c->cmsg_len = CMSG_LEN (sizeof (int));
      memcpy (CMSG_DATA (c), &pass_fd, sizeof (int));
    }
  assert_int_equal (sendmsg (fd, &msg, 0), (ssize_t) len);
}

/* The caller's reader against a hostile keeper. */
static void
test_client_events (void **state)
{
  (void) state;
  int sv[2];
  assert_int_equal (socketpair (AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0, sv), 0);
  struct hv_keeper_event ev;
  hv_error *err = NULL;
  /* Nothing yet: 0. */
  assert_int_equal (hv_keeper_event_read (sv[0], &ev, &err), 0);
  unsigned char buf[HV_KEEPER_EVENT_SIZE + 4] = { 0 };
  struct hv_keeper_event started = { .kind = HV_KEEPER_STARTED, .run_id = 3, .pid = 77 };
  hv_keeper_encode_event (&started, buf);
  send_raw (sv[1], buf, HV_KEEPER_EVENT_SIZE, -1);
  assert_int_equal (hv_keeper_event_read (sv[0], &ev, &err), 1);
  assert_int_equal (ev.pid, 77);
  /* A good event with an fd: the fd is closed, the event refused. */
  size_t before = open_fds ();
  int extra = open ("/dev/null", O_RDONLY | O_CLOEXEC);
  send_raw (sv[1], buf, HV_KEEPER_EVENT_SIZE, extra);
  close (extra);
  assert_int_equal (hv_keeper_event_read (sv[0], &ev, &err), -1);
  assert_non_null (strstr (err->msg, "file descriptors"));
  hv_error_free (&err);
  assert_int_equal (open_fds (), before);
  /* Longer than an event. */
  send_raw (sv[1], buf, sizeof (buf), -1);
  assert_int_equal (hv_keeper_event_read (sv[0], &ev, &err), -1);
  hv_error_free (&err);
  /* The keeper gone. */
  close (sv[1]);
  assert_int_equal (hv_keeper_event_read (sv[0], &ev, &err), -1);
  assert_string_equal (err->msg, "keeper ended");
  hv_error_free (&err);
  char *one[] = { "true", NULL };
  struct hv_keeper_spawn s = { .argv = one, .stdio = { 0, 1, 2 } };
  assert_int_equal (hv_keeper_spawn (sv[0], &s, &err), -1);
  assert_string_equal (err->msg, "keeper ended");
  hv_error_free (&err);
  assert_int_equal (hv_keeper_signal (sv[0], 1, 9, &err), -1);
  hv_error_free (&err);
  close (sv[0]);
}

/* What the client sends is one message with the three fds beside it. */
static void
test_client_requests (void **state)
{
  (void) state;
  int sv[2];
  assert_int_equal (socketpair (AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
  hv_error *err = NULL;
  struct hv_keeper_spawn s = { .run_id = 5, .argv = argv3, .envp = env2, .stdio = { 0, 1, 2 } };
  assert_int_equal (hv_keeper_spawn (sv[0], &s, &err), 0);
  char buf[256];
  union
  {
    char b[CMSG_SPACE (4 * sizeof (int))];
    struct cmsghdr align;
  } ctl;
  struct iovec iov = { .iov_base = buf, .iov_len = sizeof (buf) };
  struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.b, .msg_controllen = sizeof (ctl.b) };
  ssize_t n = recvmsg (sv[1], &msg, MSG_CMSG_CLOEXEC);
  assert_true (n > 0);
  struct cmsghdr *c = CMSG_FIRSTHDR (&msg);
  assert_non_null (c);
  assert_int_equal (c->cmsg_len, CMSG_LEN (3 * sizeof (int)));
  int fds[3];
  memcpy (fds, CMSG_DATA (c), sizeof (fds));
  for (int i = 0; i < 3; i++)
    close (fds[i]);
  struct hv_keeper_request req;
  assert_int_equal (decode (buf, (size_t) n, 3, &req), 0);
  assert_int_equal (req.run_id, 5);
  assert_string_equal (req.argv[1], "-c");
  hv_keeper_request_clear (&req);
  /* The largest request goes through a socket pair's default buffers
   * whole, as one message. */
  cleanup_free char *big = xmalloc0 (HV_KEEPER_MAX_REQUEST);
  memset (big, 'a', HV_KEEPER_MAX_REQUEST - 1);
  char *args[] = { big, NULL };
  struct hv_keeper_spawn s2 = { .run_id = 6, .argv = args, .stdio = { 0, 1, 2 } };
  assert_int_equal (hv_keeper_spawn (sv[0], &s2, &err), 0);
  cleanup_free char *whole = xmalloc0 (HV_KEEPER_MAX_MESSAGE + 1);
  struct iovec iov2 = { .iov_base = whole, .iov_len = HV_KEEPER_MAX_MESSAGE + 1 };
  struct msghdr msg2 = { .msg_iov = &iov2, .msg_iovlen = 1, .msg_control = ctl.b, .msg_controllen = sizeof (ctl.b) };
  assert_int_equal (recvmsg (sv[1], &msg2, MSG_CMSG_CLOEXEC), HV_KEEPER_MAX_MESSAGE);
  memcpy (fds, CMSG_DATA (CMSG_FIRSTHDR (&msg2)), sizeof (fds));
  for (int i = 0; i < 3; i++)
    close (fds[i]);
  assert_int_equal (decode (whole, HV_KEEPER_MAX_MESSAGE, 3, &req), 0);
  assert_int_equal (req.run_id, 6);
  hv_keeper_request_clear (&req);
  /* A send buffer below the largest request is raised for it. */
  int small = 4096;
  assert_int_equal (setsockopt (sv[0], SOL_SOCKET, SO_SNDBUF, &small, sizeof (small)), 0);
  assert_int_equal (hv_keeper_spawn (sv[0], &s2, &err), 0);
  assert_int_equal (recvmsg (sv[1], &msg2, MSG_CMSG_CLOEXEC), HV_KEEPER_MAX_MESSAGE);
  memcpy (fds, CMSG_DATA (CMSG_FIRSTHDR (&msg2)), sizeof (fds));
  for (int i = 0; i < 3; i++)
    close (fds[i]);
  assert_int_equal (hv_keeper_signal (sv[0], 5, 9, &err), 0);
  n = recv (sv[1], buf, sizeof (buf), 0);
  assert_int_equal (n, HV_KEEPER_SIGNAL_SIZE);
  assert_int_equal (decode (buf, (size_t) n, 0, &req), 0);
  assert_int_equal (req.sig, 9);
  close (sv[0]);
  close (sv[1]);
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_spawn_round_trip),   cmocka_unit_test (test_spawn_encode_refusals),
    cmocka_unit_test (test_spawn_decode_refusals), cmocka_unit_test (test_signal),
    cmocka_unit_test (test_event),              cmocka_unit_test (test_client_events),
    cmocka_unit_test (test_client_requests),
  };
  return cmocka_run_group_tests (tests, NULL, NULL);
}
