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
#include <stdlib.h>
#include <string.h>

#include "utils.h"

/* The first directory glob(3) could not read that a sandbox could make
 * readable again (unreadable_dir); glob's error callback has no argument
 * of its own. */
static __thread int glob_denied_errno;
static __thread char *glob_denied;

static int
glob_error (const char *epath, int eerrno)
{
  struct stat st;
  if ((eerrno == EACCES || eerrno == EPERM) && glob_denied == NULL && lstat (epath, &st) == 0
      && st.st_uid == geteuid ())
    {
      glob_denied = xstrdup (epath);
      glob_denied_errno = eerrno;
      return 1; /* stop: the expansion is incomplete */
    }
  return 0;
}

static int unreadable_dir (const char *path, int parent, const char *name, int e, hv_error **err);

/* The directory on the way to path that cannot be searched, given to
 * glob_error. */
static void
find_denied_parent (const char *pattern)
{
  cleanup_free char *path = xstrdup (pattern);
  size_t parent_len = 1; /* "/" */
  for (char *p = path + 1;; p++)
    {
      if (*p != '/' && *p != '\0')
        continue;
      char c = *p;
      *p = '\0';
      struct stat st;
      int e = lstat (path, &st) < 0 ? errno : 0;
      if (e == EACCES || e == EPERM)
        {
          path[parent_len] = '\0';
          glob_error (path, e);
          return;
        }
      if (e != 0 || c == '\0')
        return;
      *p = c;
      parent_len = (size_t) (p - path);
    }
}

/* glob(3)'s look-ups, through which it learns nothing of a directory it
 * cannot search (a path with no wildcard after a wildcard, "DIR/ * /key",
 * is only looked up, and a failed look-up is "no match"): each failure
 * for want of permission looks for the directory on the way that denied
 * it. */
static int
glob_checked_lstat (const char *path, struct stat *st)
{
  int r = lstat (path, st);
  if (r < 0 && (errno == EACCES || errno == EPERM))
    {
      int e = errno;
      find_denied_parent (path);
      errno = e;
    }
  return r;
}

static int
glob_checked_stat (const char *path, struct stat *st)
{
  int r = stat (path, st);
  if (r < 0 && (errno == EACCES || errno == EPERM))
    {
      int e = errno;
      find_denied_parent (path);
      errno = e;
    }
  return r;
}

static void *
glob_opendir (const char *path)
{
  return opendir (path);
}

static struct dirent *
glob_readdir (void *d)
{
  return readdir (d);
}

static void
glob_closedir (void *d)
{
  closedir (d);
}

