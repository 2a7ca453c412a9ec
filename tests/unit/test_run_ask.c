/* haven run's HAVEN_ASK_COMMAND runner (session/run_ask_command.c), driven
 * through its hook as the run's poll drives it, without a terminal:
 * requests planted in a private approvals directory as the holder writes
 * them, the user's command answering, failing, hanging, or answered
 * before it by another answerer. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "approvals.h"
#include "run_ask.h"
#include "run_ask_priv.h"
#include "tmp_tree.h"
#include "utils.h"

#define RUN "0123456789abcdef"
#define OTHER_RUN "fedcba9876543210"

struct fixture
{
  char *root;
  char *dir; /* the approvals directory */
  struct hv_run_ask *a;
};

static int64_t
now_ms (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_REALTIME, &ts);
  return (int64_t) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int
setup (void **state)
{
  struct fixture *f = calloc (1, sizeof (*f));
  f->root = tree_make ("run-ask");
  char *st = xasprintf ("%s/state", f->root), *cf = xasprintf ("%s/config", f->root);
  setenv ("XDG_STATE_HOME", st, 1);
  setenv ("XDG_CONFIG_HOME", cf, 1);
  setenv ("T", f->root, 1);
  free (st);
  free (cf);
  f->dir = xasprintf ("%s/state/haven/approvals", f->root);
  *state = f;
  return 0;
}

static int
teardown (void **state)
{
  struct fixture *f = *state;
  hv_run_ask_stop (f->a);
  free (f->dir);
  tree_remove (f->root);
  free (f);
  return 0;
}

static void
start (struct fixture *f, const char *command)
{
  hv_error *err = NULL;
  if (hv_run_ask_start (RUN, false, command, &f->a, &err) < 0)
    fail_msg ("start: %s", err->msg);
}

/* A request as the holder writes it: a temp name, then the rename. */
static void
plant (struct fixture *f, const char *run, int n, const char *name, int64_t deadline_ms)
{
  char *text = xasprintf ("{\"id\":\"%s-%d\",\"run\":\"%s\",\"policy\":\"p\",\"name\":\"%s\",\"type\":\"A\","
                          "\"command\":[\"npm\",\"install\"],\"project\":\"/work/p\",\"time\":\"2026-01-01T00:00:00Z\","
                          "\"deadline_ms\":%lld,\"haven_pid\":%d}",
                          run, n, run, name, (long long) deadline_ms, (int) getpid ());
  char *tmp = xasprintf (".%s-%d.request.tmp", run, n), *final = xasprintf ("%s-%d.request", run, n);
  tree_put (f->dir, tmp, text);
  char *from = xasprintf ("%s/%s", f->dir, tmp), *to = xasprintf ("%s/%s", f->dir, final);
  assert_int_equal (rename (from, to), 0);
  free (text);
  free (tmp);
  free (final);
  free (from);
  free (to);
}

/* The run's poll for ms milliseconds, or until done () says so. */
static void
drive (struct fixture *f, int ms, bool (*done) (struct fixture *))
{
  struct hv_run_hook hook;
  hv_run_ask_hook (f->a, &hook);
  int64_t until = now_ms () + ms;
  while (now_ms () < until && !(done && done (f)))
    {
      struct pollfd p = { .fd = hook.fd, .events = POLLIN };
      if (poll (&p, 1, 50) > 0)
        hook.fn (hook.data, NULL);
    }
}

static bool
answered (struct fixture *f)
{
  char *name = xasprintf (RUN "-1.answer");
  bool r = tree_exists (f->dir, name);
  free (name);
  return r;
}

static char *
answer_text (struct fixture *f)
{
  return tree_read (f->dir, RUN "-1.answer");
}

static pid_t
pid_in (struct fixture *f, const char *file)
{
  char *text = tree_read (f->root, file);
  pid_t pid = (pid_t) atoi (text);
  free (text);
  return pid;
}

/* Ended: no such process, or a zombie (a killed grandchild waits for
 * whoever reaps orphans here). */
static bool
gone (pid_t pid)
{
  for (int i = 0; i < 100; i++)
    {
      char path[64], buf[256] = "";
      snprintf (path, sizeof (path), "/proc/%d/stat", (int) pid);
      FILE *st = fopen (path, "r");
      if (st == NULL)
        return true;
      size_t n = fread (buf, 1, sizeof (buf) - 1, st);
      fclose (st);
      buf[n] = '\0';
      const char *end = strrchr (buf, ')');
      if (end && end[1] == ' ' && (end[2] == 'Z' || end[2] == 'X'))
        return true;
      usleep (10000);
    }
  return false;
}

