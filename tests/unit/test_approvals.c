/* The approvals directory and the approved files (session/approvals.c):
 * well-formed requests are listed and answered once; anything planted in
 * the directory (a link, a FIFO, a huge file, bad JSON, a request under a
 * name that is not an id) is skipped, never followed or trusted. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "approvals.h"
#include "file_read.h"
#include "utils.h"

#define RUN "0123456789abcdef"

struct fixture
{
  char root[64];
  char *dir;
  int dfd;
};

static int64_t
now_ms (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_REALTIME, &ts);
  return (int64_t) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void
put (struct fixture *f, const char *name, const char *text)
{
  cleanup_free char *p = xasprintf ("%s/%s", f->dir, name);
  hv_error *err = NULL;
  assert_int_equal (write_file (p, text, &err), 0);
}

static void
put_request (struct fixture *f, const char *id, const char *name, int64_t deadline)
{
  cleanup_free char *file = xasprintf ("%s.request", id);
  cleanup_free char *text
      = xasprintf ("{\"id\":\"%s\",\"run\":\"" RUN "\",\"policy\":\"dev\",\"name\":\"%s\",\"type\":\"A\","
                   "\"command\":[\"curl\",\"-s\"],\"project\":\"/p\",\"time\":\"2026-01-01T00:00:00Z\","
                   "\"deadline_ms\":%lld,\"haven_pid\":42}",
                   id, name, (long long) deadline);
  put (f, file, text);
}

static int
setup (void **state)
{
  struct fixture *f = calloc (1, sizeof (*f));
  strcpy (f->root, "/tmp/hv-approvals-XXXXXX");
  assert_non_null (mkdtemp (f->root));
  setenv ("XDG_STATE_HOME", f->root, 1);
  setenv ("XDG_CONFIG_HOME", f->root, 1);
  hv_error *err = NULL;
  f->dir = hv_approvals_dir_path (&err);
  assert_non_null (f->dir);
  f->dfd = hv_approvals_dir_open (f->dir, true, &err);
  assert_true (f->dfd >= 0);
  *state = f;
  return 0;
}

static int
teardown (void **state)
{
  struct fixture *f = *state;
  close (f->dfd);
  cleanup_free char *cmd = xasprintf ("rm -rf '%s'", f->root);
  assert_int_equal (system (cmd), 0);
  free (f->dir);
  free (f);
  return 0;
}

static void
test_dir_private (void **state)
{
  struct fixture *f = *state;
  struct stat st;
  assert_int_equal (stat (f->dir, &st), 0);
  assert_int_equal (st.st_mode & 0777, 0700);
  /* Opened to group or others: refused. */
  assert_int_equal (chmod (f->dir, 0755), 0);
  hv_error *err = NULL;
  assert_int_equal (hv_approvals_dir_open (f->dir, false, &err), -1);
  assert_non_null (strstr (err->msg, "lets others in"));
  hv_error_free (&err);
  assert_int_equal (chmod (f->dir, 0700), 0);
  /* A link in its place: refused (O_NOFOLLOW). */
  cleanup_free char *link = xasprintf ("%s/link", f->root);
  assert_int_equal (symlink (f->dir, link), 0);
  assert_int_equal (hv_approvals_dir_open (link, false, &err), -1);
  hv_error_free (&err);
}

