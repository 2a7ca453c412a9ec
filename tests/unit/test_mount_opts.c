/* Unit tests of mount options (runtime/mounts.c), as any user: what
 * hv_mount_opts_parse makes of mount(8)'s flag words, their recursive
 * forms, propagation, filesystem data and haven's own x-haven.* options,
 * and the combinations hv_mount_one refuses before it mounts anything
 * (and, for x-haven.pin, the destinations it refuses before cloning). */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/mount.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/mount.h>
#include <unistd.h>

#include <cmocka.h>

#include "mounts.h"
#include "utils.h"
#include "tmp_tree.h"

/* The options of a comma-separated list (no option holds a comma here). */
static oci_strv
opts (const char *list)
{
  oci_strv v = { 0 };
  cleanup_free char *copy = xstrdup (list);
  char *save = NULL;
  for (char *o = strtok_r (copy, ",", &save); o; o = strtok_r (NULL, ",", &save))
    oci_strv_push (&v, o);
  return v;
}

static void
parse_ok (const char *list, struct hv_mount_opts *o)
{
  cleanup_strv oci_strv v = opts (list);
  hv_error *err = NULL;
  if (hv_mount_opts_parse (&v, o, &err) < 0)
    fail_msg ("%s refused: %s", list, err->msg);
}

static void
parse_refused (const oci_strv *v, const char *message)
{
  struct hv_mount_opts o;
  hv_error *err = NULL;
  if (hv_mount_opts_parse (v, &o, &err) == 0)
    {
      hv_mount_opts_free (&o);
      fail_msg ("accepted");
    }
  assert_string_equal (err->msg, message);
  hv_error_free (&err);
}

#define REFUSED(list, message)                                                                                      \
  do                                                                                                                \
    {                                                                                                               \
      cleanup_strv oci_strv v_ = opts (list);                                                                       \
      parse_refused (&v_, message);                                                                                 \
    }                                                                                                               \
  while (0)

static void
test_flags (void **state)
{
  (void) state;
  struct hv_mount_opts o;
  parse_ok ("", &o);
  assert_int_equal (o.attr_set | o.attr_clr | o.rattr_set | o.rattr_clr | o.propagation, 0);
  assert_false (o.bind || o.recursive || o.idmap || o.nofollow || o.mkdir || o.optional || o.pin);
  assert_null (o.data);
  hv_mount_opts_free (&o);

  parse_ok ("ro,nosuid,nodev,noexec,nosymfollow,nodiratime", &o);
  assert_int_equal (o.attr_set, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC
                                    | MOUNT_ATTR_NOSYMFOLLOW | MOUNT_ATTR_NODIRATIME);
  assert_int_equal (o.attr_clr, 0);
  assert_int_equal (o.rattr_set | o.rattr_clr, 0);
  hv_mount_opts_free (&o);

  /* Later words override earlier ones, as with mount(8). */
  parse_ok ("ro,nosuid,rw,suid", &o);
  assert_int_equal (o.attr_set, 0);
  assert_int_equal (o.attr_clr, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID);
  hv_mount_opts_free (&o);
  parse_ok ("rw,ro", &o);
  assert_int_equal (o.attr_set, MOUNT_ATTR_RDONLY);
  hv_mount_opts_free (&o);

  /* The atime words are one choice: the last one set, all cleared. */
  parse_ok ("noatime,relatime", &o);
  assert_int_equal (o.attr_set, MOUNT_ATTR_RELATIME);
  assert_int_equal (o.attr_clr, MOUNT_ATTR__ATIME);
  hv_mount_opts_free (&o);
  parse_ok ("strictatime,atime", &o);
  assert_int_equal (o.attr_set & MOUNT_ATTR_NOATIME, 0);
  assert_int_equal (o.attr_clr & MOUNT_ATTR__ATIME, MOUNT_ATTR__ATIME);
  hv_mount_opts_free (&o);
}

