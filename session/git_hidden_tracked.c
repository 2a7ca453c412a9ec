/* Tracked files the policy hides (git_hidden_tracked.h). */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "block_match.h"
#include "git_config.h"
#include "git_hidden_tracked.h"
#include "git_index.h"
#include "safe_path.h"
#include "utils.h"

#define INDEX_MAX (256u << 20)  /* bytes of .git/index read */
#define SNAPSHOT_MAX (16u << 20) /* a hidden file larger than this stays hidden */
#define SNAPSHOTS_MAX 1024
#define SNAPSHOT_BYTES_MAX (64u << 20) /* all of them: the bundle may be on /run, in memory */

/* A regular file beneath the project, never through a link (the sandbox
 * wrote the project); its content in *out when it is at most max bytes. */
static int
read_beneath (int projfd, const char *rel, size_t max, char **out, size_t *len)
{
  cleanup_close int fd = hv_openat2 (projfd, rel, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0,
                                     RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS);
  struct stat st;
  if (fd < 0 || fstat (fd, &st) < 0 || !S_ISREG (st.st_mode) || (uint64_t) st.st_size > max)
    return -1;
  cleanup_error hv_error *ignored = NULL;
  return oci_read_fd (fd, rel, (size_t) st.st_size, out, len, &ignored);
}

/* SHA-256 repositories name blobs differently: not read (their hidden
 * files stay hidden). */
static bool
sha1_repository (int projfd)
{
  cleanup_free char *text = NULL;
  size_t len = 0;
  if (read_beneath (projfd, ".git/config", 1u << 20, &text, &len) < 0)
    return true; /* no config: git's default, SHA-1 */
  cleanup_free char *format = hv_git_config_get (text, len, "extensions.objectformat");
  return format == NULL || strcasecmp (format, "sha1") == 0;
}

static int
snapshot (int dirfd, size_t n, const char *data, size_t len, char **name, hv_error **err)
{
  /* Flat in the bundle, whose removal does not descend (run_leftovers.c). */
  *name = xasprintf ("git-shown-%zu", n);
  cleanup_close int fd = openat (dirfd, *name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0444);
  if (fd < 0 || write_all (fd, data, len) < 0 || fchmod (fd, 0444) < 0)
    return hv_error_set (err, errno, "snapshot %s", *name);
  return 0;
}

int
hv_git_hidden_tracked (const hv_policy *p, const struct hv_run_ctx *ctx, const char *bundle, oci_strv *paths,
                       oci_strv *snapshots, hv_error **err)
{
  if (p->block.n == 0)
    return 0;
  cleanup_close int projfd = open (ctx->project, O_PATH | O_DIRECTORY | O_CLOEXEC);
  cleanup_free char *index = NULL;
  size_t len = 0;
  if (projfd < 0 || read_beneath (projfd, ".git/index", INDEX_MAX, &index, &len) < 0 || !sha1_repository (projfd))
    return 0;
  struct hv_git_index idx;
  cleanup_error hv_error *perr = NULL;
  if (hv_git_index_parse ((const unsigned char *) index, len, &idx, &perr) < 0)
    {
      fprintf (stderr, "haven: %s/.git/index: %s; hidden files git tracks stay /dev/null\n", ctx->project, perr->msg);
      return 0;
    }
  struct hv_block_matcher *matcher = hv_block_matcher_new (p, ctx);
  cleanup_close int dirfd = -1;
  size_t total = 0;
  int r = 0;
  for (size_t i = 0; i < idx.n && r == 0; i++)
    {
      const struct hv_git_index_entry *e = &idx.v[i];
      if ((e->mode & 0170000) != 0100000)
        continue;
      cleanup_free char *path = xasprintf ("%s/%s", ctx->project, e->path);
      if (!hv_block_matcher_hides (matcher, path))
        continue;
      cleanup_free char *data = NULL;
      size_t dlen = 0;
      uint8_t oid[20];
      bool same = read_beneath (projfd, e->path, SNAPSHOT_MAX, &data, &dlen) == 0 && dlen == e->size
                  && (hv_git_blob_oid ((const unsigned char *) data, dlen, oid), memcmp (oid, e->oid, 20) == 0);
      if (!same || paths->n >= SNAPSHOTS_MAX || total + dlen > SNAPSHOT_BYTES_MAX)
        {
          if (data && !same)
            fprintf (stderr,
                     "haven: %s is tracked by git and differs from what is staged: it stays hidden, so git add -A "
                     "and git commit -a in the sandbox refuse it (\"can only add regular files\"); name the files "
                     "to commit instead\n",
                     e->path);
          continue;
        }
      if (dirfd < 0)
        {
          dirfd = open (bundle, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
          if (dirfd < 0)
            {
              hv_git_index_clear (&idx);
              hv_block_matcher_free (matcher);
              return hv_error_set (err, errno, "open %s", bundle);
            }
        }
      cleanup_free char *name = NULL;
      r = snapshot (dirfd, paths->n, data, dlen, &name, err);
      if (r == 0)
        {
          cleanup_free char *snap = xasprintf ("%s/%s", bundle, name);
          oci_strv_push (paths, path);
          oci_strv_push (snapshots, snap);
          total += dlen;
        }
    }
  hv_git_index_clear (&idx);
  hv_block_matcher_free (matcher);
  return r;
}
