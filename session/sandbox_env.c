/* A command's environment in a sandbox, and its record in the trail. */
#include "config.h"

#include <fnmatch.h>
#include <string.h>
#include <yajl/yajl_gen.h>

#include "policy_env.h"
#include "sandbox_priv.h"
#include "utils.h"

static int
check_var (const hv_sandbox *sb, const char *name, hv_error **err)
{
  if (oci_strv_contains (&sb->r.env_fixed, name))
    return hv_error_set (err, 0, "env %s: set by the policy %s (env.set, its credentials, or haven): a command does "
                                 "not replace it", name, sb->r.policy_name);
  const oci_strv *deny = &sb->rules->env_deny;
  for (size_t i = 0; i < deny->n; i++)
    if (fnmatch (deny->v[i], name, 0) == 0)
      return hv_error_set (err, 0, "env %s: refused by the policy %s's env.deny \"%s\"", name, sb->r.policy_name,
                           deny->v[i]);
  if (hv_env_passes (sb->rules, name))
    return 0;
  const char *cred = hv_env_credential_glob (name);
  const oci_strv *pass = &sb->rules->env_pass;
  for (size_t i = 0; cred && i < pass->n; i++)
    if (fnmatch (pass->v[i], name, 0) == 0)
      return hv_error_set (err, 0, "env %s: looks like a credential (\"%s\"): the policy %s's env.pass \"%s\" is a "
                                   "glob, and only a name written out in env.pass passes such a variable",
                           name, cred, sb->r.policy_name, pass->v[i]);
  return hv_error_set (err, 0, "env %s: not passed by the policy %s (no env.pass entry matches it)", name,
                       sb->r.policy_name);
}

/* envp's NAME= entry replaced by entry, or entry added. */
static void
put (oci_strv *envp, const char *entry, size_t klen)
{
  for (size_t i = 0; i < envp->n; i++)
    if (strncmp (envp->v[i], entry, klen) == 0 && envp->v[i][klen] == '=')
      {
        free (envp->v[i]);
        envp->v[i] = xstrdup (entry);
        return;
      }
  oci_strv_push (envp, entry);
}

int
hv_sandbox_command_env (const hv_sandbox *sb, char *const *request_env, oci_strv *envp, hv_error **err)
{
  oci_strv out = { 0 };
  for (size_t i = 0; i < sb->r.env.n; i++)
    oci_strv_push (&out, sb->r.env.v[i]);
  for (char *const *e = request_env; e && *e; e++)
    {
      const char *eq = strchr (*e, '=');
      if (eq == NULL || eq == *e)
        {
          oci_strv_free (&out);
          return hv_error_set (err, 0, "env \"%s\": not NAME=VALUE", *e);
        }
      cleanup_free char *name = xstrdup (*e);
      name[eq - *e] = '\0';
      if (check_var (sb, name, err) < 0)
        {
          oci_strv_free (&out);
          return -1;
        }
      put (&out, *e, (size_t) (eq - *e));
    }
  *envp = out;
  return 0;
}

static void
gen_key (yajl_gen g, const char *k)
{
  yajl_gen_string (g, (const unsigned char *) k, strlen (k));
}

/* A record of this sandbox's in the policy's trail, event and the
 * sandbox's id written; NULL when the policy keeps no trail.  The caller
 * adds its members and ends it with end_record. */
static yajl_gen
begin_record (hv_sandbox *sb, struct hv_audit_trail *t, const char *event)
{
  if (sb->audit.log_fd < 0)
    return NULL;
  hv_audit_trail_init (t, sb->audit.log_fd, sb->r.policy_name, NULL);
  t->sandbox = sb->r.id;
  t->run = sb->audit.run;
  yajl_gen g = hv_audit_trail_record (t, event);
  return g;
}

static void
end_record (struct hv_audit_trail *t, yajl_gen g)
{
  hv_audit_trail_emit (t, g);
  hv_audit_trail_release (t);
}

void
hv_sandbox_trail_claimed (hv_sandbox *sb)
{
  struct hv_audit_trail t;
  yajl_gen g = begin_record (sb, &t, "claimed");
  if (g)
    end_record (&t, g);
}

void
hv_sandbox_trail_command (hv_sandbox *sb, uint32_t run_id, char *const *argv, int exit_status)
{
  struct hv_audit_trail t;
  yajl_gen g = begin_record (sb, &t, "command");
  if (g == NULL)
    return;
  gen_key (g, "run_id");
  yajl_gen_integer (g, run_id);
  gen_key (g, "argv");
  yajl_gen_array_open (g);
  for (char *const *a = argv; a && *a; a++)
    hv_audit_put_str (g, *a);
  yajl_gen_array_close (g);
  gen_key (g, "status");
  yajl_gen_integer (g, exit_status);
  end_record (&t, g);
}
