/* The trail's chain (runtime/audit/trail_chain.h): records appended by
 * hv_trail_append carry seq and prev; hv_trail_verify walks them and
 * reports the first change, removal, insertion or cut, on the line where
 * it is.  Also: lines of an older haven before the chain, a line cut
 * short by a writer that died (kept, the chain goes on after it), and
 * writers in several processes at once, some sharing one open file
 * description (as a run's session, listener and monitor do), losing no
 * line and breaking no link. */
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
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "json_gen.h"
#include "sha256.h"
#include "trail_chain.h"
#include "utils.h"

static char path[] = "/tmp/test-trail-chain-XXXXXX";

static int
setup (void **state)
{
  (void) state;
  strcpy (path, "/tmp/test-trail-chain-XXXXXX");
  int fd = mkstemp (path);
  if (fd < 0)
    return -1;
  close (fd);
  return 0;
}

static int
teardown (void **state)
{
  (void) state;
  unlink (path);
  return 0;
}

/* A write-only, appending descriptor, as the writers open trails. */
static int
open_append (void)
{
  int fd = open (path, O_WRONLY | O_APPEND | O_CLOEXEC);
  assert_true (fd >= 0);
  return fd;
}

static void
append (int fd, const char *event, int n)
{
  yajl_gen g = yajl_gen_alloc (NULL);
  yajl_gen_map_open (g);
  jg_str (g, "time");
  jg_str (g, "2026-11-30T00:00:00Z");
  jg_str (g, "event");
  jg_str (g, event);
  jg_str (g, "n");
  yajl_gen_integer (g, n);
  assert_true (hv_trail_append (fd, g) > 0);
  yajl_gen_free (g);
}

static void
write_text (const char *text)
{
  FILE *f = fopen (path, "w");
  assert_non_null (f);
  fputs (text, f);
  fclose (f);
}

static char *
read_text (void)
{
  FILE *f = fopen (path, "r");
  assert_non_null (f);
  char *buf = calloc (1, 1 << 20);
  size_t n = fread (buf, 1, (1 << 20) - 1, f);
  buf[n] = '\0';
  fclose (f);
  return buf;
}

/* Line i (1-based) of text, as a new string. */
static char *
line_of (const char *text, int i)
{
  const char *p = text;
  for (int k = 1; k < i; k++)
    {
      p = strchr (p, '\n');
      assert_non_null (p);
      p++;
    }
  size_t len = strcspn (p, "\n");
  return strndup (p, len);
}

static void
verify (struct hv_trail_verdict *v)
{
  int fd = open (path, O_RDONLY | O_CLOEXEC);
  assert_true (fd >= 0);
  assert_int_equal (hv_trail_verify (fd, v), 0);
  close (fd);
}

static void
test_chain_links_each_line (void **state)
{
  (void) state;
  int fd = open_append ();
  for (int i = 0; i < 5; i++)
    append (fd, "e", i);
  close (fd);
  cleanup_free char *text = read_text ();
  for (int i = 1; i <= 5; i++)
    {
      cleanup_free char *line = line_of (text, i);
      struct hv_trail_link l;
      hv_trail_link_parse (line, strlen (line), &l);
      assert_int_equal (l.kind, HV_TRAIL_CHAINED);
      assert_int_equal (l.seq, i);
      char want[HV_SHA256_HEX_SIZE] = "0000000000000000000000000000000000000000000000000000000000000000";
      if (i > 1)
        {
          cleanup_free char *before = line_of (text, i - 1);
          hv_sha256_hex (before, strlen (before), want);
        }
      assert_string_equal (l.prev, want);
      /* seq and prev close the record. */
      assert_non_null (strstr (line, "\"n\":"));
      assert_true (strstr (line, "\"seq\":") > strstr (line, "\"n\":"));
    }
  struct hv_trail_verdict v;
  verify (&v);
  assert_true (v.ok);
  assert_int_equal (v.chained, 5);
  assert_int_equal (v.before_chain, 0);
  assert_int_equal (v.first_seq, 1);
  assert_int_equal (v.last_seq, 5);
  assert_string_equal (v.first_time, "2026-11-30T00:00:00Z");
  cleanup_free char *last = line_of (text, 5);
  char head[HV_SHA256_HEX_SIZE];
  hv_sha256_hex (last, strlen (last), head);
  assert_string_equal (v.head, head);
}