/* The r* words go to the recursive set only. */
static void
test_recursive_flags (void **state)
{
  (void) state;
  struct hv_mount_opts o;
  parse_ok ("rro,rnosuid,rnodev,rnoexec,nodev", &o);
  assert_int_equal (o.rattr_set, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC);
  assert_int_equal (o.rattr_clr, 0);
  assert_int_equal (o.attr_set, MOUNT_ATTR_NODEV);
  hv_mount_opts_free (&o);
  parse_ok ("rro,rrw,rnoatime", &o);
  assert_int_equal (o.rattr_set, MOUNT_ATTR_NOATIME);
  assert_int_equal (o.rattr_clr, MOUNT_ATTR_RDONLY | MOUNT_ATTR__ATIME);
  assert_int_equal (o.attr_set | o.attr_clr, 0);
  hv_mount_opts_free (&o);
}

static void
test_bind_idmap_propagation (void **state)
{
  (void) state;
  struct hv_mount_opts o;
  parse_ok ("bind", &o);
  assert_true (o.bind);
  assert_false (o.recursive);
  hv_mount_opts_free (&o);
  parse_ok ("rbind,ridmap", &o);
  assert_true (o.bind && o.recursive && o.idmap && o.ridmap);
  hv_mount_opts_free (&o);
  parse_ok ("idmap", &o);
  assert_true (o.idmap);
  assert_false (o.ridmap || o.bind);
  hv_mount_opts_free (&o);

  static const struct
  {
    const char *word;
    uint64_t propagation;
    bool recursive;
  } props[] = {
    { "private", MS_PRIVATE, false },       { "rprivate", MS_PRIVATE, true }, { "shared", MS_SHARED, false },
    { "rshared", MS_SHARED, true },         { "slave", MS_SLAVE, false },     { "rslave", MS_SLAVE, true },
    { "unbindable", MS_UNBINDABLE, false }, { "runbindable", MS_UNBINDABLE, true },
  };
  for (size_t i = 0; i < N_ELEMENTS (props); i++)
    {
      parse_ok (props[i].word, &o);
      assert_int_equal (o.propagation, props[i].propagation);
      assert_int_equal (o.propagation_recursive, props[i].recursive);
      assert_int_equal (o.attr_set | o.rattr_set, 0);
      hv_mount_opts_free (&o);
    }
  /* The last one counts. */
  parse_ok ("rshared,private", &o);
  assert_int_equal (o.propagation, MS_PRIVATE);
  assert_false (o.propagation_recursive);
  hv_mount_opts_free (&o);
}

/* mount(8)'s no-ops and user-space x-* options never reach the kernel;
 * anything else is filesystem data, in order. */
static void
test_data (void **state)
{
  (void) state;
  struct hv_mount_opts o;
  parse_ok ("defaults,_netdev,nouser,x-systemd.automount,x-foo=bar,tmpcopyup", &o);
  assert_null (o.data);
  hv_mount_opts_free (&o);
  parse_ok ("size=64k,nosuid,mode=755,x-foo,uid=0", &o);
  assert_string_equal (o.data, "size=64k,mode=755,uid=0");
  assert_int_equal (o.attr_set, MOUNT_ATTR_NOSUID);
  hv_mount_opts_free (&o);
}

static void
test_haven_options (void **state)
{
  (void) state;
  struct hv_mount_opts o;
  parse_ok ("x-haven.nofollow,x-haven.mkdir,x-haven.optional,x-haven.pin", &o);
  assert_true (o.nofollow && o.mkdir && o.optional && o.pin);
  assert_null (o.data);
  hv_mount_opts_free (&o);
  parse_ok ("x-haven.subdir=upper/a", &o);
  assert_string_equal (o.subdir, "upper/a");
  assert_false (o.nofollow || o.mkdir || o.optional || o.pin);
  hv_mount_opts_free (&o);
  assert_null (o.subdir);
  /* NAME:TEXT, TEXT up to the end (colons and all). */
  parse_ok ("x-haven.file=.gitconfig:[user] name = a:b", &o);
  assert_string_equal (o.file_name, ".gitconfig");
  assert_string_equal (o.file_text, "[user] name = a:b");
  hv_mount_opts_free (&o);
  parse_ok ("x-haven.file=empty:", &o);
  assert_string_equal (o.file_name, "empty");
  assert_string_equal (o.file_text, "");
  hv_mount_opts_free (&o);
}

