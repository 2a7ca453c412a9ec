/* Fixture trees for unit tests that run as any user: a fresh directory
 * under $TMPDIR (or /tmp), files and links planted in it, and its
 * removal.  Include after config.h and cmocka.h. */
#ifndef HAVEN_TESTS_TMP_TREE_H
#define HAVEN_TESTS_TMP_TREE_H

#include <ftw.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* A new directory "<tmp>/hv-<tag>-XXXXXX", its real path (no link on the
 * way, so that a path test's "outside" is really outside).  Free it. */
static inline char *
tree_make (const char *tag)
{
  const char *tmp = getenv ("TMPDIR");
  if (tmp == NULL || tmp[0] == '\0')
    tmp = "/tmp";
  char templ[PATH_MAX];
  snprintf (templ, sizeof (templ), "%s/hv-%s-XXXXXX", tmp, tag);
  if (mkdtemp (templ) == NULL)
    fail_msg ("mkdtemp %s: %m", templ);
  char *real = realpath (templ, NULL);
  assert_non_null (real);
  return real;
}

/* Write `text` to dir/rel (created or truncated). */
static inline void
tree_put (const char *dir, const char *rel, const char *text)
{
  char path[PATH_MAX];
  snprintf (path, sizeof (path), "%s/%s", dir, rel);
  FILE *f = fopen (path, "w");
  if (f == NULL)
    fail_msg ("create %s: %m", path);
  fputs (text, f);
  assert_int_equal (fclose (f), 0);
}

static inline void
tree_mkdir (const char *dir, const char *rel)
{
  char path[PATH_MAX];
  snprintf (path, sizeof (path), "%s/%s", dir, rel);
  if (mkdir (path, 0755) < 0)
    fail_msg ("mkdir %s: %m", path);
}

static inline void
tree_link (const char *dir, const char *rel, const char *target)
{
  char path[PATH_MAX];
  snprintf (path, sizeof (path), "%s/%s", dir, rel);
  if (symlink (target, path) < 0)
    fail_msg ("symlink %s: %m", path);
}

static inline bool
tree_exists (const char *dir, const char *rel)
{
  char path[PATH_MAX];
  snprintf (path, sizeof (path), "%s/%s", dir, rel);
  struct stat st;
  return lstat (path, &st) == 0;
}

/* The text of dir/rel ("" when missing); free it. */
static inline char *
tree_read (const char *dir, const char *rel)
{
  char path[PATH_MAX];
  snprintf (path, sizeof (path), "%s/%s", dir, rel);
  char *text = calloc (1, 1 << 16);
  assert_non_null (text);
  FILE *f = fopen (path, "r");
  if (f)
    {
      size_t n = fread (text, 1, (1 << 16) - 1, f);
      text[n] = '\0';
      fclose (f);
    }
  return text;
}

static inline int
tree_remove_one (const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
  (void) st;
  (void) flag;
  (void) ftw;
  /* A quarantined directory is 0700 and ours: removable as it is. */
  return remove (path) < 0 ? -1 : 0;
}

static inline void
tree_remove (char *dir)
{
  if (dir == NULL)
    return;
  assert_int_equal (nftw (dir, tree_remove_one, 16, FTW_DEPTH | FTW_PHYS), 0);
  free (dir);
}
#endif
