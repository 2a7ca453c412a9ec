/* Network `none` on an engine's config: container_network.h. */
#include "config.h"
#include "container_network.h"

#include <string.h>

#include "json_gen.h"
#include "json_walk.h"

static bool
is_network_hook (yajl_val hook)
{
  yajl_val args = jw_lookup (hook, "args");
  if (args == NULL || !YAJL_IS_ARRAY (args) || args->u.array.len == 0)
    return false;
  yajl_val a0 = args->u.array.values[0];
  return YAJL_IS_STRING (a0) && strcmp (a0->u.string, HV_DOCKER_NETWORK_HOOK) == 0;
}

void
hv_container_emit_hooks (yajl_gen g, yajl_val hooks, bool private_net)
{
  yajl_gen_map_open (g);
  for (size_t i = 0; i < hooks->u.object.len; i++)
    {
      yajl_val list = hooks->u.object.values[i];
      jg_str (g, hooks->u.object.keys[i]);
      if (!private_net || !YAJL_IS_ARRAY (list))
        {
          jg_value (g, list);
          continue;
        }
      yajl_gen_array_open (g);
      for (size_t j = 0; j < list->u.array.len; j++)
        {
          yajl_val h = list->u.array.values[j];
          if (!is_network_hook (h))
            jg_value (g, h);
        }
      yajl_gen_array_close (g);
    }
  yajl_gen_map_close (g);
}