/* "once" on its stdout, exit 0: the answer, by "command". */
static void
command_answers (void **state)
{
  struct fixture *f = *state;
  start (f, "echo once");
  plant (f, RUN, 1, "x.example", now_ms () + 5000);
  drive (f, 3000, answered);
  char *a = answer_text (f);
  assert_non_null (strstr (a, "\"decision\":\"once\""));
  assert_non_null (strstr (a, "\"by\":\"command\""));
  free (a);
}

/* The request in its environment, stdin /dev/null, in / (not the
 * project the agent wrote); "deny" is an answer too. */
static void
command_environment (void **state)
{
  struct fixture *f = *state;
  start (f, "env | grep ^HAVEN_ASK_ | LC_ALL=C sort > \"$T/env\"; readlink /proc/self/fd/0 > \"$T/stdin\"; pwd > \"$T/cwd\"; "
            "printf '  deny\\nrest'");
  int64_t deadline = now_ms () + 5000;
  plant (f, RUN, 1, "y.example", deadline);
  drive (f, 3000, answered);
  char *a = answer_text (f);
  assert_non_null (strstr (a, "\"decision\":\"deny\""));
  free (a);
  char *env = tree_read (f->root, "env");
  char *want = xasprintf ("HAVEN_ASK_COMMAND_LINE=npm install\nHAVEN_ASK_DEADLINE=%lld\nHAVEN_ASK_ID=" RUN "-1\n"
                          "HAVEN_ASK_NAME=y.example\nHAVEN_ASK_POLICY=p\nHAVEN_ASK_PROJECT=/work/p\n"
                          "HAVEN_ASK_RUN=" RUN "\nHAVEN_ASK_TYPE=A\n",
                          (long long) (deadline / 1000));
  assert_string_equal (env, want);
  free (env);
  free (want);
  char *in = tree_read (f->root, "stdin");
  assert_string_equal (in, "/dev/null\n");
  free (in);
  char *cwd = tree_read (f->root, "cwd");
  assert_string_equal (cwd, "/\n");
  free (cwd);
}

/* Not one of the four words, or a failure: no answer (the deadline decides). */
static void
command_no_answer (void **state)
{
  struct fixture *f = *state;
  start (f, "if [ \"$HAVEN_ASK_NAME\" = a.example ]; then echo maybe; else echo once; exit 3; fi; touch \"$T/$HAVEN_ASK_NAME\"");
  plant (f, RUN, 1, "a.example", now_ms () + 5000);
  plant (f, RUN, 2, "b.example", now_ms () + 5000);
  drive (f, 1500, NULL);
  assert_false (answered (f));
  assert_false (tree_exists (f->dir, RUN "-2.answer"));
  assert_true (tree_exists (f->root, "a.example"));
}

/* Still running at the deadline: killed, with what it started. */
static void
command_killed_at_deadline (void **state)
{
  struct fixture *f = *state;
  start (f, "sleep 100 & echo $! > \"$T/child\"; echo $$ > \"$T/pid\"; wait; echo once");
  plant (f, RUN, 1, "slow.example", now_ms () + 800);
  drive (f, 400, NULL);
  pid_t pid = pid_in (f, "pid"), child = pid_in (f, "child");
  assert_true (pid > 0 && child > 0);
  assert_int_equal (kill (pid, 0), 0);
  drive (f, 800, NULL);
  assert_true (gone (pid));
  assert_true (gone (child));
  assert_false (answered (f));
}

