/* Missing home_allow and read_write paths created in the home before the
 * run (home_create.h). */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "home_allow.h"
#include "home_create.h"
#include "safe_path.h"
#include "utils.h"

int
hv_home_json_seed (int fd, const char *name)
{
  size_t n = strlen (name);
  if (n >= 5 && strcmp (name + n - 5, ".json") == 0)
    return write_all (fd, "{}\n", 3);
  return 0;
}

/* The home entries are made in: the one $HOME names when it is a
 * directory, else the password database's (hv_own_homes' order). */
static const char *
target_home (const struct hv_run_ctx *ctx)
{
  if (ctx->homes)
    return ctx->homes->n ? ctx->homes->v[0] : NULL;
  return ctx->home;
}

/* The part of a policy path below the home: "~/x" and "<home>/x" give
 * "x"; NULL for anything else, for globs, and for "." or ".." components
 * (which the walk below would not treat as names). */
static const char *
home_relative (const char *pattern, const char *home)
{
  const char *rel = NULL;
  size_t n = strlen (home);
  if (strncmp (pattern, "~/", 2) == 0)
    rel = pattern + 2;
  else if (strncmp (pattern, home, n) == 0 && pattern[n] == '/')
    rel = pattern + n + 1;
  if (rel == NULL || rel[0] == '\0' || rel[0] == '/' || strpbrk (rel, "*?[") != NULL)
    return NULL;
  if (strcmp (rel, ".") == 0 || strcmp (rel, "..") == 0 || strncmp (rel, "./", 2) == 0 || strncmp (rel, "../", 3) == 0
      || strstr (rel, "/./") || strstr (rel, "/../") || strstr (rel, "//"))
    return NULL;
  size_t l = strlen (rel);
  if ((l >= 2 && strcmp (rel + l - 2, "/.") == 0) || (l >= 3 && strcmp (rel + l - 3, "/..") == 0))
    return NULL;
  return rel;
}

/* Create rel (a file or a directory) beneath the home's fd: the parents
 * with hv_mkdirs_beneath (0700, each opened O_NOFOLLOW and required to be
 * ours), the last component with O_EXCL / mkdirat, which never follow a
 * link: whatever is already there (a link a run left included) is left
 * alone, and the compiler then decides what to do with it. */
static int
create_beneath (int homefd, const char *home, const char *rel, hv_error **err)
{
  cleanup_free char *copy = xstrdup (rel);
  size_t l = strlen (copy);
  while (l > 1 && copy[l - 1] == '/')
    copy[--l] = '\0';
  bool file = hv_home_path_is_file (rel);
  char *slash = strrchr (copy, '/');
  const char *base = slash ? slash + 1 : copy;
  if (slash)
    *slash = '\0';
  cleanup_close int pfd = slash ? hv_mkdirs_beneath (homefd, copy, 0700, true, err)
                                : fcntl (homefd, F_DUPFD_CLOEXEC, 0);
  if (pfd < 0)
    return slash ? hv_error_wrap (err, "%s/%s", home, rel) : hv_error_set (err, errno, "dup");
  struct stat st;
  if (fstatat (pfd, base, &st, AT_SYMLINK_NOFOLLOW) == 0)
    return 0;
  if (errno != ENOENT)
    return hv_error_set (err, errno, "%s/%s", home, rel);
  if (!file)
    {
      if (mkdirat (pfd, base, 0700) < 0)
        return errno == EEXIST ? 0 : hv_error_set (err, errno, "create the directory %s/%s", home, rel);
      /* 0700 whatever the umask says. */
      cleanup_close int dfd = openat (pfd, base, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (dfd < 0 || fchmod (dfd, 0700) < 0)
        return hv_error_set (err, errno, "set the mode of %s/%s", home, rel);
      return 0;
    }
  cleanup_close int fd = openat (pfd, base, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0)
    return errno == EEXIST ? 0 : hv_error_set (err, errno, "create the file %s/%s", home, rel);
  if (fchmod (fd, 0600) < 0 || hv_home_json_seed (fd, base) < 0)
    return hv_error_set (err, errno, "write %s/%s", home, rel);
  return 0;
}

/* One entry: made, or a warning saying why not (the entry is then left
 * out of the sandbox, as a missing one always was).  In a home the
 * caller does not own (root with HOME=/home/alice) nothing is made:
 * root's files there would lock alice out of them; said once. */
static void
create_entry (int homefd, const char *home, bool owned, bool *told, const char *key, const char *pattern,
              oci_strv *notes)
{
  const char *rel = home_relative (pattern, home);
  struct stat st;
  if (rel == NULL || fstatat (homefd, rel, &st, AT_SYMLINK_NOFOLLOW) == 0)
    return;
  if (!owned)
    {
      if (!*told)
        oci_strv_pushf (notes, "the home %s is not owned by uid %u: allowed home paths missing there are not created",
                        home, (unsigned) geteuid ());
      *told = true;
      return;
    }
  cleanup_error hv_error *e = NULL;
  if (create_beneath (homefd, home, rel, &e) < 0)
    oci_strv_pushf (notes, "filesystem.%s \"%s\": cannot create it (%s); it is not mounted in this run", key, pattern,
                    e->msg);
}

int
hv_home_entries_create (const hv_policy *p, const struct hv_run_ctx *ctx, hv_error **err)
{
  (void) err;
  const char *home = target_home (ctx);
  bool any = p->read_write.n > 0;
  for (size_t i = 0; p->hide_home.value && i < p->home_allow.n; i++)
    any |= p->home_access[i].write != HV_HOME_READ_ONLY;
  if (home == NULL || home[0] != '/' || !any)
    return 0;
  cleanup_close int homefd = open (home, O_PATH | O_DIRECTORY | O_CLOEXEC);
  struct stat st;
  if (homefd < 0 || fstat (homefd, &st) < 0)
    return 0; /* no home: nothing of it is mounted either */
  bool owned = st.st_uid == geteuid (), told = false;
  for (size_t i = 0; p->hide_home.value && i < p->home_allow.n; i++)
    if (p->home_access[i].write != HV_HOME_READ_ONLY)
      create_entry (homefd, home, owned, &told, "home_allow", p->home_allow.v[i], ctx->notes);
  for (size_t i = 0; i < p->read_write.n; i++)
    create_entry (homefd, home, owned, &told, "read_write", p->read_write.v[i], ctx->notes);
  return 0;
}