static int
append_glob (const char *pattern, oci_strv *out, hv_error **err)
{
  glob_t gl = { .gl_closedir = glob_closedir, .gl_readdir = glob_readdir, .gl_opendir = glob_opendir,
                .gl_lstat = glob_checked_lstat, .gl_stat = glob_checked_stat };
  free (glob_denied);
  glob_denied = NULL;
  int r = glob (pattern, GLOB_NOSORT | GLOB_ALTDIRFUNC, glob_error, &gl);
  if (r == 0)
    for (size_t i = 0; i < gl.gl_pathc; i++)
      oci_strv_push (out, gl.gl_pathv[i]);
  globfree (&gl);
  /* A pattern without wildcards glob(3) only looks up, reporting nothing
   * when a directory on the way cannot be searched: find that one. */
  if (r == GLOB_NOMATCH && glob_denied == NULL && pattern[0] == '/' && pattern[strcspn (pattern, "*?[\\")] == '\0')
    find_denied_parent (pattern);
  if (glob_denied)
    {
      cleanup_free char *denied = glob_denied;
      glob_denied = NULL;
      return unreadable_dir (denied, AT_FDCWD, denied, glob_denied_errno, err);
    }
  return 0;
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

/* The components after "**" of one pattern, with what lets most entries
 * be rejected without fnmatch (every start pays for the walk). */
struct rest
{
  const char *pattern;
  size_t k;           /* how many components */
  bool literal;       /* no wildcard: strcmp */
  size_t prefix_len;  /* leading characters before the first wildcard */
  const char *suffix; /* "*SUFFIX" (one component, no other wildcard): SUFFIX */
};

static void
rest_init (struct rest *r, const char *pattern)
{
  r->pattern = pattern;
  r->k = count_components (pattern);
  r->prefix_len = strcspn (pattern, "*?[\\");
  r->literal = pattern[r->prefix_len] == '\0';
  r->suffix = r->k == 1 && pattern[0] == '*' && strpbrk (pattern + 1, "*?[\\") == NULL ? pattern + 1 : NULL;
}

/* tail: the last k components of the entry's path. */
static bool
rest_matches (const struct rest *r, const char *tail)
{
  if (r->literal)
    return strcmp (r->pattern, tail) == 0;
  if (strncmp (r->pattern, tail, r->prefix_len) != 0)
    return false;
  if (r->suffix)
    {
      size_t tl = strlen (tail), sl = strlen (r->suffix);
      return tl >= sl && strcmp (tail + tl - sl, r->suffix) == 0;
    }
  return fnmatch (r->pattern, tail, FNM_PATHNAME) == 0;
}

/* Depth-first walk state: the path so far, the patterns it looks for (all
 * of them in one walk) and the bounds. */
struct walk
{
  const struct rest *rests;
  size_t n_rests;
  size_t max_entries, *visited;
  char path[PATH_MAX];
  size_t root_len; /* path[0..root_len) is the directory walked */
  oci_strv *out;
  hv_error **err;
};

/* A directory the walk (or glob) cannot read.  Where the caller owns it, a sandbox
 * (running as the caller) could make it readable again (chmod) and read
 * what the walk did not see: a run that sets "sub" to mode 000 would make
 * the next run skip sub/dir/.env, and that run's chmod would show it.  So
 * that is an error, naming the directory.  One owned by another user
 * stays as closed to the sandbox as to the walk: skipped.  A directory
 * that vanished or stopped being one since it was listed (renamed,
 * removed, replaced by a link) is skipped: no sandbox can do that to a
 * directory holding a path it hides (policy_compile.c pins every parent
 * of a hidden path), and what another run made since its start it could
 * read anyway. */
static int
unreadable_dir (const char *path, int parent, const char *name, int e, hv_error **err)
{
  if (e == ENOENT || e == ENOTDIR || e == ELOOP)
    return 0;
  struct stat st;
  if ((e == EACCES || e == EPERM) && fstatat (parent, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && st.st_uid != geteuid ())
    return 0;
  if (e == EACCES || e == EPERM)
    return hv_error_set (err, 0,
                         "cannot read %s to find the paths the policy names: %s; a sandbox could make it readable "
                         "again (chmod) and reach what haven did not see there: make it readable (chmod u+rx) or "
                         "remove it",
                         path, strerror (e));
  return hv_error_set (err, e, "read %s to find the paths the policy names", path);
}

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
      int e = errno;
      close (fd);
      return hv_error_set (w->err, e, "read %s to find the paths the policy names", w->path);
    }
  size_t len = strlen (w->path);
  int r = 0;
  struct dirent *de;
  /* A read error is an error, never the end of the listing: the entries
   * not read could be the ones to hide. */
  while (r == 0 && (errno = 0, de = readdir (d)) != NULL)
    {
      if (strcmp (de->d_name, ".") == 0 || strcmp (de->d_name, "..") == 0)
        continue;
      if (++*w->visited > w->max_entries)
        {
          w->path[w->root_len] = '\0';
          if (w->n_rests > 1)
            r = hv_error_set (w->err, 0,
                              "more than %zu entries under %s while looking for \"**/%s\" and %zu more patterns; "
                              "narrow the pattern",
                              w->max_entries, w->path, w->rests[0].pattern, w->n_rests - 1);
          else
            r = hv_error_set (w->err, 0,
                              "more than %zu entries under %s while looking for \"**/%s\"; narrow the pattern",
                              w->max_entries, w->path, w->rests[0].pattern);
          break;
        }
      size_t nlen = strlen (de->d_name);
      if (len + 1 + nlen >= sizeof (w->path))
        continue; /* longer than any path the kernel resolves */
      w->path[len] = '/';
      memcpy (w->path + len + 1, de->d_name, nlen + 1);
      for (size_t i = 0; i < w->n_rests; i++)
        {
          const struct rest *rest = &w->rests[i];
          const char *tail = rest->k == 1 ? de->d_name : last_components (w->path + w->root_len + 1, rest->k);
          if (tail && rest_matches (rest, tail))
            {
              oci_strv_push (w->out, w->path);
              break;
            }
        }
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
          else
            r = unreadable_dir (w->path, dirfd (d), de->d_name, errno, w->err);
        }
      w->path[len] = '\0';
    }
  if (r == 0 && de == NULL && errno != 0)
    r = hv_error_set (w->err, errno, "read %s to find the paths the policy names", w->path);
  closedir (d);
  return r;
}

