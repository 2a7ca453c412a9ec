/* haven-runc exec: its options, and the process they describe (the
 * container's own, a --process file, and command-line overrides), run by
 * the runtime library's hv_container_exec (runtime/container_exec.c). */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "config_policy.h"
#include "container.h"
#include "file_read.h"
#include "oci_tables.h"
#include "process_opts.h"
#include "utils.h"

enum
{
  OPT_PROCESS = 1,
  OPT_TTY,
  OPT_CWD,
  OPT_ENV,
  OPT_USER,
  OPT_ADDITIONAL_GIDS,
  OPT_CAP,
  OPT_NO_NEW_PRIVS,
  OPT_APPARMOR,
  OPT_PROCESS_LABEL,
  OPT_IGNORE_PAUSED,
  OPT_CGROUP,
};

static const struct hv_opt exec_opts[] = {
  HV_PROCESS_OPTIONS,
  { "process", 'p', true, OPT_PROCESS },
  { "tty", 't', false, OPT_TTY },
  { "cwd", 0, true, OPT_CWD },
  { "env", 'e', true, OPT_ENV },
  { "user", 'u', true, OPT_USER },
  { "additional-gids", 'g', true, OPT_ADDITIONAL_GIDS },
  { "cap", 'c', true, OPT_CAP },
  { "no-new-privs", 0, false, OPT_NO_NEW_PRIVS },
  { "apparmor", 0, true, OPT_APPARMOR },
  { "process-label", 0, true, OPT_PROCESS_LABEL },
  { "ignore-paused", 0, false, OPT_IGNORE_PAUSED },
  { "cgroup", 0, true, OPT_CGROUP },
  { NULL, 0, false, 0 },
};

struct exec_opts
{
  struct hv_exec_opts exec; /* what the runtime library takes */
  const char *process_file, *cwd, *user, *apparmor;
  bool tty, tty_set, no_new_privs;
  oci_strv env, caps, gids;
};

static void
strv_replace (oci_strv *dst, int argc, char **argv)
{
  oci_strv fresh = { 0 };
  for (int i = 0; i < argc; i++)
    oci_strv_push (&fresh, argv[i]);
  for (size_t i = 0; i < dst->n; i++)
    free (dst->v[i]);
  free (dst->v);
  *dst = fresh;
}

/* Apply command-line overrides on top of the container's process. */
static int
apply_overrides (oci_process *p, struct exec_opts *o, hv_error **err)
{
  if (o->tty_set)
    p->terminal = o->tty;
  if (o->cwd)
    {
      free (p->cwd);
      p->cwd = xstrdup (o->cwd);
    }
  for (size_t i = 0; i < o->env.n; i++)
    {
      const char *eq = strchr (o->env.v[i], '=');
      if (eq == NULL)
        return hv_error_set (err, 0, "exec: --env \"%s\" is not KEY=value", o->env.v[i]);
      /* Replace an existing variable of the same name. */
      size_t klen = (size_t) (eq - o->env.v[i]) + 1;
      bool replaced = false;
      for (size_t j = 0; j < p->env.n && !replaced; j++)
        if (strncmp (p->env.v[j], o->env.v[i], klen) == 0)
          {
            free (p->env.v[j]);
            p->env.v[j] = xstrdup (o->env.v[i]);
            replaced = true;
          }
      if (!replaced)
        oci_strv_push (&p->env, o->env.v[i]);
    }
  if (o->user)
    {
      char *end;
      unsigned long uid = strtoul (o->user, &end, 10);
      if (end == o->user || (*end != '\0' && *end != ':'))
        return hv_error_set (err, 0, "exec: --user \"%s\" must be UID[:GID]", o->user);
      p->user.uid = (uint32_t) uid;
      if (*end == ':')
        {
          char *gend;
          p->user.gid = (uint32_t) strtoul (end + 1, &gend, 10);
          if (*gend != '\0' || gend == end + 1)
            return hv_error_set (err, 0, "exec: --user \"%s\" must be UID[:GID]", o->user);
        }
    }
  if (o->gids.n)
    {
      free (p->user.additional_gids);
      p->user.additional_gids = xmalloc0 (o->gids.n * sizeof (uint32_t));
      p->user.n_additional_gids = o->gids.n;
      for (size_t i = 0; i < o->gids.n; i++)
        p->user.additional_gids[i] = (uint32_t) strtoul (o->gids.v[i], NULL, 10);
    }
  for (size_t i = 0; i < o->caps.n; i++)
    {
      if (oci_capability_from_name (o->caps.v[i]) < 0)
        return hv_error_set (err, 0, "exec: unknown capability \"%s\"", o->caps.v[i]);
      p->capabilities.present = true;
      oci_strv_push (&p->capabilities.bounding, o->caps.v[i]);
      oci_strv_push (&p->capabilities.effective, o->caps.v[i]);
      oci_strv_push (&p->capabilities.permitted, o->caps.v[i]);
    }
  if (o->no_new_privs)
    p->no_new_privileges = true;
  if (o->apparmor)
    {
      free (p->apparmor_profile);
      p->apparmor_profile = xstrdup (o->apparmor);
    }
  return 0;
}

