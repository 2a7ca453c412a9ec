/* The files API of a sandbox's workspace (session/sandbox_files.c): the
 * sandbox wrote the workspace, so every link, "..", fifo and device it
 * may have planted is refused, never followed or opened. */
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
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cmocka.h>

#include "sandbox_files.h"
#include "utils.h"

/* A workspace and, beside it, a directory outside it that links point to. */
struct fixture
{
  char root[64];
  char *ws, *outside;
  int ws_fd;
};

static int
setup (void **state)
{
  struct fixture *f = calloc (1, sizeof (*f));
  strcpy (f->root, "/tmp/hv-sandbox-files-XXXXXX");
  assert_non_null (mkdtemp (f->root));
  f->ws = xasprintf ("%s/ws", f->root);
  f->outside = xasprintf ("%s/outside", f->root);
  assert_int_equal (mkdir (f->ws, 0700), 0);
  assert_int_equal (mkdir (f->outside, 0700), 0);
  cleanup_free char *secret = xasprintf ("%s/secret", f->outside);
  hv_error *err = NULL;
  assert_int_equal (write_file (secret, "host secret", &err), 0);
  f->ws_fd = open (f->ws, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  assert_true (f->ws_fd >= 0);
  *state = f;
  return 0;
}

static int
teardown (void **state)
{
  struct fixture *f = *state;
  close (f->ws_fd);
  cleanup_free char *cmd = xasprintf ("rm -rf '%s'", f->root);
  assert_int_equal (system (cmd), 0);
  free (f->ws);
  free (f->outside);
  free (f);
  return 0;
}

static char *
slurp (const char *dir, const char *name)
{
  cleanup_free char *p = xasprintf ("%s/%s", dir, name);
  FILE *fp = fopen (p, "r");
  if (fp == NULL)
    return NULL;
  char buf[256] = "";
  size_t n = fread (buf, 1, sizeof (buf) - 1, fp);
  fclose (fp);
  buf[n] = '\0';
  return xstrdup (buf);
}

static void
test_path_ok (void **state)
{
  (void) state;
  assert_true (hv_workspace_path_ok ("a"));
  assert_true (hv_workspace_path_ok ("a/b.txt"));
  assert_true (hv_workspace_path_ok (".hidden/x"));
  assert_true (hv_workspace_path_ok ("..."));
  assert_false (hv_workspace_path_ok (NULL));
  assert_false (hv_workspace_path_ok (""));
  assert_false (hv_workspace_path_ok ("/etc/passwd"));
  assert_false (hv_workspace_path_ok (".."));
  assert_false (hv_workspace_path_ok ("a/../b"));
  assert_false (hv_workspace_path_ok ("a/.."));
  assert_false (hv_workspace_path_ok ("."));
  assert_false (hv_workspace_path_ok ("./a"));
  assert_false (hv_workspace_path_ok ("a//b"));
  assert_false (hv_workspace_path_ok ("a/"));
  char long_path[4098];
  memset (long_path, 'a', sizeof (long_path) - 1);
  long_path[sizeof (long_path) - 1] = '\0';
  assert_false (hv_workspace_path_ok (long_path));
  for (size_t i = 100; i < 4095; i += 101)
    long_path[i] = '/';
  long_path[4095] = '\0';
  assert_true (hv_workspace_path_ok (long_path));
  long_path[4095] = 'a';
  long_path[4096] = '\0';
  assert_false (hv_workspace_path_ok (long_path));
}

static void
test_write_read_roundtrip (void **state)
{
  struct fixture *f = *state;
  hv_error *err = NULL;
  assert_int_equal (hv_workspace_write (f->ws_fd, "in.txt", "data", 4, 0, false, &err), 0);
  cleanup_free char *got = slurp (f->ws, "in.txt");
  assert_string_equal (got, "data");
  struct stat st;
  cleanup_free char *p = xasprintf ("%s/in.txt", f->ws);
  assert_int_equal (stat (p, &st), 0);
  assert_int_equal (st.st_mode & 07777, 0644);
  assert_int_equal (st.st_uid, geteuid ());
  /* A missing directory: made only when asked. */
  assert_int_equal (hv_workspace_write (f->ws_fd, "d/e/f.sh", "x", 1, 0755, false, &err), -1);
  hv_error_free (&err);
  assert_int_equal (hv_workspace_write (f->ws_fd, "d/e/f.sh", "x", 1, 0755, true, &err), 0);
  cleanup_free char *p2 = xasprintf ("%s/d/e/f.sh", f->ws);
  assert_int_equal (stat (p2, &st), 0);
  assert_int_equal (st.st_mode & 07777, 0755);
  char *data = NULL;
  size_t len = 0;
  bool trunc = true;
  assert_int_equal (hv_workspace_read (f->ws_fd, "d/e/f.sh", 100, &data, &len, &trunc, &err), 0);
  assert_int_equal (len, 1);
  assert_false (trunc);
  assert_memory_equal (data, "x", 1);
  free (data);
  /* Missing file. */
  assert_int_equal (hv_workspace_read (f->ws_fd, "nope", 100, &data, &len, &trunc, &err), -1);
  assert_int_equal (err->errno_code, ENOENT);
  hv_error_free (&err);
}

static void
test_atomic_replace (void **state)
{
  struct fixture *f = *state;
  hv_error *err = NULL;
  assert_int_equal (hv_workspace_write (f->ws_fd, "f", "old contents", 12, 0, false, &err), 0);
  cleanup_free char *p = xasprintf ("%s/f", f->ws);
  /* A reader that has the old file open keeps reading the old file. */
  int fd = open (p, O_RDONLY | O_CLOEXEC);
  assert_true (fd >= 0);
  struct stat before, after;
  assert_int_equal (fstat (fd, &before), 0);
  assert_int_equal (hv_workspace_write (f->ws_fd, "f", "new", 3, 0, false, &err), 0);
  assert_int_equal (stat (p, &after), 0);
  assert_true (before.st_ino != after.st_ino);
  char buf[32] = "";
  assert_int_equal (read (fd, buf, sizeof (buf)), 12);
  close (fd);
  cleanup_free char *got = slurp (f->ws, "f");
  assert_string_equal (got, "new");
  /* No temporary left beside it. */
  struct hv_workspace_entry *e = NULL;
  size_t n = 0;
  bool trunc = false;
  assert_int_equal (hv_workspace_list (f->ws_fd, "", 100, &e, &n, &trunc, &err), 0);
  assert_int_equal (n, 1);
  assert_string_equal (e[0].name, "f");
  hv_workspace_entries_free (e, n);
}

/* A link at each component of "a/b/c", pointing outside: write, read and
 * list all refuse, and nothing outside changes or is read. */
static void
test_symlink_each_component (void **state)
{
  struct fixture *f = *state;
  static const char *const prefixes[] = { "", "a/", "a/b/" };
  for (size_t k = 0; k < 3; k++)
    {
      cleanup_free char *cmd = xasprintf ("rm -rf '%s'/a && mkdir -p '%s'/%s.", f->ws, f->ws, prefixes[k]);
      assert_int_equal (system (cmd), 0);
      const char *name = k == 0 ? "a" : k == 1 ? "b" : "c";
      cleanup_free char *at = xasprintf ("%s/%s%s", f->ws, prefixes[k], name);
      /* The last component links to the secret file, the others to the
       * directory that holds it. */
      cleanup_free char *target = k == 2 ? xasprintf ("%s/secret", f->outside) : xstrdup (f->outside);
      assert_int_equal (symlink (target, at), 0);
      const char *rel = k == 2 ? "a/b/c" : k == 1 ? "a/b/secret" : "a/secret";
      hv_error *err = NULL;
      char *data = NULL;
      size_t len = 0;
      bool trunc = false;
      assert_int_equal (hv_workspace_read (f->ws_fd, rel, 100, &data, &len, &trunc, &err), -1);
      assert_null (data);
      hv_error_free (&err);
      assert_int_equal (hv_workspace_write (f->ws_fd, rel, "pwned", 5, 0, false, &err), -1);
      hv_error_free (&err);
      assert_int_equal (hv_workspace_write (f->ws_fd, rel, "pwned", 5, 0, true, &err), -1);
      hv_error_free (&err);
      struct hv_workspace_entry *e = NULL;
      size_t n = 0;
      if (k < 2)
        {
          cleanup_free char *dir = xasprintf ("%s%s", prefixes[k], name);
          assert_int_equal (hv_workspace_list (f->ws_fd, dir, 100, &e, &n, &trunc, &err), -1);
          hv_error_free (&err);
        }
      cleanup_free char *secret = slurp (f->outside, "secret");
      assert_string_equal (secret, "host secret");
      cleanup_free char *planted = slurp (f->outside, "pwned");
      assert_null (planted);
    }
}

static void
test_dotdot_and_absolute (void **state)
{
  struct fixture *f = *state;
  hv_error *err = NULL;
  char *data = NULL;
  size_t len = 0;
  bool trunc = false;
  assert_int_equal (hv_workspace_read (f->ws_fd, "../outside/secret", 100, &data, &len, &trunc, &err), -1);
  hv_error_free (&err);
  cleanup_free char *abs = xasprintf ("%s/secret", f->outside);
  assert_int_equal (hv_workspace_read (f->ws_fd, abs, 100, &data, &len, &trunc, &err), -1);
  hv_error_free (&err);
  assert_int_equal (hv_workspace_write (f->ws_fd, "../outside/x", "x", 1, 0, true, &err), -1);
  hv_error_free (&err);
  struct hv_workspace_entry *e = NULL;
  size_t n = 0;
  assert_int_equal (hv_workspace_list (f->ws_fd, "..", 100, &e, &n, &trunc, &err), -1);
  hv_error_free (&err);
  cleanup_free char *x = slurp (f->outside, "x");
  assert_null (x);
}

/* A fifo would block an open, a device would act on it: both refused,
 * never opened (the test would hang on the fifo if it were). */
static void
test_fifo_and_device (void **state)
{
  struct fixture *f = *state;
  cleanup_free char *fifo = xasprintf ("%s/fifo", f->ws);
  assert_int_equal (mkfifo (fifo, 0600), 0);
  hv_error *err = NULL;
  char *data = NULL;
  size_t len = 0;
  bool trunc = false;
  assert_int_equal (hv_workspace_read (f->ws_fd, "fifo", 100, &data, &len, &trunc, &err), -1);
  assert_non_null (strstr (err->msg, "not a regular file"));
  hv_error_free (&err);
  assert_int_equal (hv_workspace_write (f->ws_fd, "fifo", "x", 1, 0, false, &err), -1);
  hv_error_free (&err);
  struct stat st;
  assert_int_equal (lstat (fifo, &st), 0);
  assert_true (S_ISFIFO (st.st_mode));
  cleanup_free char *dev = xasprintf ("%s/null", f->ws);
  if (mknod (dev, S_IFCHR | 0666, makedev (1, 3)) == 0)
    {
      assert_int_equal (hv_workspace_read (f->ws_fd, "null", 100, &data, &len, &trunc, &err), -1);
      hv_error_free (&err);
      assert_int_equal (hv_workspace_write (f->ws_fd, "null", "x", 1, 0, false, &err), -1);
      hv_error_free (&err);
    }
  struct hv_workspace_entry *e = NULL;
  size_t n = 0;
  assert_int_equal (hv_workspace_list (f->ws_fd, NULL, 100, &e, &n, &trunc, &err), 0);
  assert_true (n >= 1);
  assert_string_equal (e[0].name, "fifo");
  assert_int_equal (e[0].type, 'o');
  hv_workspace_entries_free (e, n);
  /* A directory is not a file to read or replace. */
  cleanup_free char *d = xasprintf ("%s/dir", f->ws);
  assert_int_equal (mkdir (d, 0755), 0);
  assert_int_equal (hv_workspace_read (f->ws_fd, "dir", 100, &data, &len, &trunc, &err), -1);
  assert_int_equal (err->errno_code, EISDIR);
  hv_error_free (&err);
  assert_int_equal (hv_workspace_write (f->ws_fd, "dir", "x", 1, 0, false, &err), -1);
  hv_error_free (&err);
}

/* A name of NAME_MAX bytes is written (the temporary beside it has a
 * short name of its own) and a deep path works. */
static void
test_long_paths (void **state)
{
  struct fixture *f = *state;
  char name[256];
  memset (name, 'n', 255);
  name[255] = '\0';
  hv_error *err = NULL;
  assert_int_equal (hv_workspace_write (f->ws_fd, name, "long", 4, 0, false, &err), 0);
  cleanup_free char *got = slurp (f->ws, name);
  assert_string_equal (got, "long");
  char deep[2048] = "";
  for (int i = 0; i < 200; i++)
    strcat (deep, "dd/");
  strcat (deep, "f");
  assert_int_equal (hv_workspace_write (f->ws_fd, deep, "deep", 4, 0, true, &err), 0);
  char *data = NULL;
  size_t len = 0;
  bool trunc = false;
  assert_int_equal (hv_workspace_read (f->ws_fd, deep, 10, &data, &len, &trunc, &err), 0);
  assert_int_equal (len, 4);
  free (data);
}

static void
test_truncation (void **state)
{
  struct fixture *f = *state;
  hv_error *err = NULL;
  size_t big = 200000;
  cleanup_free char *payload = xmalloc0 (big);
  memset (payload, 'z', big);
  assert_int_equal (hv_workspace_write (f->ws_fd, "big", payload, big, 0, false, &err), 0);
  char *data = NULL;
  size_t len = 0;
  bool trunc = false;
  assert_int_equal (hv_workspace_read (f->ws_fd, "big", 1000, &data, &len, &trunc, &err), 0);
  assert_int_equal (len, 1000);
  assert_true (trunc);
  free (data);
  assert_int_equal (hv_workspace_read (f->ws_fd, "big", big, &data, &len, &trunc, &err), 0);
  assert_int_equal (len, big);
  assert_false (trunc);
  assert_memory_equal (data, payload, big);
  free (data);
  assert_int_equal (hv_workspace_read (f->ws_fd, "big", big - 1, &data, &len, &trunc, &err), 0);
  assert_int_equal (len, big - 1);
  assert_true (trunc);
  free (data);
  assert_int_equal (hv_workspace_read (f->ws_fd, "big", 0, &data, &len, &trunc, &err), 0);
  assert_int_equal (len, 0);
  assert_true (trunc);
  free (data);
}

static void
test_list_sorted_truncated (void **state)
{
  struct fixture *f = *state;
  hv_error *err = NULL;
  assert_int_equal (hv_workspace_write (f->ws_fd, "c", "ccc", 3, 0, false, &err), 0);
  assert_int_equal (hv_workspace_write (f->ws_fd, "a", "a", 1, 0, false, &err), 0);
  assert_int_equal (hv_workspace_write (f->ws_fd, "b/x", "", 0, 0, true, &err), 0);
  cleanup_free char *l = xasprintf ("%s/d", f->ws);
  assert_int_equal (symlink ("/etc", l), 0);
  struct hv_workspace_entry *e = NULL;
  size_t n = 0;
  bool trunc = true;
  assert_int_equal (hv_workspace_list (f->ws_fd, "", 100, &e, &n, &trunc, &err), 0);
  assert_int_equal (n, 4);
  assert_false (trunc);
  assert_string_equal (e[0].name, "a");
  assert_int_equal (e[0].type, 'f');
  assert_int_equal (e[0].size, 1);
  assert_string_equal (e[1].name, "b");
  assert_int_equal (e[1].type, 'd');
  assert_string_equal (e[2].name, "c");
  assert_int_equal (e[2].size, 3);
  assert_string_equal (e[3].name, "d");
  assert_int_equal (e[3].type, 'l');
  hv_workspace_entries_free (e, n);
  assert_int_equal (hv_workspace_list (f->ws_fd, "", 2, &e, &n, &trunc, &err), 0);
  assert_int_equal (n, 2);
  assert_true (trunc);
  assert_string_equal (e[1].name, "b");
  hv_workspace_entries_free (e, n);
  assert_int_equal (hv_workspace_list (f->ws_fd, "b", 10, &e, &n, &trunc, &err), 0);
  assert_int_equal (n, 1);
  assert_string_equal (e[0].name, "x");
  hv_workspace_entries_free (e, n);
  /* The link to /etc is listed, never entered. */
  assert_int_equal (hv_workspace_list (f->ws_fd, "d", 10, &e, &n, &trunc, &err), -1);
  hv_error_free (&err);
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_path_ok),
    cmocka_unit_test_setup_teardown (test_write_read_roundtrip, setup, teardown),
    cmocka_unit_test_setup_teardown (test_atomic_replace, setup, teardown),
    cmocka_unit_test_setup_teardown (test_symlink_each_component, setup, teardown),
    cmocka_unit_test_setup_teardown (test_dotdot_and_absolute, setup, teardown),
    cmocka_unit_test_setup_teardown (test_fifo_and_device, setup, teardown),
    cmocka_unit_test_setup_teardown (test_long_paths, setup, teardown),
    cmocka_unit_test_setup_teardown (test_truncation, setup, teardown),
    cmocka_unit_test_setup_teardown (test_list_sorted_truncated, setup, teardown),
  };
  return cmocka_run_group_tests (tests, NULL, NULL);
}
