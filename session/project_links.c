/* Links a run leaves that lead outside the project (project_links.h). */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "project_links.h"
#include "utils.h"

#define LINKS_MAX_DEPTH 200
#define LINKS_MAX_ENTRIES 4000000
#define LINKS_MAX_NAMED 20 /* lines on stderr; the rest are counted */

struct links_walk
{
  const char *project;
  bool refuse;
  const struct timespec *since;
  size_t entries, found, named;
  char *stopped_at;
  hv_error **err;
  int failed;
  oci_strv *notes;
};

/* For messages: control characters and backslashes escaped. */
static char *
printable (const char *s)
{
  size_t n = strlen (s);
  char *out = xmalloc0 (4 * n + 1), *o = out;
  for (const unsigned char *c = (const unsigned char *) s; *c; c++)
    if (*c < 0x20 || *c == 0x7f || *c == '\\')
      o += sprintf (o, "\\x%02x", *c);
    else
      *o++ = (char) *c;
  *o = '\0';
  return out;
}

static bool
under (const char *path, const char *dir)
{
  size_t n = strlen (dir);
  return strncmp (path, dir, n) == 0 && (path[n] == '\0' || path[n] == '/' || strcmp (dir, "/") == 0);
}

/* dir (absolute, real) joined with target, "." and ".." taken by their
 * letters: where the link's own text points, before any link on the way. */
static char *
lexical_target (const char *dir, const char *target)
{
  char *buf = target[0] == '/' ? xstrdup (target) : xasprintf ("%s/%s", dir, target);
  char *out = xmalloc0 (strlen (buf) + 2);
  size_t len = 0;
  char *save = NULL;
  for (char *part = strtok_r (buf, "/", &save); part; part = strtok_r (NULL, "/", &save))
    {
      if (strcmp (part, ".") == 0)
        continue;
      if (strcmp (part, "..") == 0)
        {
          while (len > 0 && out[len - 1] != '/')
            len--;
          if (len > 0)
            len--;
          out[len] = '\0';
          continue;
        }
      len += (size_t) sprintf (out + len, "/%s", part);
    }
  if (len == 0)
    strcpy (out, "/");
  free (buf);
  return out;
}

#define LINK_HOPS_MAX 40 /* as the kernel's */

/* Where a path under the project leads once every link on its way is
 * followed, looking only at names inside the project (lstat and
 * readlink; nothing is opened, and nothing outside the project is looked
 * at, not even to trigger an automount): the first path outside it, or
 * NULL when it stays inside (a missing name or a loop stays inside). */
static char *
leads_outside (const char *project, const char *start)
{
  cleanup_free char *path = xstrdup (start);
  size_t plen = strlen (project);
  for (int hops = 0; hops <= LINK_HOPS_MAX; hops++)
    {
      if (!under (path, project))
        return steal_pointer (&path);
      /* Components after the project, one at a time. */
      size_t at = plen;
      bool relinked = false;
      while (path[at] == '/' && !relinked)
        {
          size_t end = at + 1 + strcspn (path + at + 1, "/");
          cleanup_free char *prefix = xasprintf ("%.*s", (int) end, path);
          struct stat st;
          if (lstat (prefix, &st) < 0)
            return NULL;
          if (S_ISLNK (st.st_mode))
            {
              char target[PATH_MAX];
              ssize_t n = readlink (prefix, target, sizeof (target) - 1);
              if (n < 0)
                return NULL;
              target[n] = '\0';
              cleanup_free char *dir = xasprintf ("%.*s", (int) at, path);
              cleanup_free char *joined = xasprintf ("%s%s", target, path + end);
              char *next = lexical_target (dir, joined);
              free (path);
              path = next;
              relinked = true;
            }
          else if (!S_ISDIR (st.st_mode))
            return NULL;
          else
            at = end;
        }
      if (!relinked)
        return NULL;
    }
  return NULL;
}

static bool
made_during_run (const struct stat *st, const struct timespec *since)
{
  return st->st_ctim.tv_sec > since->tv_sec
         || (st->st_ctim.tv_sec == since->tv_sec && st->st_ctim.tv_nsec >= since->tv_nsec);
}

/* One link, name in the directory dirfd (reached without following
 * links, at rel under the project). */