static void
test_list_and_answer (void **state)
{
  struct fixture *f = *state;
  int64_t now = now_ms ();
  put_request (f, RUN "-2", "b.example.com", now + 20000);
  put_request (f, RUN "-1", "a.example.com", now + 10000);
  put_request (f, RUN "-3", "c.example.com", now - 1); /* expired */
  hv_approval_request *v = NULL;
  size_t n = 0;
  hv_error *err = NULL;
  assert_int_equal (hv_approvals_list (f->dfd, NULL, &v, &n, &err), 0);
  assert_int_equal (n, 2);
  assert_string_equal (v[0].id, RUN "-1"); /* soonest deadline first */
  assert_string_equal (v[0].name, "a.example.com");
  assert_string_equal (v[0].command[0], "curl");
  assert_string_equal (v[0].command[1], "-s");
  assert_null (v[0].command[2]);
  assert_int_equal (v[0].haven_pid, 42);
  hv_approval_requests_free (v, n);
  /* Another run's filter: nothing. */
  assert_int_equal (hv_approvals_list (f->dfd, "ffffffffffffffff", &v, &n, &err), 0);
  assert_int_equal (n, 0);
  hv_approval_requests_free (v, n);

  hv_approval_status st;
  assert_int_equal (hv_approval_answer (f->dfd, RUN "-1", HV_ASK_ONCE, "approve", &st, &err), 0);
  assert_int_equal (st, HV_APPROVAL_OK);
  cleanup_free char *text = NULL;
  assert_int_equal (read_file_at (f->dfd, RUN "-1.answer", &text, &err), 0);
  assert_string_equal (text, "{\"decision\":\"once\",\"by\":\"approve\"}\n");
  /* The first answer wins. */
  assert_int_equal (hv_approval_answer (f->dfd, RUN "-1", HV_ASK_DENY, "terminal", &st, &err), -1);
  assert_int_equal (st, HV_APPROVAL_ANSWERED);
  assert_non_null (strstr (err->msg, "already answered"));
  hv_error_free (&err);
  /* An answered request is no longer pending. */
  assert_int_equal (hv_approvals_list (f->dfd, NULL, &v, &n, &err), 0);
  assert_int_equal (n, 1);
  assert_string_equal (v[0].id, RUN "-2");
  hv_approval_requests_free (v, n);
  /* Expired, and no such request. */
  assert_int_equal (hv_approval_answer (f->dfd, RUN "-3", HV_ASK_ONCE, "approve", &st, &err), -1);
  assert_int_equal (st, HV_APPROVAL_EXPIRED);
  assert_non_null (strstr (err->msg, "expired"));
  hv_error_free (&err);
  assert_int_equal (hv_approval_answer (f->dfd, RUN "-9", HV_ASK_ONCE, "approve", &st, &err), -1);
  assert_int_equal (st, HV_APPROVAL_NO_SUCH);
  assert_string_equal (err->msg, "no pending request " RUN "-9");
  hv_error_free (&err);
  assert_int_equal (hv_approval_answer (f->dfd, "../x", HV_ASK_ONCE, "approve", &st, &err), -1);
  assert_int_equal (st, HV_APPROVAL_NO_SUCH);
  hv_error_free (&err);
  /* Who answers is one of three words. */
  assert_int_equal (hv_approval_answer (f->dfd, RUN "-2", HV_ASK_ONCE, "sandbox\"", &st, &err), -1);
  hv_error_free (&err);
}

/* What is planted in the directory is skipped: it is neither listed nor
 * answerable, and listing does not block or fail. */
static void
test_hostile_files (void **state)
{
  struct fixture *f = *state;
  int64_t now = now_ms ();
  put_request (f, RUN "-1", "good.example.com", now + 10000);
  /* A link to a good request elsewhere. */
  cleanup_free char *elsewhere = xasprintf ("%s/elsewhere.json", f->root);
  cleanup_free char *good
      = xasprintf ("{\"id\":\"" RUN "-2\",\"run\":\"" RUN "\",\"policy\":\"dev\",\"name\":\"x.example.com\","
                   "\"type\":\"A\",\"deadline_ms\":%lld}",
                   (long long) (now + 10000));
  hv_error *err = NULL;
  assert_int_equal (write_file (elsewhere, good, &err), 0);
  cleanup_free char *link = xasprintf ("%s/" RUN "-2.request", f->dir);
  assert_int_equal (symlink (elsewhere, link), 0);
  /* A FIFO. */
  cleanup_free char *fifo = xasprintf ("%s/" RUN "-3.request", f->dir);
  assert_int_equal (mkfifo (fifo, 0600), 0);
  /* A huge file (1 MiB of spaces before a good object). */
  size_t big = 1024 * 1024;
  char *huge = malloc (big + strlen (good) + 1);
  memset (huge, ' ', big);
  strcpy (huge + big, good);
  huge[big + 1 + strlen ("{\"id\":\"" RUN "-")] = '4';
  put (f, RUN "-4.request", huge);
  free (huge);
  /* Bad JSON, deep JSON, the wrong types, an id that is not the file's,
   * a name that is not a DNS name. */
  put (f, RUN "-5.request", "{\"id\": ");
  put (f, RUN "-6.request", "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]");
  put (f, RUN "-7.request", "{\"id\":7}");
  put_request (f, RUN "-8", "good.example.com", now + 10000);
  cleanup_free char *moved = xasprintf ("%s/" RUN "-8.request", f->dir);
  cleanup_free char *to = xasprintf ("%s/" RUN "-9.request", f->dir);
  assert_int_equal (rename (moved, to), 0);
  put_request (f, RUN "-10", "evil\n  - \"*\".example.com", now + 10000);
  /* A file name that is not an id. */
  put_request (f, "x", "y.example.com", now + 10000);
  hv_approval_request *v = NULL;
  size_t n = 0;
  assert_int_equal (hv_approvals_list (f->dfd, NULL, &v, &n, &err), 0);
  assert_int_equal (n, 1);
  assert_string_equal (v[0].id, RUN "-1");
  hv_approval_requests_free (v, n);
  hv_approval_status st;
  for (int i = 2; i <= 10; i++)
    {
      cleanup_free char *id = xasprintf (RUN "-%d", i);
      assert_int_equal (hv_approval_answer (f->dfd, id, HV_ASK_ALWAYS, "approve", &st, &err), -1);
      hv_error_free (&err);
    }
  /* Nothing was approved for later runs from those. */
  cleanup_free char *approved = hv_approved_path ("dev", &err);
  struct stat sb;
  assert_int_equal (stat (approved, &sb), -1);
}

