/* Unit tests of link-free path resolution (base/safe_path.c), as any
 * user: a tree with links planted the way a hostile rootfs or project
 * would plant them (absolute and relative, in the middle and at the end,
 * out of the root, in loops), ".." climbing out, "." and repeated
 * slashes, a FIFO and a file where a directory is expected.
 *
 * The tree (T a fresh temporary directory):
 *   T/outside/secret          "outside": what no resolution may reach
 *   T/root/dir/file           "file"
 *   T/root/outside/secret     "inside": where a clamped climb lands
 *   T/root/mid -> dir         relative link, used in the middle
 *   T/root/abs -> /dir        absolute link (to the root's dir, in root)
 *   T/root/abs_out -> T/outside   absolute link out of the root
 *   T/root/rel_out -> ../../outside  relative link climbing out
 *   T/root/loop1 <-> loop2    a loop
 *   T/root/fifo               a FIFO */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "safe_path.h"
#include "utils.h"
#include "tmp_tree.h"
#include "unit_skip.h"

struct fixture
{
  char *top;  /* T */
  char *root; /* T/root */
  int rootfd; /* O_PATH of T/root */
};

static int
setup (void **state)
{
  struct fixture *f = xmalloc0 (sizeof (*f));
  f->top = tree_make ("safe-path");
  f->root = xasprintf ("%s/root", f->top);
  tree_mkdir (f->top, "outside");
  tree_put (f->top, "outside/secret", "outside");
  tree_mkdir (f->top, "root");
  tree_mkdir (f->root, "dir");
  tree_put (f->root, "dir/file", "file");
  tree_mkdir (f->root, "outside");
  tree_put (f->root, "outside/secret", "inside");
  tree_link (f->root, "mid", "dir");
  tree_link (f->root, "abs", "/dir");
  cleanup_free char *out = xasprintf ("%s/outside", f->top);
  tree_link (f->root, "abs_out", out);
  tree_link (f->root, "rel_out", "../../outside");
  tree_link (f->root, "loop1", "loop2");
  tree_link (f->root, "loop2", "loop1");
  cleanup_free char *fifo = xasprintf ("%s/fifo", f->root);
  assert_int_equal (mkfifo (fifo, 0600), 0);
  f->rootfd = open (f->root, O_PATH | O_DIRECTORY | O_CLOEXEC);
  assert_true (f->rootfd >= 0);
  *state = f;
  return 0;
}

static int
teardown (void **state)
{
  struct fixture *f = *state;
  close (f->rootfd);
  free (f->root);
  tree_remove (f->top);
  free (f);
  return 0;
}

/* fd and dir/rel are the same inode. */
static void
assert_same (int fd, const char *dir, const char *rel)
{
  assert_true (fd >= 0);
  struct stat a, b;
  assert_int_equal (fstat (fd, &a), 0);
  cleanup_free char *path = xasprintf ("%s/%s", dir, rel);
  assert_int_equal (lstat (path, &b), 0);
  assert_int_equal (a.st_dev, b.st_dev);
  assert_int_equal (a.st_ino, b.st_ino);
}

/* The text read from an fd opened for reading. */
static void
assert_reads (int fd, const char *text)
{
  assert_true (fd >= 0);
  char buf[64] = { 0 };
  ssize_t n = pread (fd, buf, sizeof (buf) - 1, 0);
  assert_true (n >= 0);
  assert_string_equal (buf, text);
}

/* -1 with this errno; closes an fd that should not have been opened. */
static void
assert_refused (int fd, int e)
{
  if (fd >= 0)
    {
      close (fd);
      fail_msg ("opened, expected errno %d (%s)", e, strerror (e));
    }
  assert_int_equal (errno, e);
}

static bool
is_link (int fd)
{
  struct stat st;
  return fstat (fd, &st) == 0 && S_ISLNK (st.st_mode);
}

/* RESOLVE_IN_ROOT: every link and ".." is read as the container would,
 * none leaves the root. */
