/* spec: write a starting config.json, like `runc spec`. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "utils.h"

static const char spec_head[] =
  "{\n"
  "  \"ociVersion\": \"" HAVEN_OCI_VERSION "\",\n"
  "  \"process\": {\n"
  "    \"terminal\": true,\n"
  "    \"user\": { \"uid\": 0, \"gid\": 0 },\n"
  "    \"args\": [ \"sh\" ],\n"
  "    \"env\": [\n"
  "      \"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin\",\n"
  "      \"TERM=xterm\"\n"
  "    ],\n"
  "    \"cwd\": \"/\",\n"
  "    \"capabilities\": {\n"
  "      \"bounding\": [ \"CAP_AUDIT_WRITE\", \"CAP_KILL\", \"CAP_NET_BIND_SERVICE\" ],\n"
  "      \"effective\": [ \"CAP_AUDIT_WRITE\", \"CAP_KILL\", \"CAP_NET_BIND_SERVICE\" ],\n"
  "      \"permitted\": [ \"CAP_AUDIT_WRITE\", \"CAP_KILL\", \"CAP_NET_BIND_SERVICE\" ]\n"
  "    },\n"
  "    \"rlimits\": [ { \"type\": \"RLIMIT_NOFILE\", \"hard\": 1024, \"soft\": 1024 } ],\n"
  "    \"noNewPrivileges\": true\n"
  "  },\n"
  "  \"root\": { \"path\": \"rootfs\", \"readonly\": true },\n"
  "  \"hostname\": \"haven\",\n"
  "  \"mounts\": [\n"
  "    { \"destination\": \"/proc\", \"type\": \"proc\", \"source\": \"proc\" },\n"
  "    { \"destination\": \"/dev\", \"type\": \"tmpfs\", \"source\": \"tmpfs\",\n"
  "      \"options\": [ \"nosuid\", \"strictatime\", \"mode=755\", \"size=65536k\" ] },\n"
  "    { \"destination\": \"/dev/pts\", \"type\": \"devpts\", \"source\": \"devpts\",\n"
  "      \"options\": [ \"nosuid\", \"noexec\", \"newinstance\", \"ptmxmode=0666\", \"mode=0620\"%s ] },\n"
  "    { \"destination\": \"/dev/shm\", \"type\": \"tmpfs\", \"source\": \"shm\",\n"
  "      \"options\": [ \"nosuid\", \"noexec\", \"nodev\", \"mode=1777\", \"size=65536k\" ] },\n"
  "    { \"destination\": \"/dev/mqueue\", \"type\": \"mqueue\", \"source\": \"mqueue\",\n"
  "      \"options\": [ \"nosuid\", \"noexec\", \"nodev\" ] },\n"
  "%s"
  "  ],\n";

static const char sys_mounts_root[]
    = "    { \"destination\": \"/sys\", \"type\": \"sysfs\", \"source\": \"sysfs\",\n"
      "      \"options\": [ \"nosuid\", \"noexec\", \"nodev\", \"ro\" ] },\n"
      "    { \"destination\": \"/sys/fs/cgroup\", \"type\": \"cgroup\", \"source\": \"cgroup\",\n"
      "      \"options\": [ \"nosuid\", \"noexec\", \"nodev\", \"relatime\", \"ro\" ] }\n";

static const char sys_mounts_rootless[]
    = "    { \"destination\": \"/sys\", \"type\": \"none\", \"source\": \"/sys\",\n"
      "      \"options\": [ \"rbind\", \"nosuid\", \"noexec\", \"nodev\", \"ro\" ] }\n";

static const char spec_linux[] =
  "  \"linux\": {\n"
  "%s"
  "    \"maskedPaths\": [\n"
  "      \"/proc/acpi\", \"/proc/asound\", \"/proc/kcore\", \"/proc/keys\", \"/proc/latency_stats\",\n"
  "      \"/proc/timer_list\", \"/proc/timer_stats\", \"/proc/sched_debug\", \"/sys/firmware\",\n"
  "      \"/proc/scsi\", \"/sys/devices/virtual/powercap\"\n"
  "    ],\n"
  "    \"readonlyPaths\": [\n"
  "      \"/proc/bus\", \"/proc/fs\", \"/proc/irq\", \"/proc/sys\", \"/proc/sysrq-trigger\"\n"
  "    ],\n"
  "    \"namespaces\": [\n"
  "      { \"type\": \"pid\" }, { \"type\": \"ipc\" }, { \"type\": \"uts\" }, { \"type\": \"mount\" },\n"
  "      { \"type\": \"cgroup\" }%s\n"
  "    ]\n"
  "  }\n"
  "}\n";

int
cmd_spec (struct hv_global *g, int argc, char **argv, hv_error **err)
{
  static const struct hv_opt opts[] = { { "bundle", 'b', true, 1 }, { "rootless", 0, false, 2 }, { NULL, 0, false, 0 } };
  struct hv_opt_iter it = { argc, argv, 1, "spec" };
  const char *arg, *bundle = ".";
  bool rootless = false;
  int id;
  (void) g;
  while ((id = hv_opt_next (&it, opts, &arg, err)) > 0)
    if (id == 1)
      bundle = arg;
    else
      rootless = hv_opt_bool (arg);
  if (id < 0)
    return -1;
  if (it.index < argc)
    return hv_error_set (err, 0, "spec: unexpected argument \"%s\"", argv[it.index]);

  cleanup_free char *head = xasprintf (spec_head, rootless ? "" : ", \"gid=5\"",
                                       rootless ? sys_mounts_rootless : sys_mounts_root);
  cleanup_free char *ids = rootless ? xasprintf ("    \"uidMappings\": [ { \"containerID\": 0, \"hostID\": %u, \"size\": 1 } ],\n"
                                                 "    \"gidMappings\": [ { \"containerID\": 0, \"hostID\": %u, \"size\": 1 } ],\n",
                                                 (unsigned) getuid (), (unsigned) getgid ())
                                    : xstrdup ("    \"resources\": { \"devices\": [ { \"allow\": false, \"access\": \"rwm\" } ] },\n");
  cleanup_free char *tail = xasprintf (spec_linux, ids, rootless ? ", { \"type\": \"user\" }" : ", { \"type\": \"network\" }");
  cleanup_free char *doc = xasprintf ("%s%s", head, tail);
  cleanup_free char *path = xasprintf ("%s/config.json", bundle);
  if (write_file_at (AT_FDCWD, path, doc, strlen (doc), O_CREAT | O_EXCL, err) < 0)
    {
      if ((*err)->errno_code == EEXIST)
        {
          hv_error_free (err);
          return hv_error_set (err, 0, "spec: %s exists; remove it first", path);
        }
      return -1;
    }
  return 0;
}