static void
test_always_file (void **state)
{
  struct fixture *f = *state;
  put_request (f, RUN "-1", "a.example.com", now_ms () + 10000);
  hv_error *err = NULL;
  hv_approval_status st;
  assert_int_equal (hv_approval_answer (f->dfd, RUN "-1", HV_ASK_ALWAYS, "approve", &st, &err), 0);
  assert_int_equal (hv_approved_append ("dev", "b.example.com", "terminal", &err), 0);
  /* Twice the same name: one entry. */
  assert_int_equal (hv_approved_append ("dev", "a.example.com", "command", &err), 0);
  cleanup_free char *path = hv_approved_path ("dev", &err);
  cleanup_free char *expect = xasprintf ("%s/haven/approved/dev.yaml", f->root);
  assert_string_equal (path, expect);
  struct stat sb;
  assert_int_equal (stat (path, &sb), 0);
  assert_int_equal (sb.st_mode & 0777, 0600);
  cleanup_free char *dir = xasprintf ("%s/haven/approved", f->root);
  assert_int_equal (stat (dir, &sb), 0);
  assert_int_equal (sb.st_mode & 0777, 0700);
  cleanup_free char *text = NULL;
  size_t len;
  assert_int_equal (hv_read_file (path, &text, &len, &err), 0);
  assert_non_null (strstr (text, "network:\n  allow:\n    # approved by approve at "));
  assert_non_null (strstr (text, "\n    - \"a.example.com\"\n    # approved by terminal at "));
  assert_non_null (strstr (text, "\n    - \"b.example.com\"\n"));
  assert_null (strstr (strstr (text, "a.example.com") + 1, "a.example.com"));
  /* Names that are not plain, policies that are not plain names. */
  assert_int_equal (hv_approved_append ("dev", "a\"b", "approve", &err), -1);
  hv_error_free (&err);
  assert_int_equal (hv_approved_append ("../dev", "a.example.com", "approve", &err), -1);
  hv_error_free (&err);
  assert_int_equal (hv_approved_append ("/tmp/x.yaml", "a.example.com", "approve", &err), -1);
  hv_error_free (&err);
  /* A link planted in the file's place is not written through. */
  assert_int_equal (unlink (path), 0);
  cleanup_free char *target = xasprintf ("%s/target", f->root);
  assert_int_equal (write_file (target, "keep\n", &err), 0);
  assert_int_equal (symlink (target, path), 0);
  assert_int_equal (hv_approved_append ("dev", "c.example.com", "approve", &err), -1);
  hv_error_free (&err);
  cleanup_free char *kept = NULL;
  assert_int_equal (hv_read_file (target, &kept, &len, &err), 0);
  assert_string_equal (kept, "keep\n");
}

static void
test_decision_names (void **state)
{
  (void) state;
  hv_ask_decision d;
  assert_int_equal (hv_ask_decision_parse ("once", &d), 0);
  assert_int_equal (d, HV_ASK_ONCE);
  assert_int_equal (hv_ask_decision_parse ("r", &d), 0);
  assert_int_equal (d, HV_ASK_RUN);
  assert_int_equal (hv_ask_decision_parse ("always", &d), 0);
  assert_int_equal (d, HV_ASK_ALWAYS);
  assert_int_equal (hv_ask_decision_parse ("d", &d), 0);
  assert_int_equal (d, HV_ASK_DENY);
  assert_int_equal (hv_ask_decision_parse ("yes", &d), -1);
  assert_int_equal (hv_ask_decision_parse ("", &d), -1);
  assert_string_equal (hv_ask_decision_name (HV_ASK_ALWAYS), "always");
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test_setup_teardown (test_dir_private, setup, teardown),
    cmocka_unit_test_setup_teardown (test_list_and_answer, setup, teardown),
    cmocka_unit_test_setup_teardown (test_hostile_files, setup, teardown),
    cmocka_unit_test_setup_teardown (test_always_file, setup, teardown),
    cmocka_unit_test (test_decision_names),
  };
  return cmocka_run_group_tests (tests, NULL, NULL);
}