static void
test_open_in_root (void **state)
{
  struct fixture *f = *state;
  int fd;
  fd = hv_open_in_root (f->rootfd, "/dir/file", O_RDONLY, 0);
  assert_reads (fd, "file");
  close (fd);
  fd = hv_open_in_root (f->rootfd, "//dir/.//./file", O_RDONLY, 0);
  assert_reads (fd, "file");
  close (fd);
  /* ".." at the root stays at the root. */
  fd = hv_open_in_root (f->rootfd, "../../../outside/secret", O_RDONLY, 0);
  assert_reads (fd, "inside");
  close (fd);
  fd = hv_open_in_root (f->rootfd, "dir/../../../outside/secret", O_RDONLY, 0);
  assert_reads (fd, "inside");
  close (fd);
  /* Links: relative in the middle, absolute (read from the root). */
  fd = hv_open_in_root (f->rootfd, "mid/file", O_RDONLY, 0);
  assert_reads (fd, "file");
  close (fd);
  fd = hv_open_in_root (f->rootfd, "abs/file", O_RDONLY, 0);
  assert_reads (fd, "file");
  close (fd);
  /* Links out of the root land inside it. */
  fd = hv_open_in_root (f->rootfd, "rel_out/secret", O_RDONLY, 0);
  assert_reads (fd, "inside");
  close (fd);
  assert_refused (hv_open_in_root (f->rootfd, "abs_out/secret", O_RDONLY, 0), ENOENT);
  assert_refused (hv_open_in_root (f->rootfd, "loop1", O_RDONLY, 0), ELOOP);
  assert_refused (hv_open_in_root (f->rootfd, "dir/file/x", O_RDONLY, 0), ENOTDIR);
  assert_refused (hv_open_in_root (f->rootfd, "fifo/x", O_PATH, 0), ENOTDIR);
  /* "" and "/" are the root itself. */
  fd = hv_open_in_root (f->rootfd, "", O_PATH, 0);
  assert_same (fd, f->root, ".");
  close (fd);
  fd = hv_open_in_root (f->rootfd, "///", O_PATH, 0);
  assert_same (fd, f->root, ".");
  close (fd);
  /* A FIFO is opened as what it is (O_PATH: never blocks). */
  fd = hv_open_in_root (f->rootfd, "fifo", O_PATH, 0);
  assert_same (fd, f->root, "fifo");
  close (fd);
}

/* No link at all, the last one opened as itself only with O_PATH; ".."
 * still clamped. */
static void
test_open_in_root_nofollow (void **state)
{
  struct fixture *f = *state;
  int fd = hv_open_in_root_nofollow (f->rootfd, "/dir//./file", O_RDONLY);
  assert_reads (fd, "file");
  close (fd);
  fd = hv_open_in_root_nofollow (f->rootfd, "../../outside/secret", O_RDONLY);
  assert_reads (fd, "inside");
  close (fd);
  assert_refused (hv_open_in_root_nofollow (f->rootfd, "mid/file", O_RDONLY), ELOOP);
  assert_refused (hv_open_in_root_nofollow (f->rootfd, "abs/file", O_PATH), ELOOP);
  assert_refused (hv_open_in_root_nofollow (f->rootfd, "rel_out/secret", O_RDONLY), ELOOP);
  assert_refused (hv_open_in_root_nofollow (f->rootfd, "abs_out", O_RDONLY), ELOOP);
  assert_refused (hv_open_in_root_nofollow (f->rootfd, "loop1", O_RDONLY), ELOOP);
  assert_refused (hv_open_in_root_nofollow (f->rootfd, "dir/file/x", O_RDONLY), ENOTDIR);
  /* The last component a link: with O_PATH the link itself. */
  fd = hv_open_in_root_nofollow (f->rootfd, "abs_out", O_PATH);
  assert_true (fd >= 0);
  assert_true (is_link (fd));
  assert_same (fd, f->root, "abs_out");
  close (fd);
  fd = hv_open_in_root_nofollow (f->rootfd, "fifo", O_PATH);
  assert_same (fd, f->root, "fifo");
  close (fd);
}

/* Missing components made in the root, through links as the container
 * reads them, never outside it. */
