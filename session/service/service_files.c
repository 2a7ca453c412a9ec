/* The files API of a sandbox's workspace (sandbox_files.h resolves every
 * path beneath the workspace without following links): write, read,
 * list, answered at once (local file operations of bounded size). */
#include "config.h"

#include <errno.h>
#include <string.h>

#include "json_gen.h"
#include "sandbox_files.h"
#include "service_files.h"
#include "service_reply.h"
#include "utils.h"

#define LIST_MAX 10000

static void
file_error (struct svc_conn *c, hv_error *err)
{
  switch (err->errno_code)
    {
    case ENOENT:
    case ENOTDIR:
      svc_reply_error (c, 404, "not_found", "%s", err->msg);
      break;
    case EFBIG:
      svc_reply_error (c, 413, "too_large", "%s", err->msg);
      break;
    case 0:
    case ELOOP:
    case EXDEV:
    case EINVAL:
    case EISDIR:
    case EEXIST: /* a link, fifo or device where a file is to be written: not replaced */
    case EACCES:
    case EPERM:
      svc_reply_error (c, 400, "bad_request", "%s", err->msg);
      break;
    default:
      svc_reply_error (c, 500, "internal", "%s", err->msg);
    }
}

/* A path the API takes, or false after answering 400. */
static bool
path_ok (struct svc_conn *c, const char *path)
{
  if (path && hv_workspace_path_ok (path))
    return true;
  svc_reply_error (c, 400, "bad_request", "a path: relative, without . or .. components");
  return false;
}

void
svc_handle_file_put (struct svc *s, struct svc_conn *c, struct svc_sandbox *x, const char *path)
{
  (void) s;
  cleanup_error hv_error *err = NULL;
  if (!path_ok (c, path))
    return;
  if (hv_workspace_write (hv_sandbox_workspace_fd (x->sb), path, c->body.data ? c->body.data : "", c->body.len, 0,
                          true, &err)
      < 0)
    {
      file_error (c, err);
      return;
    }
  yajl_gen g = yajl_gen_alloc (NULL);
  yajl_gen_map_open (g);
  jg_kv_utf8 (g, "path", path);
  jg_str (g, "size");
  yajl_gen_integer (g, (long long) c->body.len);
  yajl_gen_map_close (g);
  svc_reply_json (c, 200, jg_finish (g));
}

void
svc_handle_file_get (struct svc *s, struct svc_conn *c, struct svc_sandbox *x, const char *path)
{
  (void) s;
  cleanup_error hv_error *err = NULL;
  cleanup_free char *data = NULL;
  size_t len = 0;
  bool truncated = false;
  if (!path_ok (c, path))
    return;
  if (hv_workspace_read (hv_sandbox_workspace_fd (x->sb), path, HV_API_BODY_MAX, &data, &len, &truncated, &err) < 0)
    {
      file_error (c, err);
      return;
    }
  if (truncated)
    {
      svc_reply_error (c, 413, "too_large", "%s: larger than %d bytes", path, HV_API_BODY_MAX);
      return;
    }
  svc_reply (c, 200, "application/octet-stream", data ? data : "", len);
}

void
svc_handle_file_list (struct svc *s, struct svc_conn *c, struct svc_sandbox *x, const char *path)
{
  (void) s;
  cleanup_error hv_error *err = NULL;
  struct hv_workspace_entry *e = NULL;
  size_t n = 0;
  bool truncated = false;
  const char *rel = path && path[0] ? path : "";
  if (rel[0] && !path_ok (c, rel))
    return;
  if (hv_workspace_list (hv_sandbox_workspace_fd (x->sb), rel, LIST_MAX, &e, &n, &truncated, &err) < 0)
    {
      file_error (c, err);
      return;
    }
  yajl_gen g = yajl_gen_alloc (NULL);
  yajl_gen_map_open (g);
  jg_kv_utf8 (g, "path", rel);
  jg_str (g, "entries");
  yajl_gen_array_open (g);
  for (size_t i = 0; i < n; i++)
    {
      const char *type = e[i].type == 'f' ? "file" : e[i].type == 'd' ? "dir" : e[i].type == 'l' ? "link" : "other";
      yajl_gen_map_open (g);
      jg_kv_utf8 (g, "name", e[i].name);
      jg_kv (g, "type", type);
      jg_str (g, "size");
      yajl_gen_integer (g, (long long) e[i].size);
      yajl_gen_map_close (g);
    }
  yajl_gen_array_close (g);
  jg_str (g, "truncated");
  yajl_gen_bool (g, truncated);
  yajl_gen_map_close (g);
  hv_workspace_entries_free (e, n);
  svc_reply_json (c, 200, jg_finish (g));
}
