/* Does a policy apply to engine containers: container_check.h. */
#include "config.h"

#include <stdlib.h>

#include "container_check.h"
#include "json_gen.h"
#include "policy_apply.h"
#include "utils.h"

/* The parts of a Docker config that a policy rewrites: a root user's
 * process, the engine's usual mounts and a workspace bind, its own
 * namespaces, masks and a seccomp profile. */
static char *
sample_config (const char *project_dir)
{
  yajl_gen g = yajl_gen_alloc (NULL);
  jg_str (g, project_dir);
  cleanup_free char *source = jg_finish (g); /* a JSON string, quoted and escaped */
  return xasprintf (
      "{\"ociVersion\": \"1.0.2\","
      " \"process\": {\"user\": {\"uid\": 0, \"gid\": 0}, \"args\": [\"sh\"], \"cwd\": \"/workspace\","
      "  \"env\": [\"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin\", \"HOME=/root\"],"
      "  \"capabilities\": {\"bounding\": [\"CAP_CHOWN\", \"CAP_NET_RAW\"], \"effective\": [\"CAP_CHOWN\"]}},"
      " \"root\": {\"path\": \"/\"},"
      " \"mounts\": ["
      "  {\"destination\": \"/proc\", \"type\": \"proc\", \"source\": \"proc\"},"
      "  {\"destination\": \"/dev\", \"type\": \"tmpfs\", \"source\": \"tmpfs\"},"
      "  {\"destination\": \"/sys\", \"type\": \"sysfs\", \"source\": \"sysfs\", \"options\": [\"ro\"]},"
      "  {\"destination\": \"/dev/shm\", \"type\": \"tmpfs\", \"source\": \"shm\"},"
      "  {\"destination\": \"/workspace\", \"type\": \"bind\", \"source\": %s, \"options\": [\"rbind\"]}],"
      " \"linux\": {\"namespaces\": [{\"type\": \"mount\"}, {\"type\": \"network\"}, {\"type\": \"pid\"}],"
      "  \"resources\": {\"pids\": {\"limit\": 0}},"
      "  \"maskedPaths\": [\"/proc/kcore\"], \"readonlyPaths\": [\"/proc/sys\"],"
      "  \"seccomp\": {\"defaultAction\": \"SCMP_ACT_ERRNO\", \"syscalls\": []}}}",
      source);
}

int
hv_policy_check_for_containers (const hv_policy *p, const char *project_dir, const char *const *key_files,
                                oci_strv *notes, hv_error **err)
{
  cleanup_free char *config = sample_config (project_dir);
  cleanup_free char *out = NULL;
  /* The exec rules name programs of the image, which is not known yet:
   * everything else must apply; the exec rules are tried against this
   * host's programs, and what is missing is only said. */
  hv_policy without_exec = *p; /* shallow: read, never freed */
  without_exec.allow_exec.n = 0;
  without_exec.block_shell.value = false;
  if (hv_policy_apply_keys (&without_exec, config, "a container's config.json", key_files, &out, notes, err) < 0)
    return hv_error_wrap (err, "policy %s cannot apply to containers", p->name);
  if (p->allow_exec.n == 0 && !p->block_shell.value)
    return 0;
  cleanup_free char *with_exec = NULL;
  cleanup_error hv_error *exec_err = NULL;
  if (hv_policy_apply_keys (p, config, "a container's config.json", key_files, &with_exec, NULL, &exec_err) < 0)
    {
      cleanup_free char *note = xasprintf ("policy %s: a container whose image is like this host fails to start: %s",
                                           p->name, exec_err->msg);
      oci_strv_push (notes, note);
    }
  return 0;
}