static void
test_create_in_root (void **state)
{
  struct fixture *f = *state;
  hv_error *err = NULL;
  int fd = hv_create_in_root (f->rootfd, "/new//a/./b/", true, 0755, &err);
  assert_same (fd, f->root, "new/a/b");
  close (fd);
  /* Through a relative link in the middle: made in its target. */
  fd = hv_create_in_root (f->rootfd, "mid/made", false, 0644, &err);
  assert_same (fd, f->root, "dir/made");
  close (fd);
  /* A link climbing out: made in the root's own "outside". */
  fd = hv_create_in_root (f->rootfd, "rel_out/made", false, 0644, &err);
  assert_same (fd, f->root, "outside/made");
  close (fd);
  assert_false (tree_exists (f->top, "outside/made"));
  fd = hv_create_in_root (f->rootfd, "../../climbed", true, 0755, &err);
  assert_same (fd, f->root, "climbed");
  close (fd);
  assert_false (tree_exists (f->top, "climbed"));
  /* An absolute link out of the root leads to nothing made anywhere. */
  assert_int_equal (hv_create_in_root (f->rootfd, "abs_out/made", false, 0644, &err), -1);
  assert_int_equal (err->errno_code, ENOENT);
  hv_error_free (&err);
  assert_false (tree_exists (f->top, "outside/made"));
  /* A file where a directory is expected; a loop. */
  assert_int_equal (hv_create_in_root (f->rootfd, "dir/file/x", true, 0755, &err), -1);
  assert_int_equal (err->errno_code, ENOTDIR);
  hv_error_free (&err);
  assert_int_equal (hv_create_in_root (f->rootfd, "fifo/x", false, 0644, &err), -1);
  assert_int_equal (err->errno_code, ENOTDIR);
  hv_error_free (&err);
  assert_int_equal (hv_create_in_root (f->rootfd, "loop1/x", true, 0755, &err), -1);
  assert_int_equal (err->errno_code, ELOOP);
  hv_error_free (&err);
  /* An existing regular file asked for as a directory. */
  assert_int_equal (hv_create_in_root (f->rootfd, "dir/file", true, 0755, &err), -1);
  assert_int_equal (err->errno_code, ENOTDIR);
  hv_error_free (&err);
  /* The empty path: the root. */
  fd = hv_create_in_root (f->rootfd, "/", true, 0755, &err);
  assert_same (fd, f->root, ".");
  close (fd);
}

/* The same through no link at all, and nothing made beyond one. */
static void
test_create_in_root_nofollow (void **state)
{
  struct fixture *f = *state;
  hv_error *err = NULL;
  int fd = hv_create_in_root_nofollow (f->rootfd, "nf/a/b", true, 0755, &err);
  assert_same (fd, f->root, "nf/a/b");
  close (fd);
  fd = hv_create_in_root_nofollow (f->rootfd, "nf/a/file", false, 0644, &err);
  assert_same (fd, f->root, "nf/a/file");
  close (fd);
  /* Each prefix is resolved on its own, so a link on the way is the last
   * component of one, opened as itself: no directory to go through. */
  assert_int_equal (hv_create_in_root_nofollow (f->rootfd, "mid/nf-made", false, 0644, &err), -1);
  assert_int_equal (err->errno_code, ENOTDIR);
  assert_non_null (strstr (err->msg, "resolve \"mid\" in rootfs"));
  hv_error_free (&err);
  assert_false (tree_exists (f->root, "dir/nf-made"));
  assert_int_equal (hv_create_in_root_nofollow (f->rootfd, "rel_out/x", true, 0755, &err), -1);
  assert_int_equal (err->errno_code, ENOTDIR);
  hv_error_free (&err);
  assert_false (tree_exists (f->root, "outside/x"));
  /* A link as the last component, wanted as a directory: the link
   * itself is opened, which is no directory. */
  assert_int_equal (hv_create_in_root_nofollow (f->rootfd, "abs", true, 0755, &err), -1);
  assert_int_equal (err->errno_code, ENOTDIR);
  hv_error_free (&err);
  assert_int_equal (hv_create_in_root_nofollow (f->rootfd, "loop1/x", true, 0755, &err), -1);
  assert_int_equal (err->errno_code, ENOTDIR);
  hv_error_free (&err);
  /* A link as the last component of a file: the link itself (O_PATH),
   * never what it leads to; the caller sees a link. */
  fd = hv_create_in_root_nofollow (f->rootfd, "abs_out", false, 0644, &err);
  assert_true (is_link (fd));
  assert_same (fd, f->root, "abs_out");
  close (fd);
  /* ".." climbing out: clamped, made in the root. */
  fd = hv_create_in_root_nofollow (f->rootfd, "../../nf-top", true, 0755, &err);
  assert_same (fd, f->root, "nf-top");
  close (fd);
  assert_false (tree_exists (f->top, "nf-top"));
  assert_int_equal (hv_create_in_root_nofollow (f->rootfd, "dir/file/x", false, 0644, &err), -1);
  assert_int_equal (err->errno_code, ENOTDIR);
  hv_error_free (&err);
}

