/* The policy items behind Landlock's refusals: landlock_audit_rules.h. */
#include "config.h"
#include "landlock_audit_rules.h"

#include <yajl/yajl_gen.h>

#include "json_gen.h"

char *
hv_policy_landlock_audit_json (const hv_policy *p)
{
  if (p->audit_log == NULL || p->audit_log[0] == '\0')
    return NULL;
  yajl_gen g = yajl_gen_alloc (NULL);
  yajl_gen_map_open (g);
  /* Execute rights come from allow_exec when it lists programs, else
   * from block_shell (policy_exec.c); without either every program is
   * executable and Landlock refuses no execve. */
  if (p->allow_exec.n > 0)
    jg_kv (g, "execute", "process.allow_exec");
  else if (p->block_shell.value)
    jg_kv (g, "execute", "process.block_shell");
  /* Write rights: the project (project_writable), read_write, home_allow
   * and tmpfs paths, /dev and /proc; a refused write was to none of them. */
  jg_kv (g, "write", "filesystem.read_write");
  yajl_gen_map_close (g);
  return jg_finish (g);
}
