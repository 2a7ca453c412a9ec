/* Releasing and querying parsed specs. */
#include "config.h"

#include <string.h>

#include "json_walk.h"
#include "oci_spec.h"

static void
id_mappings_free (oci_id_mappings *m)
{
  free (m->v);
}

static void
hook_list_free (oci_hook_list *l)
{
  for (size_t i = 0; i < l->n; i++)
    {
      free (l->v[i].path);
      oci_strv_free (&l->v[i].args);
      oci_strv_free (&l->v[i].env);
    }
  free (l->v);
}

static void
blkio_free (oci_blkio_devices *d)
{
  free (d->v);
}

void
oci_spec_free_process_fields (oci_process *p)
{
  oci_strv_free (&p->args);
  oci_strv_free (&p->env);
  free (p->command_line);
  free (p->cwd);
  free (p->user.additional_gids);
  free (p->user.username);
  oci_strv_free (&p->capabilities.bounding);
  oci_strv_free (&p->capabilities.effective);
  oci_strv_free (&p->capabilities.inheritable);
  oci_strv_free (&p->capabilities.permitted);
  oci_strv_free (&p->capabilities.ambient);
  for (size_t i = 0; i < p->n_rlimits; i++)
    free (p->rlimits[i].type);
  free (p->rlimits);
  free (p->apparmor_profile);
  free (p->selinux_label);
  oci_strv_free (&p->scheduler.flags);
  free (p->exec_cpu_affinity_initial);
  free (p->exec_cpu_affinity_final);
}

void
oci_process_free (oci_process *p)
{
  if (p == NULL)
    return;
  oci_spec_free_process_fields (p);
  free (p);
}

void
oci_resources_free_fields (oci_resources *r)
{
  free (r->cpu.cpus);
  free (r->cpu.mems);
  blkio_free (&r->block_io.weight_device);
  blkio_free (&r->block_io.throttle_read_bps);
  blkio_free (&r->block_io.throttle_write_bps);
  blkio_free (&r->block_io.throttle_read_iops);
  blkio_free (&r->block_io.throttle_write_iops);
  for (size_t i = 0; i < r->n_hugepage_limits; i++)
    free (r->hugepage_limits[i].page_size);
  free (r->hugepage_limits);
  for (size_t i = 0; i < r->network.n_priorities; i++)
    free (r->network.priorities[i].name);
  free (r->network.priorities);
  for (size_t i = 0; i < r->n_rdma; i++)
    free (r->rdma[i].device);
  free (r->rdma);
  oci_kv_list_free (&r->unified);
  for (size_t i = 0; i < r->n_devices; i++)
    {
      free (r->devices[i].type);
      free (r->devices[i].access);
    }
  free (r->devices);
}

void
oci_resources_free (oci_resources *r)
{
  if (r == NULL)
    return;
  oci_resources_free_fields (r);
  free (r);
}

static void
seccomp_free (oci_seccomp *s)
{
  free (s->default_action_name);
  oci_strv_free (&s->architectures);
  oci_strv_free (&s->flags);
  free (s->listener_path);
  free (s->listener_metadata);
  for (size_t i = 0; i < s->n_syscalls; i++)
    {
      for (size_t j = 0; j < s->syscalls[i].n; j++)
        free (s->syscalls[i].names[j]);
      free (s->syscalls[i].names);
      free (s->syscalls[i].action_name);
      free (s->syscalls[i].args);
    }
  free (s->syscalls);
}

static void
linux_free (oci_linux *l)
{
  for (size_t i = 0; i < l->n_namespaces; i++)
    free (l->namespaces[i].path);
  free (l->namespaces);
  id_mappings_free (&l->uid_mappings);
  id_mappings_free (&l->gid_mappings);
  for (size_t i = 0; i < l->n_devices; i++)
    free (l->devices[i].path);
  free (l->devices);
  free (l->cgroups_path);
  oci_resources_free_fields (&l->resources);
  free (l->rootfs_propagation);
  seccomp_free (&l->seccomp);
  oci_kv_list_free (&l->sysctl);
  oci_strv_free (&l->masked_paths);
  oci_strv_free (&l->readonly_paths);
  free (l->mount_label);
  free (l->personality.domain);
  oci_strv_free (&l->personality.flags);
  free (l->intel_rdt.clos_id);
  free (l->intel_rdt.l3_cache_schema);
  free (l->intel_rdt.mem_bw_schema);
  for (size_t i = 0; i < l->net_devices.n; i++)
    {
      free (l->net_devices.v[i].host_name);
      free (l->net_devices.v[i].name);
    }
  free (l->net_devices.v);
}

void
oci_spec_free (oci_spec *s)
{
  if (s == NULL)
    return;
  free (s->oci_version);
  free (s->root.path);
  oci_spec_free_process_fields (&s->process);
  free (s->hostname);
  free (s->domainname);
  for (size_t i = 0; i < s->n_mounts; i++)
    {
      free (s->mounts[i].destination);
      free (s->mounts[i].type);
      free (s->mounts[i].source);
      oci_strv_free (&s->mounts[i].options);
      id_mappings_free (&s->mounts[i].uid_mappings);
      id_mappings_free (&s->mounts[i].gid_mappings);
    }
  free (s->mounts);
  hook_list_free (&s->hooks.prestart);
  hook_list_free (&s->hooks.create_runtime);
  hook_list_free (&s->hooks.create_container);
  hook_list_free (&s->hooks.start_container);
  hook_list_free (&s->hooks.poststart);
  hook_list_free (&s->hooks.poststop);
  oci_kv_list_free (&s->annotations);
  linux_free (&s->linux_cfg);
  free (s);
}

const char *
oci_kv_get (const oci_kv_list *l, const char *key)
{
  for (size_t i = 0; i < l->n; i++)
    if (strcmp (l->v[i].key, key) == 0)
      return l->v[i].value;
  return NULL;
}

const oci_namespace *
oci_spec_find_namespace (const oci_spec *spec, int type)
{
  for (size_t i = 0; i < spec->linux_cfg.n_namespaces; i++)
    if (spec->linux_cfg.namespaces[i].type == type)
      return &spec->linux_cfg.namespaces[i];
  return NULL;
}

void
oci_seccomp_free (oci_seccomp *s)
{
  if (s == NULL)
    return;
  seccomp_free (s);
  free (s);
}
