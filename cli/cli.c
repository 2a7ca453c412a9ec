#include "config.h"
#include "cli.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>


int
hv_opt_next (struct hv_opt_iter *it, const struct hv_opt *opts, const char **arg, hv_error **err)
{
  *arg = NULL;
  if (it->index >= it->argc)
    return 0;
  const char *a = it->argv[it->index];
  if (a[0] != '-' || a[1] == '\0')
    return 0;
  if (strcmp (a, "--") == 0)
    {
      it->index++;
      return 0;
    }
  const char *name = a + 1 + (a[1] == '-');
  size_t name_len = strcspn (name, "=");
  const char *inline_value = name[name_len] == '=' ? name + name_len + 1 : NULL;
  for (const struct hv_opt *o = opts; o->name; o++)
    {
      bool match = (strlen (o->name) == name_len && strncmp (o->name, name, name_len) == 0)
                   || (o->short_name && name_len == 1 && a[1] != '-' && name[0] == o->short_name);
      if (!match)
        continue;
      it->index++;
      if (o->has_arg && inline_value == NULL)
        {
          if (it->index >= it->argc)
            return hv_error_set (err, 0, "%s: option %s requires a value", it->cmd, a);
          *arg = it->argv[it->index++];
        }
      else
        *arg = inline_value;
      return o->id;
    }
  return hv_error_set (err, 0, "%s: unknown option %s (see --help)", it->cmd, a);
}

bool
hv_opt_bool (const char *arg)
{
  return arg == NULL || strcmp (arg, "true") == 0 || strcmp (arg, "1") == 0;
}

int
cli_require_id (const char *cmd, struct hv_opt_iter *it, const char **id, hv_error **err)
{
  int remaining = it->argc - it->index;
  if (remaining < 1)
    return hv_error_set (err, 0, "%s: a container id is required", cmd);
  if (remaining > 1)
    return hv_error_set (err, 0, "%s: unexpected argument \"%s\"", cmd, it->argv[it->index + 1]);
  *id = it->argv[it->index];
  return 0;
}