static void
test_haven_refused (void **state)
{
  (void) state;
  /* A misspelt safety option is an error, not dropped. */
  REFUSED ("x-haven.nofolow", "unknown mount option \"x-haven.nofolow\"");
  REFUSED ("ro,x-haven.pin=1", "unknown mount option \"x-haven.pin=1\"");
  REFUSED ("x-haven.subdir=", "mount option \"x-haven.subdir=\": one relative path");
  REFUSED ("x-haven.subdir=/abs", "mount option \"x-haven.subdir=/abs\": one relative path");
  REFUSED ("x-haven.subdir=a,x-haven.subdir=b", "mount option \"x-haven.subdir=b\": one relative path");
  const char *file_error = "mount option x-haven.file: one NAME:TEXT per mount, NAME one path component, TEXT at "
                           "most 65536 bytes";
  REFUSED ("x-haven.file=notext", file_error);
  REFUSED ("x-haven.file=:text", file_error);
  REFUSED ("x-haven.file=a/b:text", file_error);
  REFUSED ("x-haven.file=.:text", file_error);
  REFUSED ("x-haven.file=..:text", file_error);
  REFUSED ("x-haven.file=a:1,x-haven.file=b:2", file_error);
  /* NAME at most 255 bytes, TEXT at most HV_MOUNT_FILE_MAX. */
  cleanup_free char *name255 = xmalloc0 (300);
  memset (name255, 'n', 255);
  cleanup_free char *ok = xasprintf ("x-haven.file=%s:t", name255);
  struct hv_mount_opts o;
  parse_ok (ok, &o);
  hv_mount_opts_free (&o);
  cleanup_free char *long_name = xasprintf ("x-haven.file=%sn:t", name255);
  REFUSED (long_name, file_error);
  cleanup_free char *text = xmalloc0 (HV_MOUNT_FILE_MAX + 2);
  memset (text, 't', HV_MOUNT_FILE_MAX);
  cleanup_free char *max = xasprintf ("x-haven.file=f:%s", text);
  parse_ok (max, &o);
  assert_int_equal (strlen (o.file_text), HV_MOUNT_FILE_MAX);
  hv_mount_opts_free (&o);
  text[HV_MOUNT_FILE_MAX] = 't';
  cleanup_free char *over = xasprintf ("x-haven.file=f:%s", text);
  REFUSED (over, file_error);
}

/* hv_mount_one refuses these before it touches anything. */
struct world
{
  char *top;
  struct hv_mount_ctx ctx;
};

static int
setup (void **state)
{
  struct world *w = xmalloc0 (sizeof (*w));
  w->top = tree_make ("mount-opts");
  tree_mkdir (w->top, "dir");
  tree_put (w->top, "file", "f");
  tree_link (w->top, "link", "dir");
  cleanup_free char *fifo = xasprintf ("%s/fifo", w->top);
  assert_int_equal (mkfifo (fifo, 0600), 0);
  w->ctx.rootfd = open (w->top, O_PATH | O_DIRECTORY | O_CLOEXEC);
  assert_true (w->ctx.rootfd >= 0);
  w->ctx.bundle = w->top;
  *state = w;
  return 0;
}

static int
teardown (void **state)
{
  struct world *w = *state;
  close (w->ctx.rootfd);
  tree_remove (w->top);
  free (w);
  return 0;
}

static void
mount_refused (struct world *w, const char *type, const char *source, const char *dest, const char *list,
               const char *message)
{
  oci_mount m = { .destination = (char *) dest, .type = (char *) type, .source = (char *) source };
  m.options = opts (list);
  hv_error *err = NULL;
  int r = hv_mount_one (&w->ctx, &m, &err);
  oci_strv_free (&m.options);
  if (r == 0)
    fail_msg ("mounted %s on %s (%s)", type, dest, list);
  assert_string_equal (err->msg, message);
  hv_error_free (&err);
}

