/* A reader for git's index (.git/index, versions 2 to 4) and git's SHA-1
 * object names, for haven's check of tracked files the policy hides
 * (git_hidden_tracked.h).  The index is hostile (the sandbox writes it):
 * every length is checked against the file. */
#ifndef HAVEN_GIT_INDEX_H
#define HAVEN_GIT_INDEX_H

#include <stddef.h>
#include <stdint.h>

#include "error.h"

struct hv_git_index_entry
{
  char *path;        /* relative to the work tree */
  uint32_t mode;     /* 0100644, 0100755, 0120000, 0160000 */
  uint32_t size;     /* the file's size when it was staged (low 32 bits) */
  uint8_t oid[20];   /* the staged blob's SHA-1 */
};

struct hv_git_index
{
  struct hv_git_index_entry *v;
  size_t n;
};

/* Stage-0 entries of an index text; an error names what is malformed. */
int hv_git_index_parse (const unsigned char *data, size_t len, struct hv_git_index *out, hv_error **err);
void hv_git_index_clear (struct hv_git_index *idx);

/* The SHA-1 object name git gives a blob with this content. */
void hv_git_blob_oid (const unsigned char *data, size_t len, uint8_t oid[20]);
#endif