static void
check_link (struct links_walk *w, int dirfd, const char *name, const char *rel, const struct stat *st)
{
  if (!made_during_run (st, w->since))
    return;
  char target[PATH_MAX];
  ssize_t n = readlinkat (dirfd, name, target, sizeof (target) - 1);
  if (n < 0)
    return;
  target[n] = '\0';
  cleanup_free char *path = xasprintf ("%s/%s", w->project, rel);
  cleanup_free char *dir = xstrdup (path);
  *strrchr (dir, '/') = '\0';
  cleanup_free char *lexical = lexical_target (dir, target);
  /* Where host tools end up, every link on the way followed. */
  cleanup_free char *real = leads_outside (w->project, lexical);
  if (real == NULL)
    return;
  w->found++;
  bool removed = false;
  if (w->refuse)
    {
      struct stat again;
      /* Still the link that was judged (nothing else runs in the sandbox
       * now, but the host's user may). */
      if (fstatat (dirfd, name, &again, AT_SYMLINK_NOFOLLOW) == 0 && again.st_ino == st->st_ino
          && again.st_dev == st->st_dev && S_ISLNK (again.st_mode) && unlinkat (dirfd, name, 0) == 0)
        removed = true;
      else if (w->failed == 0)
        {
          cleanup_free char *p = printable (rel);
          hv_error_set (w->err, errno, "filesystem.project_links: refuse: could not remove the link %s/%s",
                        w->project, p);
          w->failed = -1;
        }
    }
  if (w->named >= LINKS_MAX_NAMED)
    return;
  w->named++;
  cleanup_free char *prel = printable (rel), *ptarget = printable (target);
  /* The first path outside the project, when the link's text alone
   * does not say it. */
  cleanup_free char *preal = strcmp (real, target) != 0 ? printable (real) : NULL;
  oci_strv_pushf (w->notes, "%s: %s -> %s (outside the project%s%s)",
                  removed ? "removed a symbolic link the run left (filesystem.project_links: refuse)"
                          : "the run left a symbolic link",
                  prel, ptarget, preal ? ", that is " : "", preal ? preal : "");
}

static void
stop (struct links_walk *w, const char *rel)
{
  if (w->stopped_at == NULL)
    w->stopped_at = xstrdup (rel[0] ? rel : ".");
}

static void
walk (struct links_walk *w, int fd, const char *rel, int depth)
{
  DIR *d = fdopendir (fd);
  if (d == NULL)
    {
      close (fd);
      return;
    }
  struct dirent *de;
  while ((de = readdir (d)))
    {
      const char *name = de->d_name;
      if (strcmp (name, ".") == 0 || strcmp (name, "..") == 0)
        continue;
      if (++w->entries > LINKS_MAX_ENTRIES)
        {
          stop (w, rel);
          break;
        }
      if (de->d_type != DT_LNK && de->d_type != DT_DIR && de->d_type != DT_UNKNOWN)
        continue;
      struct stat st;
      /* A directory needs no stat: opened with O_NOFOLLOW below. */
      if (de->d_type != DT_DIR && fstatat (dirfd (d), name, &st, AT_SYMLINK_NOFOLLOW) < 0)
        continue;
      cleanup_free char *sub = rel[0] ? xasprintf ("%s/%s", rel, name) : xstrdup (name);
      if (de->d_type != DT_DIR && S_ISLNK (st.st_mode))
        check_link (w, dirfd (d), name, sub, &st);
      else if (de->d_type == DT_DIR || S_ISDIR (st.st_mode))
        {
          if (depth + 1 >= LINKS_MAX_DEPTH)
            {
              stop (w, sub);
              continue;
            }
          int sfd = openat (dirfd (d), name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
          if (sfd >= 0)
            walk (w, sfd, sub, depth + 1);
        }
    }
  closedir (d);
}

void
hv_project_links_start (struct hv_project_links *l)
{
  /* File times come from the coarse clock: a link made a moment after
   * this reading never has an earlier change time. */
  if (clock_gettime (CLOCK_REALTIME_COARSE, &l->since) < 0)
    clock_gettime (CLOCK_REALTIME, &l->since);
}

int
hv_project_links_check (const hv_policy *p, const char *project, const struct hv_project_links *l, oci_strv *notes,
                        hv_error **err)
{
  if (l->since.tv_sec == 0)
    return 0; /* the sandbox never started */
  int fd = open (project, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0)
    return hv_error_set (err, errno, "check the project's links: open %s", project);
  struct links_walk w = { .project = project, .refuse = p->refuse_project_links.value, .since = &l->since,
                          .err = err, .notes = notes };
  walk (&w, fd, "", 0);
  if (w.found > w.named)
    oci_strv_pushf (notes, "... and %zu more such links", w.found - w.named);
  if (w.found && !w.refuse)
    oci_strv_pushf (notes, "host tools that follow them read what they lead to; filesystem.project_links: "
                           "refuse in the policy removes such links after each run");
  if (w.stopped_at)
    {
      cleanup_free char *at = printable (w.stopped_at);
      oci_strv_pushf (notes,
                      "WARNING: the check for symbolic links stopped at %s (more than %d entries or %d levels "
                      "deep): links beyond it were not checked",
                      at, LINKS_MAX_ENTRIES, LINKS_MAX_DEPTH);
      free (w.stopped_at);
    }
  return w.failed < 0 ? -1 : (int) w.found;
}
