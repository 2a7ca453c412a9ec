#include "config.h"
#include "landlock.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/landlock.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "haven_annotations.h"
#include "json_walk.h"
#include "oci_json.h"
#include "safe_path.h"
#include "utils.h"

#ifndef LANDLOCK_ACCESS_FS_REFER
#define LANDLOCK_ACCESS_FS_REFER (1ULL << 13)
#endif
#ifndef LANDLOCK_ACCESS_FS_TRUNCATE
#define LANDLOCK_ACCESS_FS_TRUNCATE (1ULL << 14)
#endif
#ifndef LANDLOCK_RESTRICT_SELF_LOG_NEW_EXEC_ON
#define LANDLOCK_RESTRICT_SELF_LOG_NEW_EXEC_ON (1U << 1)
#endif
#ifndef LANDLOCK_ACCESS_FS_IOCTL_DEV
#define LANDLOCK_ACCESS_FS_IOCTL_DEV (1ULL << 15)
#endif
#ifndef LANDLOCK_ACCESS_NET_BIND_TCP
#define LANDLOCK_ACCESS_NET_BIND_TCP (1ULL << 0)
#define LANDLOCK_ACCESS_NET_CONNECT_TCP (1ULL << 1)
#define LANDLOCK_RULE_NET_PORT 2
struct landlock_net_port_attr
{
  __u64 allowed_access;
  __u64 port;
};
#endif
#ifndef LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET
#define LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET (1ULL << 0)
#define LANDLOCK_SCOPE_SIGNAL (1ULL << 1)
#endif

/* The ruleset attribute of ABI 6 (handled network access and scopes),
 * whatever the installed header declares: the kernel takes the size. */
struct ruleset_attr_v6
{
  __u64 handled_access_fs;
  __u64 handled_access_net;
  __u64 scoped;
};

#define READ_RIGHTS (LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_READ_DIR)
#define WRITE_RIGHTS                                                                               \
  (LANDLOCK_ACCESS_FS_WRITE_FILE | LANDLOCK_ACCESS_FS_REMOVE_DIR | LANDLOCK_ACCESS_FS_REMOVE_FILE    \
   | LANDLOCK_ACCESS_FS_MAKE_CHAR | LANDLOCK_ACCESS_FS_MAKE_DIR | LANDLOCK_ACCESS_FS_MAKE_REG        \
   | LANDLOCK_ACCESS_FS_MAKE_SOCK | LANDLOCK_ACCESS_FS_MAKE_FIFO | LANDLOCK_ACCESS_FS_MAKE_BLOCK     \
   | LANDLOCK_ACCESS_FS_MAKE_SYM | LANDLOCK_ACCESS_FS_REFER | LANDLOCK_ACCESS_FS_TRUNCATE             \
   | LANDLOCK_ACCESS_FS_IOCTL_DEV)
#define FILE_RIGHTS                                                                                \
  (LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_WRITE_FILE | LANDLOCK_ACCESS_FS_READ_FILE         \
   | LANDLOCK_ACCESS_FS_TRUNCATE | LANDLOCK_ACCESS_FS_IOCTL_DEV)

int
hv_landlock_abi (void)
{
  long abi = syscall (SYS_landlock_create_ruleset, NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);
  return abi < 0 ? -1 : (int) abi;
}

static uint64_t
handled_for_abi (int abi)
{
  uint64_t all = (LANDLOCK_ACCESS_FS_MAKE_SYM << 1) - 1; /* ABI 1: bits 0..12 */
  if (abi >= 2)
    all |= LANDLOCK_ACCESS_FS_REFER;
  if (abi >= 3)
    all |= LANDLOCK_ACCESS_FS_TRUNCATE;
  if (abi >= 5)
    all |= LANDLOCK_ACCESS_FS_IOCTL_DEV;
  return all;
}

/* A rule's path, opened with no symbolic link anywhere on the way: a link
 * planted in the project (".aider.x -> /etc") must never carry write or
 * execute rights to its target.  A path that is or crosses a link gets
 * no rule (-1 with errno ELOOP): fail closed. */
static int
open_rule_path (const char *path)
{
  return hv_open_host_nofollow (path, O_PATH);
}

static int
add_paths (int ruleset, const oci_strv *paths, uint64_t rights, uint64_t handled, hv_error **err)
{
  for (size_t i = 0; i < paths->n; i++)
    {
      cleanup_close int fd = open_rule_path (paths->v[i]);
      struct stat st;
      if (fd < 0)
        {
          if (errno == ENOENT || errno == EACCES || errno == ELOOP)
            continue; /* nothing there to grant, or only a link's target */
          return hv_error_set (err, errno, "landlock: open %s", paths->v[i]);
        }
      if (fstat (fd, &st) < 0)
        return hv_error_set (err, errno, "landlock: stat %s", paths->v[i]);
      struct landlock_path_beneath_attr attr = { .allowed_access = rights & handled, .parent_fd = fd };
      if (!S_ISDIR (st.st_mode))
        attr.allowed_access &= FILE_RIGHTS;
      if (attr.allowed_access == 0)
        continue;
      if (syscall (SYS_landlock_add_rule, ruleset, LANDLOCK_RULE_PATH_BENEATH, &attr, 0) < 0)
        return hv_error_set (err, errno, "landlock: add rule for %s", paths->v[i]);
    }
  return 0;
}

