/* Per-project copies of JSON files keep only the project's entries (see
 * home_copy_filter.h). */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <yajl/yajl_gen.h>
#include <yajl/yajl_tree.h>

#include "file_read.h"
#include "home_copy_filter.h"
#include "json_gen.h"
#include "json_merge.h"
#include "json_walk.h"
#include "utils.h"

#define COPY_MAX_DEPTH 64

static bool
listed (const oci_strv *v, const char *s)
{
  for (size_t i = 0; i < v->n; i++)
    if (strcmp (v->v[i], s) == 0)
      return true;
  return false;
}

/* The project, or a directory in it. */
static bool
ours (const char *key, const char *project)
{
  size_t n = strlen (project);
  if (strncmp (key, project, n) != 0)
    return false;
  return key[n] == '\0' || key[n] == '/' || (n == 1 && project[0] == '/');
}

/* Whether anything would be dropped (so that an unchanged copy is not
 * rewritten at every start). */
static bool
needs_cut (yajl_val doc, const oci_strv *members, const char *project)
{
  for (size_t i = 0; i < doc->u.object.len; i++)
    {
      yajl_val m = doc->u.object.values[i];
      if (!listed (members, doc->u.object.keys[i]) || !YAJL_IS_OBJECT (m))
        continue;
      for (size_t j = 0; j < m->u.object.len; j++)
        if (!ours (m->u.object.keys[j], project))
          return true;
    }
  return false;
}

static void
gen_cut (yajl_gen g, yajl_val doc, const oci_strv *members, const char *project)
{
  yajl_gen_map_open (g);
  for (size_t i = 0; i < doc->u.object.len; i++)
    {
      const char *k = doc->u.object.keys[i];
      yajl_val m = doc->u.object.values[i];
      jg_str (g, k);
      if (!listed (members, k) || !YAJL_IS_OBJECT (m))
        {
          jm_gen_value (g, m);
          continue;
        }
      yajl_gen_map_open (g);
      for (size_t j = 0; j < m->u.object.len; j++)
        if (ours (m->u.object.keys[j], project))
          {
            jg_str (g, m->u.object.keys[j]);
            jm_gen_value (g, m->u.object.values[j]);
          }
      yajl_gen_map_close (g);
    }
  yajl_gen_map_close (g);
}

static int
replace (int efd, const char *file, const char *text, size_t len, hv_error **err)
{
  cleanup_free char *tmp = xasprintf ("%s.cut", file);
  cleanup_close int fd = openat (efd, tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0)
    return hv_error_set (err, errno, "create %s", tmp);
  if (write_all (fd, text, len) < 0 || fsync (fd) < 0)
    return hv_error_set (err, errno, "write %s", tmp);
  if (renameat (efd, tmp, efd, file) < 0)
    return hv_error_set (err, errno, "rename %s", tmp);
  return 0;
}

int
hv_home_copy_filter (int efd, const char *file, const char *real, const oci_strv *members, const char *project,
                     oci_strv *notes, hv_error **err)
{
  if (members->n == 0 || project == NULL)
    return 0;
  cleanup_close int fd = openat (efd, file, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0)
    return errno == ENOENT ? 0 : hv_error_set (err, errno, "open the copy of %s", real);
  struct stat st;
  if (fstat (fd, &st) < 0 || !S_ISREG (st.st_mode))
    return hv_error_set (err, errno, "the copy of %s is not a regular file", real);
  cleanup_free char *text = NULL;
  size_t len = 0;
  if (hv_read_fd (fd, real, (size_t) st.st_size, &text, &len, err) < 0)
    return -1;
  char errbuf[128];
  /* The sandbox wrote this copy: nesting yajl's recursive tree (and
   * yajl_gen's 127 levels) cannot take is refused unread. */
  bool deep = jw_too_deep (text, COPY_MAX_DEPTH);
  yajl_val doc = len && !deep ? yajl_tree_parse (text, errbuf, sizeof (errbuf)) : NULL;
  if (doc == NULL || !YAJL_IS_OBJECT (doc))
    {
      if (doc)
        yajl_tree_free (doc);
      if (len && strspn (text, " \t\r\n") == len)
        return 0;
      if (len == 0)
        return 0;
      cleanup_free char *why = deep ? xasprintf (" (nested deeper than %d levels)", COPY_MAX_DEPTH) : xstrdup ("");
      oci_strv_pushf (notes,
                      "this project's copy of %s is not a JSON object%s: it starts again empty ({}), "
                      "since the other projects' entries in it cannot be told apart",
                      real, why);
      return replace (efd, file, "{}\n", 3, err);
    }
  int r = 0;
  if (needs_cut (doc, members, project))
    {
      yajl_gen g = yajl_gen_alloc (NULL);
      if (g == NULL)
        abort ();
      gen_cut (g, doc, members, project);
      const unsigned char *buf;
      size_t n;
      yajl_gen_get_buf (g, &buf, &n);
      r = replace (efd, file, (const char *) buf, n, err);
      yajl_gen_free (g);
    }
  yajl_tree_free (doc);
  return r;
}