static int
parse_exec (int argc, char **argv, struct exec_opts *o, const char **id, int *cmd_index, hv_error **err)
{
  struct hv_opt_iter it = { argc, argv, 1, "exec" };
  const char *arg;
  int opt;
  struct hv_process_opts p = { 0 };
  while ((opt = hv_opt_next (&it, exec_opts, &arg, err)) > 0)
    switch (opt)
      {
      case OPT_PROCESS:
        o->process_file = arg;
        break;
      case OPT_TTY:
        o->tty = hv_opt_bool (arg);
        o->tty_set = true;
        break;
      case OPT_CWD:
        o->cwd = arg;
        break;
      case OPT_ENV:
        oci_strv_push (&o->env, arg);
        break;
      case OPT_USER:
        o->user = arg;
        break;
      case OPT_ADDITIONAL_GIDS:
        oci_strv_push (&o->gids, arg);
        break;
      case OPT_CAP:
        oci_strv_push (&o->caps, arg);
        break;
      case OPT_NO_NEW_PRIVS:
        o->no_new_privs = hv_opt_bool (arg);
        break;
      case OPT_APPARMOR:
        o->apparmor = arg;
        break;
      case OPT_IGNORE_PAUSED:
        o->exec.ignore_paused = true;
        break;
      default:
        if (hv_process_opt ("exec", opt, arg, &p, err) < 0)
          return -1;
        break;
      }
  if (opt < 0)
    return -1;
  o->exec.pid_file = p.pid_file;
  o->exec.console_socket = p.console_socket;
  o->exec.preserve_fds = p.preserve_fds;
  o->exec.detach = p.detach;
  if (it.index >= argc)
    return hv_error_set (err, 0, "exec: a container id is required");
  *id = argv[it.index];
  *cmd_index = it.index + 1;
  if (o->process_file == NULL && *cmd_index >= argc)
    return hv_error_set (err, 0, "exec: give a command or --process FILE");
  return 0;
}

int
cmd_exec (struct hv_global *g, int argc, char **argv, hv_error **err)
{
  struct exec_opts o = { 0 };
  const char *id = NULL;
  int cmd_index = 0;
  cleanup_container hv_container *c = NULL;
  cleanup_spec oci_spec *spec = NULL, *container = NULL;
  int ret = -1;
  if (parse_exec (argc, argv, &o, &id, &cmd_index, err) < 0)
    goto out;
  if (hv_container_load (&g->rt, id, &c, err) < 0 || hv_container_load_config (c, &spec, err) < 0
      || hv_container_load_config (c, &container, err) < 0)
    goto out;
  if (o.process_file)
    {
      cleanup_free char *text = NULL;
      size_t len;
      oci_process *p = NULL;
      if (hv_read_file (o.process_file, &text, &len, err) < 0
          || oci_process_parse (text, len, o.process_file, &p, err) < 0)
        goto out;
      /* The container's process is replaced wholesale by the file's. */
      oci_spec_free_process_fields (&spec->process);
      spec->process = *p;
      free (p);
    }
  else
    strv_replace (&spec->process.args, argc - cmd_index, argv + cmd_index);
  if (apply_overrides (&spec->process, &o, err) < 0 || hv_exec_apply_policies (g, container, &spec->process, err) < 0)
    goto out;
  ret = hv_container_exec (&g->rt, c, spec, &o.exec, &g->exit_status, err);
out:
  oci_strv_free (&o.env);
  oci_strv_free (&o.caps);
  oci_strv_free (&o.gids);
  return ret;
}