/* A TCP port the sandbox may connect to (Landlock network rule). */
static int
add_port (int ruleset, uint16_t port, hv_error **err)
{
  struct landlock_net_port_attr attr = { .allowed_access = LANDLOCK_ACCESS_NET_CONNECT_TCP, .port = port };
  if (syscall (SYS_landlock_add_rule, ruleset, LANDLOCK_RULE_NET_PORT, &attr, 0) < 0)
    return hv_error_set (err, errno, "landlock: add rule for TCP port %u", (unsigned) port);
  return 0;
}

int
hv_landlock_restrict (const struct hv_landlock_rules *r, bool log_new_exec, hv_error **err)
{
  static const oci_strv none = { 0 };
  int abi = hv_landlock_abi ();
  if (abi < 1)
    return hv_error_set (err, 0, "landlock: this kernel does not provide Landlock");
  /* Asked for and not there: fail, never run with a rule dropped. */
  if (r->tcp_handled && abi < 4)
    return hv_error_set (err, 0, "landlock: network rules need Landlock ABI 4, this kernel has %d", abi);
  if ((r->scope_abstract_unix || r->scope_signal) && abi < 6)
    return hv_error_set (err, 0, "landlock: scopes need Landlock ABI 6, this kernel has %d", abi);
  uint64_t handled = handled_for_abi (abi);
  struct ruleset_attr_v6 rs = { .handled_access_fs = handled };
  size_t size = sizeof (uint64_t); /* ABI 1-3: only the file system */
  if (r->tcp_handled)
    {
      rs.handled_access_net = LANDLOCK_ACCESS_NET_BIND_TCP | LANDLOCK_ACCESS_NET_CONNECT_TCP;
      size = 2 * sizeof (uint64_t);
    }
  if (r->scope_abstract_unix || r->scope_signal)
    {
      rs.scoped = (r->scope_abstract_unix ? LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET : 0)
                  | (r->scope_signal ? LANDLOCK_SCOPE_SIGNAL : 0);
      size = sizeof (rs);
    }
  cleanup_close int ruleset = (int) syscall (SYS_landlock_create_ruleset, &rs, size, 0);
  if (ruleset < 0)
    return hv_error_set (err, errno, "landlock: create ruleset");
  if (add_paths (ruleset, r->list ? r->list : &none, LANDLOCK_ACCESS_FS_READ_DIR, handled, err) < 0
      || add_paths (ruleset, r->read ? r->read : &none, READ_RIGHTS, handled, err) < 0
      || add_paths (ruleset, r->write ? r->write : &none, READ_RIGHTS | WRITE_RIGHTS, handled, err) < 0
      || add_paths (ruleset, r->exec ? r->exec : &none, LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_READ_FILE,
                    handled, err)
             < 0)
    return -1;
  for (size_t i = 0; r->tcp_handled && i < r->n_tcp_connect_ports; i++)
    if (add_port (ruleset, r->tcp_connect_ports[i], err) < 0)
      return -1;
  /* By default Landlock logs only the refusals of the program that made
   * the domain, not of what it executes (the command): ask for those too
   * when a trail reads them (ABI 7; they still reach the audit log only
   * when the kernel's audit is on, which haven never turns on). */
  uint32_t flags = log_new_exec && abi >= 7 ? LANDLOCK_RESTRICT_SELF_LOG_NEW_EXEC_ON : 0;
  if (syscall (SYS_landlock_restrict_self, ruleset, flags) < 0)
    return hv_error_set (err, errno, "landlock: restrict self");
  return 0;
}

int
hv_landlock_apply (const char *rules_json, bool log_new_exec, hv_error **err)
{
  json_walk w;
  yajl_val root = NULL;
  oci_strv read = { 0 }, write = { 0 }, exec = { 0 };
  bool best_effort = false;
  int r = -1;
  jw_init (&w, "annotation " HV_LANDLOCK_ANNOTATION, err);
  if (jw_parse (&w, rules_json, &root) < 0)
    return -1;
  if (jw_expect_object (&w, root) < 0 || jw_field_strv (&w, root, "read", &read) < 0
      || jw_field_strv (&w, root, "write", &write) < 0 || jw_field_strv (&w, root, "exec", &exec) < 0
      || jw_field_bool (&w, root, "bestEffort", &best_effort) < 0)
    goto out;
  if (hv_landlock_abi () < 1)
    {
      /* Refuse to run weaker than asked, unless the policy allows it. */
      if (best_effort)
        r = 0;
      else
        hv_error_set (err, 0, "the policy needs Landlock, which this kernel does not provide "
                              "(list \"landlock\" under best_effort to run without it)");
      goto out;
    }
  struct hv_landlock_rules rules = { .read = &read, .write = &write, .exec = &exec };
  r = hv_landlock_restrict (&rules, log_new_exec, err);
out:
  yajl_tree_free (root);
  oci_strv_free (&read);
  oci_strv_free (&write);
  oci_strv_free (&exec);
  return r;
}
