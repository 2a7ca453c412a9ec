#include "config.h"
#include "policy_glob.h"

#include <errno.h>
#include <fnmatch.h>
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>
#include <glob.h>
#include <stdbool.h>
#include <string.h>

#include "utils.h"

static void
append_glob (const char *pattern, oci_strv *out)
{
  glob_t gl;
  if (glob (pattern, GLOB_NOSORT, NULL, &gl) == 0)
    for (size_t i = 0; i < gl.gl_pathc; i++)
      oci_strv_push (out, gl.gl_pathv[i]);
  globfree (&gl);
}

static size_t
count_components (const char *s)
{
  size_t n = 1;
  for (; *s; s++)
    if (*s == '/')
      n++;
  return n;
}

/* The last n components of path ("a/b/c", 2 -> "b/c"), or NULL when it
 * has fewer. */
static const char *
last_components (const char *path, size_t n)
{
  const char *p = path + strlen (path);
  size_t seen = 0;
  while (p > path)
    {
      p--;
      if (*p == '/' && ++seen == n)
        return p + 1;
    }
  return seen + 1 == n ? path : NULL;
}

/* Depth-first walk state: the path so far (relative to the walk's root
 * after its prefix) and the bounds. */
struct walk
{
  const char *rest; /* the components after "**" */
  size_t k;         /* how many there are */
  bool literal;     /* no wildcard in rest: strcmp instead of fnmatch */
  size_t max_entries, *visited;
  char path[PATH_MAX];
  size_t root_len; /* path[0..root_len) is the directory walked */
  oci_strv *out;
  hv_error **err;
};

/* Match the entries of the open directory fd (whose path is w->path) and
 * descend into its subdirectories.  Symbolic links are never followed
 * (O_NOFOLLOW, d_type): a link in the project must not turn the walk into
 * one of the whole host.  The file type comes from getdents, so an entry
 * costs no system call of its own. */
static int
walk_dir (struct walk *w, int fd, unsigned depth)
{
  if (depth > 4096)
    return hv_error_set (w->err, 0, "%s: directories nested deeper than 4096 levels", w->path);
  DIR *d = fdopendir (fd);
  if (d == NULL)
    {
      close (fd);
      return 0;
    }
  size_t len = strlen (w->path);
  int r = 0;
  struct dirent *de;
  while (r == 0 && (de = readdir (d)) != NULL)
    {
      if (strcmp (de->d_name, ".") == 0 || strcmp (de->d_name, "..") == 0)
        continue;
      if (++*w->visited > w->max_entries)
        {
          w->path[w->root_len] = '\0';
          r = hv_error_set (w->err, 0,
                            "more than %zu entries under %s while looking for \"**/%s\"; narrow the pattern",
                            w->max_entries, w->path, w->rest);
          break;
        }
      size_t nlen = strlen (de->d_name);
      if (len + 1 + nlen >= sizeof (w->path))
        continue; /* longer than any path the kernel resolves */
      w->path[len] = '/';
      memcpy (w->path + len + 1, de->d_name, nlen + 1);
      const char *tail = w->k == 1 ? de->d_name : last_components (w->path + w->root_len + 1, w->k);
      if (tail && (w->literal ? strcmp (w->rest, tail) == 0 : fnmatch (w->rest, tail, FNM_PATHNAME) == 0))
        oci_strv_push (w->out, w->path);
      unsigned char type = de->d_type;
      if (type == DT_UNKNOWN)
        {
          struct stat st;
          type = fstatat (dirfd (d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR (st.st_mode) ? DT_DIR
                                                                                                          : DT_REG;
        }
      if (type == DT_DIR)
        {
          int sub = openat (dirfd (d), de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
          if (sub >= 0)
            r = walk_dir (w, sub, depth + 1);
        }
      w->path[len] = '\0';
    }
  closedir (d);
  return r;
}

/* Every path under dir whose last components match rest. */
static int
walk_matching (const char *dir, const char *rest, size_t max_entries, size_t *visited, oci_strv *out,
               hv_error **err)
{
  struct walk w = { .rest = rest, .k = count_components (rest), .literal = strpbrk (rest, "*?[\\") == NULL,
                    .max_entries = max_entries, .visited = visited, .out = out, .err = err };
  size_t dlen = strlen (dir);
  while (dlen > 1 && dir[dlen - 1] == '/')
    dlen--;
  if (dlen >= sizeof (w.path))
    return hv_error_set (err, 0, "path too long: %s", dir);
  int fd = open (dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dlen == 1 && dir[0] == '/')
    dlen = 0; /* entries are "/name", not "//name" */
  memcpy (w.path, dir, dlen);
  w.path[dlen] = '\0';
  w.root_len = dlen;
  if (fd < 0)
    return errno == ENOENT || errno == ENOTDIR || errno == EACCES ? 0 : hv_error_set (err, errno, "scan %s", dir);
  return walk_dir (&w, fd, 0);
}

int
hv_glob_expand (const char *pattern, size_t max_entries, oci_strv *out, hv_error **err)
{
  if (max_entries == 0)
    max_entries = HV_GLOB_MAX_ENTRIES;
  const char *dstar = strstr (pattern, "**");
  if (dstar == NULL)
    {
      append_glob (pattern, out);
      return 0;
    }
  /* Only a whole "**" component, once: "DIR/ ** /REST". */
  if ((dstar != pattern && dstar[-1] != '/') || dstar[2] != '/' || dstar[3] == '\0' || strstr (dstar + 2, "**"))
    return hv_error_set (err, 0, "pattern \"%s\": \"**\" must be a whole path component and appear once", pattern);
  cleanup_free char *prefix = xasprintf ("%.*s", (int) (dstar - pattern), pattern);
  const char *rest = dstar + 3;
  /* The prefix may itself be a pattern (/home/ * /projects/ ** /.env). */
  oci_strv dirs = { 0 };
  if (prefix[0] == '\0')
    oci_strv_push (&dirs, ".");
  else
    append_glob (prefix, &dirs);
  size_t visited = 0;
  int r = 0;
  for (size_t i = 0; i < dirs.n && r == 0; i++)
    r = walk_matching (dirs.v[i], rest, max_entries, &visited, out, err);
  oci_strv_free (&dirs);
  return r;
}