static void
test_open_parent_in_root (void **state)
{
  struct fixture *f = *state;
  hv_error *err = NULL;
  char *base = NULL;
  int fd = hv_open_parent_in_root (f->rootfd, "/p/q/name", &base, &err);
  assert_same (fd, f->root, "p/q");
  assert_string_equal (base, "name");
  assert_false (tree_exists (f->root, "p/q/name"));
  close (fd);
  free (base);
  fd = hv_open_parent_in_root (f->rootfd, "/p/q/", &base, &err);
  assert_same (fd, f->root, "p");
  assert_string_equal (base, "q");
  close (fd);
  free (base);
  fd = hv_open_parent_in_root (f->rootfd, "top", &base, &err);
  assert_same (fd, f->root, ".");
  assert_string_equal (base, "top");
  close (fd);
  free (base);
  /* The parent through a link out of the root: clamped. */
  fd = hv_open_parent_in_root (f->rootfd, "rel_out/name", &base, &err);
  assert_same (fd, f->root, "outside");
  close (fd);
  free (base);
  base = NULL;
  assert_int_equal (hv_open_parent_in_root (f->rootfd, "dir/file/name", &base, &err), -1);
  assert_int_equal (err->errno_code, ENOTDIR);
  hv_error_free (&err);
  free (base);
}

/* RESOLVE_BENEATH: ".." and absolute paths refused (EXDEV), no link. */
static void
test_open_beneath_nofollow (void **state)
{
  struct fixture *f = *state;
  int fd = hv_open_beneath_nofollow (f->rootfd, "dir//./file", O_RDONLY);
  assert_reads (fd, "file");
  close (fd);
  fd = hv_open_beneath_nofollow (f->rootfd, "dir/../dir/file", O_RDONLY);
  assert_reads (fd, "file");
  close (fd);
  assert_refused (hv_open_beneath_nofollow (f->rootfd, "../outside/secret", O_RDONLY), EXDEV);
  assert_refused (hv_open_beneath_nofollow (f->rootfd, "dir/../../outside/secret", O_RDONLY), EXDEV);
  assert_refused (hv_open_beneath_nofollow (f->rootfd, "/dir/file", O_RDONLY), EXDEV);
  assert_refused (hv_open_beneath_nofollow (f->rootfd, "mid/file", O_RDONLY), ELOOP);
  assert_refused (hv_open_beneath_nofollow (f->rootfd, "rel_out/secret", O_RDONLY), ELOOP);
  assert_refused (hv_open_beneath_nofollow (f->rootfd, "abs_out", O_RDONLY), ELOOP);
  assert_refused (hv_open_beneath_nofollow (f->rootfd, "loop1", O_RDONLY), ELOOP);
  assert_refused (hv_open_beneath_nofollow (f->rootfd, "loop1/x", O_PATH), ELOOP);
  /* A link at the end wanted as a directory: the link itself, no directory. */
  assert_refused (hv_open_beneath_nofollow (f->rootfd, "mid", O_PATH | O_DIRECTORY), ENOTDIR);
  assert_refused (hv_open_beneath_nofollow (f->rootfd, "dir/file/", O_RDONLY), ENOTDIR);
  fd = hv_open_beneath_nofollow (f->rootfd, "rel_out", O_PATH);
  assert_true (is_link (fd));
  assert_same (fd, f->root, "rel_out");
  close (fd);
}

