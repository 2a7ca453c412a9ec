#include "config.h"
#include "policy_paths.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "safe_path.h"
#include "utils.h"

/* One component beneath dirfd: never a link (O_NOFOLLOW opens a final link
 * as itself; RESOLVE_NO_SYMLINKS refuses any other), never above dirfd. */
static int
open_component (int dirfd, const char *name)
{
  return hv_open_beneath_nofollow (dirfd, name, O_PATH);
}

/* path is prefix itself or below it ("/a/b" is under "/a", "/ab" is not). */
static const char *
under (const char *path, const char *prefix)
{
  size_t n = strlen (prefix);
  while (n > 0 && prefix[n - 1] == '/')
    n--;
  if (strncmp (path, prefix, n) != 0 || (path[n] != '/' && path[n] != '\0'))
    return NULL;
  return path + n;
}

char *
hv_policy_home_real (const struct hv_run_ctx *ctx)
{
  if (ctx->home == NULL || ctx->home[0] != '/')
    return NULL;
  return realpath (ctx->home, NULL);
}

static int
open_anchor (const char *real)
{
  if (real[0] == '\0')
    return open ("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
  cleanup_close int root = open ("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (root < 0)
    return -1;
  return hv_openat2 (root, real + 1, O_PATH | O_DIRECTORY, 0, RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS);
}

struct anchor
{
  char *real;     /* the anchor's real path ("" for "/") */
  const char *rest; /* what follows it in the path */
  bool hostile;   /* the project or the home: a run may have written below */
};

/* The longest of project, home (as spelled, or its real path) and "/"
 * that the path is under. */
static void
pick_anchor (const struct hv_run_ctx *ctx, const char *path, struct anchor *a)
{
  /* $HOME's real path, unless $HOME already is one of the caller's homes
   * (those are real paths): no realpath() for every path resolved. */
  bool home_is_real = ctx->homes && ctx->home && oci_strv_contains (ctx->homes, ctx->home);
  cleanup_free char *home_real = home_is_real ? NULL : hv_policy_home_real (ctx);
  const char *best_rest = NULL;
  const char *best_real = NULL;
  /* The project, $HOME as spelled and its real path, and every home of
   * the caller (real paths: $HOME's and the password database's). */
  size_t n_homes = ctx->homes ? ctx->homes->n : 0;
  for (size_t i = 0; i < 3 + n_homes; i++)
    {
      const char *spelled, *real;
      if (i == 0)
        spelled = real = ctx->project;
      else if (i == 1)
        spelled = ctx->home, real = home_real;
      else if (i == 2)
        spelled = real = home_real;
      else
        spelled = real = ctx->homes->v[i - 3];
      const char *rest = spelled && real && spelled[0] == '/' ? under (path, spelled) : NULL;
      if (rest && (best_rest == NULL || rest > best_rest))
        {
          best_rest = rest;
          best_real = real;
        }
    }
  if (best_rest)
    {
      a->real = xstrdup (best_real);
      a->rest = best_rest;
      a->hostile = true;
      size_t n = strlen (a->real);
      while (n > 0 && a->real[n - 1] == '/')
        a->real[--n] = '\0';
    }
  else
    {
      a->real = xstrdup ("");
      a->rest = path;
      a->hostile = false;
    }
}

/* One step down: component C below *cur, never through a link; *cur
 * moves to it (the one above is closed).  HV_PATH_MISSING when it does
 * not exist or cannot be searched, HV_PATH_LINK when it is a link (OUT
 * takes its fd), HV_PATH_FOUND, or -1. */
static int
descend (int *cur, const char *c, const char *path, struct hv_policy_path *out, hv_error **err)
{
  int next = open_component (*cur, c);
  close (*cur);
  *cur = -1;
  if (next < 0)
    {
      if (errno != ENOENT && errno != ENOTDIR && errno != EACCES)
        return hv_error_set (err, errno, "resolve %s", path);
      return HV_PATH_MISSING;
    }
  struct stat st;
  if (fstat (next, &st) < 0)
    {
      hv_error_set (err, errno, "stat %s", out->real);
      close (next);
      return -1;
    }
  if (S_ISLNK (st.st_mode))
    {
      out->link = xstrdup (out->real);
      out->fd = next;
      out->st = st;
      return HV_PATH_LINK;
    }
  *cur = next;
  return HV_PATH_FOUND;
}

/* REST's components below the anchor *cur, one at a time.  out->real
 * spells the whole path, also past a missing component or a link. */
static int
walk (const char *path, char *rest, int *cur, struct hv_policy_path *out, hv_error **err)
{
  size_t len = strlen (out->real);
  int status = HV_PATH_FOUND;
  char *save = NULL;
  for (char *c = strtok_r (rest, "/", &save); c; c = strtok_r (NULL, "/", &save))
    {
      if (strcmp (c, ".") == 0)
        continue;
      if (strcmp (c, "..") == 0)
        return hv_error_set (err, 0, "policy path \"%s\": \"..\" is not allowed", path);
      out->real[len++] = '/';
      strcpy (out->real + len, c);
      len += strlen (c);
      if (status != HV_PATH_FOUND)
        continue; /* only spelling the rest of the path */
      status = descend (cur, c, path, out, err);
      if (status < 0)
        return -1;
    }
  return status;
}

/* The walk's end: a path found keeps its fd, with its stat. */
static int
finish_walk (int cur, int status, struct hv_policy_path *out, hv_error **err)
{
  if (out->real[0] == '\0')
    strcpy (out->real, "/");
  if (status == HV_PATH_FOUND)
    {
      out->fd = cur;
      if (fstat (cur, &out->st) < 0)
        {
          hv_error_set (err, errno, "stat %s", out->real);
          hv_policy_path_clear (out);
          return -1;
        }
    }
  else if (cur >= 0)
    close (cur);
  if (status == HV_PATH_LINK)
    out->link_last = strcmp (out->link, out->real) == 0;
  return status;
}

int
hv_policy_path_resolve (const struct hv_run_ctx *ctx, const char *path, struct hv_policy_path *out, hv_error **err)
{
  memset (out, 0, sizeof (*out));
  out->fd = -1;
  if (path[0] != '/')
    return hv_error_set (err, 0, "policy path \"%s\" is not absolute", path);
  struct anchor a;
  pick_anchor (ctx, path, &a);
  out->in_sandbox_writable = a.hostile;
  cleanup_free char *anchor_real = a.real;
  /* The anchors are opened by their real path from "/", refusing links
   * too: a project or home that turned into a link since it was resolved
   * is not trusted either. */
  int cur = open_anchor (anchor_real);
  if (cur < 0)
    return hv_error_set (err, errno, "open %s", anchor_real[0] ? anchor_real : "/");

  cleanup_free char *rest = xstrdup (a.rest);
  size_t cap = strlen (anchor_real) + strlen (rest) + 2;
  out->real = xmalloc0 (cap);
  strcpy (out->real, anchor_real);
  int status = walk (path, rest, &cur, out, err);
  if (status < 0)
    {
      if (cur >= 0)
        close (cur);
      hv_policy_path_clear (out);
      return -1;
    }
  return finish_walk (cur, status, out, err);
}

void
hv_policy_path_clear (struct hv_policy_path *p)
{
  if (p->fd >= 0)
    close (p->fd);
  p->fd = -1;
  free (p->real);
  free (p->link);
  p->real = p->link = NULL;
}

int
hv_policy_path_open (const struct hv_run_ctx *ctx, const char *path, int *fd_out, struct stat *st_out,
                     hv_error **err)
{
  struct hv_policy_path p;
  int r = hv_policy_path_resolve (ctx, path, &p, err);
  *fd_out = -1;
  if (r < 0)
    return -1;
  *fd_out = p.fd;
  if (st_out)
    *st_out = p.st;
  p.fd = -1;
  hv_policy_path_clear (&p);
  return r;
}