/* An older haven's lines: counted, not checked; the chain starts after
 * them at seq 1 with the hash of the last of them. */
static void
test_older_lines_before_chain (void **state)
{
  (void) state;
  write_text ("{\"event\":\"start\",\"policy\":\"old\"}\n{\"event\":\"exit\",\"policy\":\"old\"}\n");
  int fd = open_append ();
  append (fd, "start", 1);
  append (fd, "exit", 2);
  close (fd);
  cleanup_free char *text = read_text ();
  cleanup_free char *third = line_of (text, 3);
  struct hv_trail_link l;
  hv_trail_link_parse (third, strlen (third), &l);
  assert_int_equal (l.seq, 1);
  char want[HV_SHA256_HEX_SIZE];
  hv_sha256_hex ("{\"event\":\"exit\",\"policy\":\"old\"}", 31, want);
  assert_string_equal (l.prev, want);
  struct hv_trail_verdict v;
  verify (&v);
  assert_true (v.ok);
  assert_int_equal (v.before_chain, 2);
  assert_int_equal (v.chained, 2);
  /* An unchained line after chained ones fails, on its line. */
  FILE *f = fopen (path, "a");
  fputs ("{\"event\":\"start\",\"policy\":\"old\"}\n", f);
  fclose (f);
  verify (&v);
  assert_false (v.ok);
  assert_int_equal (v.line, 5);
  assert_non_null (strstr (v.problem, "not chained"));
}

/* Five chained lines, then the file rewritten by edit(lines): the first
 * problem on want_line, its words containing want_words. */