static void
test_combinations_refused (void **state)
{
  struct world *w = *state;
  mount_refused (w, "tmpfs", "tmpfs", "/dir", "idmap", "mount tmpfs on /dir: idmap is only supported on bind mounts");
  mount_refused (w, "proc", "proc", "/dir", "x-haven.file=a:b",
                 "mount proc on /dir: x-haven.file is only supported on a new tmpfs");
  mount_refused (w, "bind", "/dir", "/dir", "x-haven.file=a:b",
                 "mount /dir on /dir: x-haven.file is only supported on a new tmpfs");
  mount_refused (w, "tmpfs", "tmpfs", "/dir", "x-haven.file=a:b,x-haven.subdir=s",
                 "mount tmpfs on /dir: x-haven.file is only supported on a new tmpfs");
  mount_refused (w, NULL, "/dir", "/dir", "rbind,x-haven.subdir=s",
                 "mount /dir on /dir: x-haven.subdir is only supported on new filesystems, not on bind mounts");
  mount_refused (w, "bind", "/dir", "/dir", "x-haven.subdir=s",
                 "mount /dir on /dir: x-haven.subdir is only supported on new filesystems, not on bind mounts");
  mount_refused (w, "cgroup", "cgroup", "/dir", "x-haven.subdir=s",
                 "mount cgroup on /dir: x-haven.subdir is only supported on new filesystems, not on cgroup mounts");
  mount_refused (w, "tmpfs", "tmpfs", "/dir", "x-haven.pin",
                 "mount tmpfs on /dir: x-haven.pin is only supported on bind mounts");
  mount_refused (w, NULL, NULL, "/dir", "ro", "mount  on /dir: no mount type given");
  mount_refused (w, "", "src", "/dir", "", "mount src on /dir: no mount type given");
  /* A bad option stops it before any of that. */
  mount_refused (w, "bind", "/dir", "/dir", "x-haven.nofolow", "unknown mount option \"x-haven.nofolow\"");
}

/* x-haven.pin: its own source, few options, a directory or a file
 * reached through no link. */
static void
test_pin_refused (void **state)
{
  struct world *w = *state;
  mount_refused (w, "bind", "/file", "/dir", "x-haven.pin",
                 "mount /file on /dir: x-haven.pin needs the destination as its source");
  mount_refused (w, "bind", NULL, "/dir", "x-haven.pin",
                 "mount bind on /dir: x-haven.pin needs the destination as its source");
  static const char *const not_with[] = { "ro",         "rw",      "nosuid", "rrw",         "rnoatime",
                                          "rbind",      "private", "rslave", "idmap",       "size=1",
                                          "x-haven.optional", "x-haven.mkdir", "rnosymfollow", NULL };
  for (size_t i = 0; not_with[i]; i++)
    {
      cleanup_free char *list = xasprintf ("bind,x-haven.pin,%s", not_with[i]);
      mount_refused (w, "bind", "/dir", "/dir", list,
                     "mount /dir on /dir: x-haven.pin takes no other option than bind, x-haven.nofollow and rro, "
                     "rnosuid, rnodev, rnoexec: it keeps the directory's own flags and may only take rights away");
    }
  /* Allowed options, destinations refused before any clone. */
  mount_refused (w, "bind", "/gone", "/gone", "x-haven.pin,rro,rnosuid,rnodev,rnoexec,x-haven.nofollow",
                 "mount /gone on /gone: destination /gone does not exist (moved or removed since the policy was "
                 "compiled): no such file or directory");
  mount_refused (w, "bind", "/link", "/link", "x-haven.pin",
                 "mount /link on /link: destination /link crosses a symbolic link: too many levels of symbolic links");
  mount_refused (w, "bind", "/link/x", "/link/x", "x-haven.pin",
                 "mount /link/x on /link/x: destination /link/x crosses a symbolic link: too many levels of symbolic "
                 "links");
  mount_refused (w, "bind", "/fifo", "/fifo", "x-haven.pin",
                 "mount /fifo on /fifo: destination /fifo is not a directory or a regular file");
}

int
main (void)
{
  /* Run as root, a broken check could mount for real: then only in a
   * mount namespace of the test's own, which goes when it exits. */
  if (geteuid () == 0
      && (unshare (CLONE_NEWNS) < 0 || mount (NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0))
    {
      fprintf (stderr, "own mount namespace: %m\n");
      return 1;
    }
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_flags),
    cmocka_unit_test (test_recursive_flags),
    cmocka_unit_test (test_bind_idmap_propagation),
    cmocka_unit_test (test_data),
    cmocka_unit_test (test_haven_options),
    cmocka_unit_test (test_haven_refused),
    cmocka_unit_test_setup_teardown (test_combinations_refused, setup, teardown),
    cmocka_unit_test_setup_teardown (test_pin_refused, setup, teardown),
  };
  return cmocka_run_group_tests (tests, NULL, NULL);
}