/* From "/", no link anywhere, the last component included. */
static void
test_open_host_nofollow (void **state)
{
  struct fixture *f = *state;
  assert_refused (hv_open_host_nofollow ("relative/path", O_RDONLY), EINVAL);
  cleanup_free char *file = xasprintf ("%s/dir/file", f->root);
  int fd = hv_open_host_nofollow (file, O_RDONLY);
  assert_reads (fd, "file");
  close (fd);
  cleanup_free char *dotted = xasprintf ("/%s//dir/./file", f->root);
  fd = hv_open_host_nofollow (dotted, O_RDONLY);
  assert_reads (fd, "file");
  close (fd);
  cleanup_free char *mid = xasprintf ("%s/mid/file", f->root);
  assert_refused (hv_open_host_nofollow (mid, O_RDONLY), ELOOP);
  /* A link at the end is refused even with O_PATH. */
  cleanup_free char *last = xasprintf ("%s/abs_out", f->root);
  assert_refused (hv_open_host_nofollow (last, O_PATH), ELOOP);
  assert_refused (hv_open_host_nofollow (last, O_RDONLY), ELOOP);
  fd = hv_open_host_nofollow ("/", O_PATH | O_DIRECTORY);
  assert_same (fd, "/", ".");
  close (fd);
}

/* procfs beneath its fd: no link (self is one), no mount crossing. */
static void
test_open_in_proc (void **state)
{
  (void) state;
  cleanup_close int procfd = open ("/proc", O_PATH | O_DIRECTORY | O_CLOEXEC);
  assert_true (procfd >= 0);
  assert_refused (hv_open_in_proc (procfd, "self/status", O_RDONLY), ELOOP);
  assert_refused (hv_open_in_proc (procfd, "../etc/passwd", O_RDONLY), EXDEV);
  cleanup_free char *mine = xasprintf ("%d/status", (int) getpid ());
  int fd = hv_open_in_proc (procfd, mine, O_RDONLY);
  assert_true (fd >= 0);
  close (fd);
}

/* mkdir -p through no link, each directory ours when asked. */
static void
test_mkdirs_beneath (void **state)
{
  struct fixture *f = *state;
  hv_error *err = NULL;
  int fd = hv_mkdirs_beneath (f->rootfd, "m//a/./b/", 0700, true, &err);
  assert_same (fd, f->root, "m/a/b");
  struct stat st;
  assert_int_equal (fstat (fd, &st), 0);
  assert_int_equal (st.st_mode & 07777, 0700);
  close (fd);
  /* A fresh directory of ours: nothing refused when it exists. */
  fd = hv_mkdirs_beneath (f->rootfd, "m/a/b", 0700, true, &err);
  assert_same (fd, f->root, "m/a/b");
  close (fd);
  /* An empty rel: a new fd of the directory itself. */
  fd = hv_mkdirs_beneath (f->rootfd, "", 0700, false, &err);
  assert_same (fd, f->root, ".");
  assert_true (fd != f->rootfd);
  close (fd);
  /* A link on the way (O_NOFOLLOW with O_DIRECTORY: ENOTDIR). */
  assert_int_equal (hv_mkdirs_beneath (f->rootfd, "mid/x", 0700, false, &err), -1);
  assert_int_equal (err->errno_code, ENOTDIR);
  assert_string_equal (err->msg, "open mid (a link or not a directory?): not a directory");
  hv_error_free (&err);
  assert_false (tree_exists (f->root, "dir/x"));
  assert_int_equal (hv_mkdirs_beneath (f->rootfd, "rel_out/x", 0700, false, &err), -1);
  assert_int_equal (err->errno_code, ENOTDIR);
  hv_error_free (&err);
  assert_false (tree_exists (f->top, "outside/x"));
  assert_false (tree_exists (f->root, "outside/x"));
  assert_int_equal (hv_mkdirs_beneath (f->rootfd, "loop1/x", 0700, false, &err), -1);
  assert_int_equal (err->errno_code, ENOTDIR);
  hv_error_free (&err);
  assert_int_equal (hv_mkdirs_beneath (f->rootfd, "dir/file/x", 0700, false, &err), -1);
  assert_int_equal (err->errno_code, ENOTDIR);
  hv_error_free (&err);
  assert_int_equal (hv_mkdirs_beneath (f->rootfd, "fifo", 0700, false, &err), -1);
  assert_int_equal (err->errno_code, ENOTDIR);
  hv_error_free (&err);
  /* ".." is no link, so O_NOFOLLOW would let it climb: refused before
   * anything is made, wherever it stands. */
  assert_int_equal (hv_mkdirs_beneath (f->rootfd, "../escaped", 0700, false, &err), -1);
  assert_string_equal (err->msg, "../escaped: \"..\" would leave the directory");
  hv_error_free (&err);
  assert_false (tree_exists (f->top, "escaped"));
  assert_int_equal (hv_mkdirs_beneath (f->rootfd, "dir/../../escaped2", 0700, false, &err), -1);
  hv_error_free (&err);
  assert_false (tree_exists (f->top, "escaped2"));
}

