/* features: what this runtime implements (runtime-spec features.md). */
#include "config.h"

#include <seccomp.h>
#include <string.h>
#include <yajl/yajl_gen.h>

#include "capabilities.h"
#include "cli.h"
#include "json_gen.h"
#include "log.h"
#include "oci_tables.h"
#include "process.h"
#include "seccomp_arch.h"
#include "utils.h"

static void
str_array (yajl_gen g, const char *key, const char *const *v, size_t n)
{
  jg_str (g, key);
  yajl_gen_array_open (g);
  for (size_t i = 0; i < n; i++)
    if (v[i])
      jg_str (g, v[i]);
  yajl_gen_array_close (g);
}

static void
boolean (yajl_gen g, const char *key, bool v)
{
  jg_str (g, key);
  yajl_gen_bool (g, v);
}

static const char *const hooks[] = { "prestart", "createRuntime", "createContainer", "startContainer", "poststart",
                                     "poststop" };
static const char *const mount_options[] = {
  "async", "atime", "bind", "defaults", "dev", "diratime", "exec", "idmap", "mand", "noatime", "nodev",
  "nodiratime", "noexec", "nomand", "norelatime", "nostrictatime", "nosuid", "nosymfollow", "private", "ratime",
  "rbind", "rdev", "rdiratime", "relatime", "remount", "rexec", "rnoatime", "rnodev", "rnodiratime", "rnoexec",
  "rnorelatime", "rnostrictatime", "rnosuid", "rnosymfollow", "ro", "rprivate", "rrelatime", "rro", "rrw",
  "rshared", "rslave", "rstrictatime", "rsuid", "rsymfollow", "runbindable", "rw", "shared", "slave",
  "strictatime", "suid", "symfollow", "sync", "unbindable",
};

/* KEY: {"enabled": V} */
static void
enabled (yajl_gen g, const char *key, bool v)
{
  jg_str (g, key);
  yajl_gen_map_open (g);
  boolean (g, "enabled", v);
  yajl_gen_map_close (g);
}

static void
gen_capabilities (yajl_gen y)
{
  jg_str (y, "capabilities");
  yajl_gen_array_open (y);
  for (int c = 0; c <= hv_caps_last_cap () && oci_capability_name (c); c++)
    jg_str (y, oci_capability_name (c));
  yajl_gen_array_close (y);
}

static void
gen_cgroup (yajl_gen y)
{
  jg_str (y, "cgroup");
  yajl_gen_map_open (y);
  /* What the runtime implements, whatever this host runs (features.md):
   * both versions, rdma, and --systemd-cgroup through the system manager's
   * D-Bus API; not the user manager (rootless systemd driver). */
  boolean (y, "v1", true);
  boolean (y, "v2", true);
  boolean (y, "systemd", true);
  boolean (y, "systemdUser", false);
  boolean (y, "rdma", true);
  yajl_gen_map_close (y);
}

static void
gen_seccomp (yajl_gen y)
{
  jg_str (y, "seccomp");
  yajl_gen_map_open (y);
  boolean (y, "enabled", true);
  str_array (y, "actions", oci_seccomp_action_names, oci_seccomp_n_actions);
  str_array (y, "operators", oci_seccomp_operator_names + 1, OCI_SCMP_CMP_MASKED_EQ);
  jg_str (y, "archs");
  yajl_gen_array_open (y);
  for (size_t i = 0; oci_seccomp_arch_names[i]; i++)
    if (hv_seccomp_arch_supported (oci_seccomp_arch_names[i]))
      jg_str (y, oci_seccomp_arch_names[i]);
  yajl_gen_array_close (y);
  str_array (y, "knownFlags", oci_seccomp_flag_names, 4);
  str_array (y, "supportedFlags", oci_seccomp_flag_names, 3);
  yajl_gen_map_close (y);
}

static void
gen_linux (yajl_gen y)
{
  jg_str (y, "linux");
  yajl_gen_map_open (y);
  str_array (y, "namespaces", oci_namespace_names, 8);
  gen_capabilities (y);
  gen_cgroup (y);
  gen_seccomp (y);
  enabled (y, "apparmor", hv_apparmor_enabled ());
  enabled (y, "selinux", false);
  enabled (y, "intelRdt", false);
  jg_str (y, "mountExtensions");
  yajl_gen_map_open (y);
  enabled (y, "idmap", true);
  yajl_gen_map_close (y);
  yajl_gen_map_close (y);
}

int
cmd_features (struct hv_global *g, int argc, char **argv, hv_error **err)
{
  (void) g;
  if (argc > 1)
    return hv_error_set (err, 0, "features: unexpected argument \"%s\"", argv[1]);
  yajl_gen y = yajl_gen_alloc (NULL);
  yajl_gen_config (y, yajl_gen_beautify, 1);
  yajl_gen_config (y, yajl_gen_indent_string, "    ");
  yajl_gen_map_open (y);
  jg_str (y, "ociVersionMin");
  jg_str (y, "1.0.0");
  jg_str (y, "ociVersionMax");
  jg_str (y, HAVEN_OCI_VERSION);
  str_array (y, "hooks", hooks, N_ELEMENTS (hooks));
  str_array (y, "mountOptions", mount_options, N_ELEMENTS (mount_options));
  gen_linux (y);
  jg_str (y, "annotations");
  yajl_gen_map_open (y);
  jg_str (y, "io.github.haven.runtime");
  jg_str (y, "haven-runc " PACKAGE_VERSION);
  yajl_gen_map_close (y);
  yajl_gen_map_close (y);
  hv_write_json_line (1, y);
  yajl_gen_free (y);
  return 0;
}