/* Answered elsewhere first: the command is no longer needed. */
static void
command_killed_when_answered_elsewhere (void **state)
{
  struct fixture *f = *state;
  start (f, "echo $$ > \"$T/pid\"; exec sleep 100");
  plant (f, RUN, 1, "z.example", now_ms () + 10000);
  drive (f, 400, NULL);
  pid_t pid = pid_in (f, "pid");
  assert_true (pid > 0);
  hv_error *err = NULL;
  int dirfd = open (f->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  assert_true (dirfd >= 0);
  if (hv_approval_answer (dirfd, RUN "-1", HV_ASK_ONCE, "approve", NULL, &err) < 0)
    fail_msg ("answer: %s", err->msg);
  close (dirfd);
  drive (f, 300, NULL);
  assert_true (gone (pid));
  char *a = answer_text (f);
  assert_non_null (strstr (a, "\"by\":\"approve\""));
  free (a);
}

/* Its answer given, what it left running is killed. */
static void
command_leftovers_killed (void **state)
{
  struct fixture *f = *state;
  start (f, "sleep 100 & echo $! > \"$T/child\"; echo run");
  plant (f, RUN, 1, "x.example", now_ms () + 5000);
  drive (f, 3000, answered);
  char *a = answer_text (f);
  assert_non_null (strstr (a, "\"decision\":\"run\""));
  free (a);
  assert_true (gone (pid_in (f, "child")));
}

/* The run's end kills a command still running. */
static void
command_killed_at_stop (void **state)
{
  struct fixture *f = *state;
  start (f, "echo $$ > \"$T/pid\"; exec sleep 100");
  plant (f, RUN, 1, "x.example", now_ms () + 10000);
  drive (f, 400, NULL);
  pid_t pid = pid_in (f, "pid");
  assert_true (pid > 0);
  hv_run_ask_stop (f->a);
  f->a = NULL;
  assert_true (gone (pid));
}

/* Another run's request is not this run's to answer. */
static void
other_runs_ignored (void **state)
{
  struct fixture *f = *state;
  start (f, "touch \"$T/ran\"; echo once");
  plant (f, OTHER_RUN, 1, "x.example", now_ms () + 5000);
  drive (f, 600, NULL);
  assert_false (tree_exists (f->root, "ran"));
  assert_false (tree_exists (f->dir, OTHER_RUN "-1.answer"));
}

/* The keys typed to the question: an arrow key (ESC [ A, ESC O A, with
 * parameters) is not "a"lways; other keys are ignored. */
static void
terminal_keys (void **state)
{
  (void) state;
  hv_ask_decision d = HV_ASK_DENY;
  static const struct
  {
    const char *keys;
    int want; /* -1: no answer */
  } cases[] = { { "o", HV_ASK_ONCE },
                { "R", HV_ASK_RUN },
                { "xyz a", HV_ASK_ALWAYS },
                { "d", HV_ASK_DENY },
                { "\033[A", -1 },
                { "\033OA", -1 },
                { "\033[1;5D", -1 },
                { "\033[A\033[Bo", HV_ASK_ONCE },
                { "\033", -1 },
                { "\033[", -1 },
                { "qwe\r\n", -1 },
                { "\003", -1 } };
  for (size_t i = 0; i < sizeof (cases) / sizeof (cases[0]); i++)
    {
      int esc = 0;
      int r = hv_ask_key_decision (cases[i].keys, strlen (cases[i].keys), &esc, &d);
      if (cases[i].want < 0)
        assert_int_equal (r, -1);
      else
        {
          assert_int_equal (r, 0);
          assert_int_equal (d, cases[i].want);
        }
    }
  /* A sequence split across two reads. */
  int esc = 0;
  assert_int_equal (hv_ask_key_decision ("\033[", 2, &esc, &d), -1);
  assert_int_equal (hv_ask_key_decision ("A", 1, &esc, &d), -1);
  assert_int_equal (hv_ask_key_decision ("\033", 1, &esc, &d), -1);
  assert_int_equal (hv_ask_key_decision ("O", 1, &esc, &d), -1);
  assert_int_equal (hv_ask_key_decision ("D", 1, &esc, &d), -1);
  assert_int_equal (hv_ask_key_decision ("r", 1, &esc, &d), 0);
  assert_int_equal (d, HV_ASK_RUN);
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test_setup_teardown (command_answers, setup, teardown),
    cmocka_unit_test_setup_teardown (command_environment, setup, teardown),
    cmocka_unit_test_setup_teardown (command_no_answer, setup, teardown),
    cmocka_unit_test_setup_teardown (command_killed_at_deadline, setup, teardown),
    cmocka_unit_test_setup_teardown (command_killed_when_answered_elsewhere, setup, teardown),
    cmocka_unit_test_setup_teardown (command_leftovers_killed, setup, teardown),
    cmocka_unit_test_setup_teardown (command_killed_at_stop, setup, teardown),
    cmocka_unit_test_setup_teardown (other_runs_ignored, setup, teardown),
    cmocka_unit_test (terminal_keys),
  };
  return cmocka_run_group_tests (tests, NULL, NULL);
}
