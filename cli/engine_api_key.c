#include "config.h"
#include "engine_api_key.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gateway_config.h"
#include "utils.h"

/* Absolute, and no "." or ".." component or empty one: the path that is
 * checked at registration is the one the runtime opens, component by
 * component, at each create. */
static bool
plain_absolute (const char *path)
{
  if (path[0] != '/')
    return false;
  for (const char *c = path + 1;; c = strchr (c, '/') + 1)
    {
      size_t len = strcspn (c, "/");
      if (len == 0 || (len == 1 && c[0] == '.') || (len == 2 && c[0] == '.' && c[1] == '.'))
        return false;
      if (c[len] == '\0')
        return true;
    }
}

int
hv_api_key_arg (const char *opt, const char *arg, const char *files[HV_GW_N_PROVIDERS], hv_error **err)
{
  const char *eq = strchr (arg, '=');
  if (eq == NULL)
    return hv_error_set (err, 0, "%s \"%s\": expected PROVIDER=FILE (anthropic, openai or gemini)", opt, arg);
  cleanup_free char *name = strndup (arg, (size_t) (eq - arg));
  const hv_gw_api *api = hv_gw_api_by_name (name);
  if (api == NULL)
    return hv_error_set (err, 0, "%s \"%s\": unknown provider \"%s\" (anthropic, openai or gemini)", opt, arg, name);
  const char *file = eq + 1;
  if (!plain_absolute (file))
    return hv_error_set (err, 0, "%s %s: the key file must be an absolute path without \".\", \"..\" or empty "
                         "components, not \"%s\"", opt, name, file);
  if (files[api->id])
    return hv_error_set (err, 0, "%s %s given twice (%s and %s)", opt, name, files[api->id], file);
  files[api->id] = file;
  return 0;
}

int
hv_api_key_file_check (const char *path, uid_t uid, hv_error **err)
{
  /* realpath equal to the path: no component is a link (O_NOFOLLOW
   * would see the last one only). */
  cleanup_free char *real = realpath (path, NULL);
  if (real == NULL)
    return hv_error_set (err, errno, "key file %s", path);
  if (strcmp (real, path) != 0)
    return hv_error_set (err, 0, "key file %s: reached through a symbolic link (it leads to %s): name the file "
                         "itself", path, real);
  struct stat st;
  if (lstat (path, &st) < 0)
    return hv_error_set (err, errno, "key file %s", path);
  if (!S_ISREG (st.st_mode))
    return hv_error_set (err, 0, "key file %s: not a regular file", path);
  if (st.st_uid != 0 && st.st_uid != uid)
    return hv_error_set (err, 0, "key file %s: owned by uid %u, not by root or you (uid %u)", path,
                         (unsigned) st.st_uid, (unsigned) uid);
  if (st.st_mode & (S_IRWXG | S_IRWXO))
    return hv_error_set (err, 0, "key file %s: mode %04o lets its group or others at it (chmod 600 %s)", path,
                         (unsigned) (st.st_mode & 07777), path);
  if (st.st_size == 0)
    return hv_error_set (err, 0, "key file %s: empty", path);
  /* Read as create reads it (its size bound, a key a header can carry):
   * a file create would refuse fails here, once, not every container. */
  char *key = NULL;
  if (hv_gw_read_key_file (path, &key, err) < 0)
    return -1;
  explicit_bzero (key, strlen (key));
  free (key);
  return 0;
}