static void
tamper (char *(*edit) (char *lines[5]), uint64_t want_line, const char *want_words)
{
  unlink (path);
  int fd = open (path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
  assert_true (fd >= 0);
  for (int i = 0; i < 5; i++)
    append (fd, "e", i);
  close (fd);
  cleanup_free char *text = read_text ();
  char *lines[5];
  for (int i = 0; i < 5; i++)
    lines[i] = line_of (text, i + 1);
  cleanup_free char *edited = edit (lines);
  for (int i = 0; i < 5; i++)
    free (lines[i]);
  write_text (edited);
  struct hv_trail_verdict v;
  verify (&v);
  if (v.ok || v.line != want_line || strstr (v.problem, want_words) == NULL)
    fail_msg ("want line %llu \"%s\", got ok=%d line %llu \"%s\"", (unsigned long long) want_line, want_words, v.ok,
              (unsigned long long) v.line, v.problem);
}

static char *
joined (char **lines, int n, const char *tail)
{
  size_t len = strlen (tail) + 1;
  for (int i = 0; i < n; i++)
    len += strlen (lines[i]) + 1;
  char *out = calloc (1, len);
  for (int i = 0; i < n; i++)
    {
      strcat (out, lines[i]);
      strcat (out, "\n");
    }
  strcat (out, tail);
  return out;
}

static char *
forge_field (char *lines[5])
{
  char *p = strstr (lines[1], "\"n\":1");
  assert_non_null (p);
  p[4] = '7';
  return joined (lines, 5, "");
}

static char *
remove_line (char *lines[5])
{
  char *kept[4] = { lines[0], lines[1], lines[3], lines[4] };
  return joined (kept, 4, "");
}

static char *
insert_copy (char *lines[5])
{
  char *more[6] = { lines[0], lines[1], lines[2], lines[1], lines[3], lines[4] };
  return joined (more, 6, "");
}

static char *
insert_unchained (char *lines[5])
{
  char *more[6] = { lines[0], lines[1], "{\"event\":\"exit\",\"status\":0}", lines[2], lines[3], lines[4] };
  return joined (more, 6, "");
}

static char *
truncate_last (char *lines[5])
{
  lines[4][strlen (lines[4]) / 2] = '\0';
  char *out = joined (lines, 4, lines[4]);
  return out;
}

static char *
not_json (char *lines[5])
{
  lines[2][0] = 'x';
  return joined (lines, 5, "");
}

static char *
remove_first (char *lines[5])
{
  return joined (lines + 1, 4, "");
}

static void
test_tampering_caught_where_it_is (void **state)
{
  (void) state;
  tamper (forge_field, 2, "changed");
  tamper (remove_line, 3, "1 record missing");
  tamper (insert_copy, 4, "seq 2 after seq 3");
  tamper (insert_unchained, 3, "not chained");
  tamper (truncate_last, 5, "truncated");
  tamper (not_json, 3, "not a JSON record");
  tamper (remove_first, 1, "seq 2 where the chain starts");
}

/* A writer that died in the middle of its line: the bytes stay, the
 * next record starts a new line and chains to them (seq 1), and the
 * verifier reports the cut line as the first problem. */
static void
test_cut_line_kept_as_evidence (void **state)
{
  (void) state;
  int fd = open_append ();
  append (fd, "e", 0);
  append (fd, "e", 1);
  assert_int_equal (write (fd, "{\"event\":\"den", 13), 13);
  append (fd, "e", 2);
  close (fd);
  cleanup_free char *text = read_text ();
  cleanup_free char *cut = line_of (text, 3);
  assert_string_equal (cut, "{\"event\":\"den");
  cleanup_free char *after = line_of (text, 4);
  struct hv_trail_link l;
  hv_trail_link_parse (after, strlen (after), &l);
  assert_int_equal (l.kind, HV_TRAIL_CHAINED);
  assert_int_equal (l.seq, 1);
  char want[HV_SHA256_HEX_SIZE];
  hv_sha256_hex ("{\"event\":\"den", 13, want);
  assert_string_equal (l.prev, want);
  struct hv_trail_verdict v;
  verify (&v);
  assert_false (v.ok);
  assert_int_equal (v.line, 3);
  assert_non_null (strstr (v.problem, "not a JSON record"));
}

/* Writers in 4 processes at once, each with 2 children sharing its
 * open file description (fork after open): no line lost, none cut into
 * another, the chain whole. */
#define WRITERS 4
#define RECORDS 150
static void
test_concurrent_writers (void **state)
{
  (void) state;
  pid_t pids[WRITERS];
  for (int w = 0; w < WRITERS; w++)
    {
      pids[w] = fork ();
      assert_true (pids[w] >= 0);
      if (pids[w] == 0)
        {
          int fd = open_append ();
          pid_t kid = fork ();
          char event[32];
          snprintf (event, sizeof (event), "w%d-%s", w, kid == 0 ? "child" : "parent");
          for (int i = 0; i < RECORDS; i++)
            append (fd, event, i);
          if (kid > 0)
            waitpid (kid, NULL, 0);
          _exit (0);
        }
    }
  for (int w = 0; w < WRITERS; w++)
    {
      int status;
      assert_int_equal (waitpid (pids[w], &status, 0), pids[w]);
      assert_true (WIFEXITED (status) && WEXITSTATUS (status) == 0);
    }
  struct hv_trail_verdict v;
  verify (&v);
  if (!v.ok)
    fail_msg ("line %llu: %s", (unsigned long long) v.line, v.problem);
  assert_int_equal (v.chained, WRITERS * 2 * RECORDS);
  assert_int_equal (v.last_seq, WRITERS * 2 * RECORDS);
}

/* Not a regular file (a pipe): written whole, without seq and prev. */
static void
test_pipe_unchained (void **state)
{
  (void) state;
  int p[2];
  assert_int_equal (pipe (p), 0);
  append (p[1], "e", 1);
  char buf[256] = "";
  ssize_t n = read (p[0], buf, sizeof (buf) - 1);
  assert_true (n > 0);
  assert_string_equal (buf, "{\"time\":\"2026-11-30T00:00:00Z\",\"event\":\"e\",\"n\":1}\n");
  close (p[0]);
  close (p[1]);
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test_setup_teardown (test_chain_links_each_line, setup, teardown),
    cmocka_unit_test_setup_teardown (test_older_lines_before_chain, setup, teardown),
    cmocka_unit_test_setup_teardown (test_tampering_caught_where_it_is, setup, teardown),
    cmocka_unit_test_setup_teardown (test_cut_line_kept_as_evidence, setup, teardown),
    cmocka_unit_test_setup_teardown (test_concurrent_writers, setup, teardown),
    cmocka_unit_test (test_pipe_unchained),
  };
  return cmocka_run_group_tests (tests, NULL, NULL);
}