/* Every path under dir whose last components match one of rests. */
static int
walk_matching (const char *dir, const struct rest *rests, size_t n_rests, size_t max_entries, size_t *visited,
               oci_strv *out, hv_error **err)
{
  struct walk w = { .rests = rests, .n_rests = n_rests, .max_entries = max_entries, .visited = visited, .out = out,
                    .err = err };
  size_t dlen = strlen (dir);
  while (dlen > 1 && dir[dlen - 1] == '/')
    dlen--;
  if (dlen >= sizeof (w.path))
    return hv_error_set (err, 0, "path too long: %s", dir);
  int fd = open (dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  int open_errno = errno;
  if (dlen == 1 && dir[0] == '/')
    dlen = 0; /* entries are "/name", not "//name" */
  memcpy (w.path, dir, dlen);
  w.path[dlen] = '\0';
  w.root_len = dlen;
  if (fd < 0)
    return unreadable_dir (dir, AT_FDCWD, dir, open_errno, err);
  return walk_dir (&w, fd, 0);
}

/* Split "DIR/ ** /REST" at its "**": the prefix ("DIR/") and REST. */
static int
split_double_star (const char *pattern, const char *dstar, char **prefix, const char **rest, hv_error **err)
{
  /* Only a whole "**" component, once: "DIR/ ** /REST". */
  if ((dstar != pattern && dstar[-1] != '/') || dstar[2] != '/' || dstar[3] == '\0' || strstr (dstar + 2, "**"))
    return hv_error_set (err, 0, "pattern \"%s\": \"**\" must be a whole path component and appear once", pattern);
  *prefix = xasprintf ("%.*s", (int) (dstar - pattern), pattern);
  *rest = dstar + 3;
  return 0;
}

static int
compare_strings (const void *a, const void *b)
{
  return strcmp (*(char *const *) a, *(char *const *) b);
}

int
hv_glob_expand_set (char *const *patterns, size_t n, size_t max_entries, oci_strv *out, hv_error **err)
{
  if (max_entries == 0)
    max_entries = HV_GLOB_MAX_ENTRIES;
  /* "**" patterns with the same prefix share one walk: a policy lists a
   * dozen secret names under {project}, and a walk per name would make
   * every start a dozen times slower. */
  oci_strv prefixes = { 0 };
  struct rest *rests = n ? xmalloc0 (n * sizeof (*rests)) : NULL;
  size_t *group = n ? xmalloc0 (n * sizeof (*group)) : NULL;
  size_t n_rests = 0;
  int r = 0;
  for (size_t i = 0; i < n && r == 0; i++)
    {
      const char *dstar = strstr (patterns[i], "**");
      if (dstar == NULL)
        {
          r = append_glob (patterns[i], out, err);
          continue;
        }
      cleanup_free char *prefix = NULL;
      const char *rest;
      if ((r = split_double_star (patterns[i], dstar, &prefix, &rest, err)) < 0)
        break;
      size_t g = 0;
      while (g < prefixes.n && strcmp (prefixes.v[g], prefix) != 0)
        g++;
      if (g == prefixes.n)
        oci_strv_push (&prefixes, prefix);
      rest_init (&rests[n_rests], rest);
      group[n_rests++] = g;
    }
  size_t visited = 0;
  for (size_t g = 0; g < prefixes.n && r == 0; g++)
    {
      /* This group's rests, contiguous. */
      struct rest *mine = xmalloc0 (n_rests * sizeof (*mine));
      size_t n_mine = 0;
      for (size_t i = 0; i < n_rests; i++)
        if (group[i] == g)
          mine[n_mine++] = rests[i];
      /* The prefix may itself be a pattern (/home/ * /projects/ ** /.env). */
      oci_strv dirs = { 0 };
      if (prefixes.v[g][0] == '\0')
        oci_strv_push (&dirs, ".");
      else
        r = append_glob (prefixes.v[g], &dirs, err);
      size_t first = out->n;
      for (size_t i = 0; i < dirs.n && r == 0; i++)
        r = walk_matching (dirs.v[i], mine, n_mine, max_entries, &visited, out, err);
      /* Directories list their entries in an order of the file system's:
       * sorted, a policy compiles to the same config on every machine. */
      if (out->n > first)
        qsort (out->v + first, out->n - first, sizeof (char *), compare_strings);
      oci_strv_free (&dirs);
      free (mine);
    }
  oci_strv_free (&prefixes);
  free (rests);
  free (group);
  return r;
}

bool
hv_glob_match (const char *pattern, const char *path)
{
  const char *dstar = strstr (pattern, "**");
  if (dstar == NULL)
    return fnmatch (pattern, path, FNM_PATHNAME | FNM_PERIOD) == 0;
  cleanup_free char *prefix = NULL;
  const char *rest_pattern;
  if (split_double_star (pattern, dstar, &prefix, &rest_pattern, NULL) < 0 || prefix[0] != '/')
    return false;
  struct rest rest;
  rest_init (&rest, rest_pattern);
  /* The prefix without its slash ("" for "/") names the walked directory:
   * path must lie below one that matches it, REST matching its tail. */
  prefix[strlen (prefix) - 1] = '\0';
  for (const char *slash = path; (slash = strchr (slash, '/')) != NULL; slash++)
    {
      cleanup_free char *dir = xasprintf ("%.*s", (int) (slash - path), path);
      if (strcmp (dir, prefix) != 0 && fnmatch (prefix, dir, FNM_PATHNAME | FNM_PERIOD) != 0)
        continue;
      const char *below = slash + 1;
      if (*below == '\0')
        continue;
      const char *tail = last_components (below, rest.k);
      if (tail && rest_matches (&rest, tail))
        return true;
    }
  return false;
}

int
hv_glob_expand (const char *pattern, size_t max_entries, oci_strv *out, hv_error **err)
{
  char *one[] = { (char *) pattern };
  return hv_glob_expand_set (one, 1, max_entries, out, err);
}