/* owned: a directory on the way that another uid owns is refused. */
static void
test_mkdirs_beneath_owned (void **state)
{
  struct fixture *f = *state;
  hv_error *err = NULL;
  cleanup_close int fd = -1;
  const char *rel;
  if (geteuid () == 0)
    {
      /* root makes one that is not its own. */
      tree_mkdir (f->root, "theirs");
      cleanup_free char *p = xasprintf ("%s/theirs", f->root);
      assert_int_equal (chown (p, 65534, 65534), 0);
      fd = open (f->root, O_PATH | O_DIRECTORY | O_CLOEXEC);
      rel = "theirs/sub";
    }
  else
    {
      /* Anyone else finds one in "/": the first of these not theirs. */
      static const char *const candidates[] = { "proc", "usr", "etc", "tmp", NULL };
      rel = NULL;
      for (size_t i = 0; candidates[i] && rel == NULL; i++)
        {
          struct stat st;
          cleanup_free char *p = xasprintf ("/%s", candidates[i]);
          if (lstat (p, &st) == 0 && S_ISDIR (st.st_mode) && st.st_uid != geteuid ())
            rel = candidates[i];
        }
      if (rel == NULL)
        SKIP_BECAUSE ("no directory of another uid in / to test with (and not root, to make one)");
      fd = open ("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
    }
  assert_true (fd >= 0);
  assert_int_equal (hv_mkdirs_beneath (fd, rel, 0700, true, &err), -1);
  assert_non_null (strstr (err->msg, "is not owned by uid"));
  hv_error_free (&err);
  /* Without owned, not refused for it (as root: made beneath). */
  if (geteuid () == 0)
    {
      int sub = hv_mkdirs_beneath (fd, rel, 0700, false, &err);
      assert_same (sub, f->root, "theirs/sub");
      close (sub);
    }
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test_setup_teardown (test_open_in_root, setup, teardown),
    cmocka_unit_test_setup_teardown (test_open_in_root_nofollow, setup, teardown),
    cmocka_unit_test_setup_teardown (test_create_in_root, setup, teardown),
    cmocka_unit_test_setup_teardown (test_create_in_root_nofollow, setup, teardown),
    cmocka_unit_test_setup_teardown (test_open_parent_in_root, setup, teardown),
    cmocka_unit_test_setup_teardown (test_open_beneath_nofollow, setup, teardown),
    cmocka_unit_test_setup_teardown (test_open_host_nofollow, setup, teardown),
    cmocka_unit_test_setup_teardown (test_open_in_proc, setup, teardown),
    cmocka_unit_test_setup_teardown (test_mkdirs_beneath, setup, teardown),
    cmocka_unit_test_setup_teardown (test_mkdirs_beneath_owned, setup, teardown),
  };
  return unit_tests_status (cmocka_run_group_tests (tests, NULL, NULL), N_ELEMENTS (tests));
}
