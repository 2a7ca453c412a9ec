/* haven install|uninstall docker|podman: register haven-runc as a runtime
 * of a container engine.
 *
 * Docker: the "runtimes" map of daemon.json gets one entry (the file's
 * other keys and runtimes are kept, in order); reload dockerd (SIGHUP) to
 * use it.  Podman: a containers.conf drop-in names the runtime and lists it
 * in runtime_supports_json, so that Podman passes --log-format=json and
 * shows the runtime's own error messages.  Both writes are atomic and
 * idempotent (an unchanged file is not rewritten). */
#ifndef HAVEN_ENGINE_INSTALL_H
#define HAVEN_ENGINE_INSTALL_H

#include <stdbool.h>

#include "error.h"
#include "gateway_route.h"

#define HV_DOCKER_DAEMON_JSON "/etc/docker/daemon.json"
#define HV_PODMAN_DROP_IN_DIR "/etc/containers/containers.conf.d"
/* Runtime "haven"'s drop-in; another --name gets DIR/NAME.conf, so that
 * several registrations live side by side. */
#define HV_PODMAN_DROP_IN HV_PODMAN_DROP_IN_DIR "/haven.conf"

struct hv_install_opts
{
  const char *name;    /* runtime name in the engine, default "haven" */
  const char *runtime; /* absolute path of haven-runc */
  const char *policy;  /* Docker: runtimeArgs --policy NAME (NULL: none) */
  bool policy_lock;    /* Docker: runtimeArgs --policy-lock */
  bool make_default;   /* the engine's default runtime */
  /* Docker: runtimeArgs --api-key PROVIDER=FILE, by hv_gw_provider (NULL:
   * none): the root-only file holding that provider's key
   * (engine_api_key.h). */
  const char *api_keys[HV_GW_N_PROVIDERS];
};

/* daemon.json text after registering (remove: unregistering) the runtime.
 * old_text NULL or blank: there was no file.  path names the file in
 * messages ("PATH: invalid JSON: ...", "PATH: .runtimes: expected an
 * object"). */
int hv_docker_config_edit (const char *old_text, const char *path, const struct hv_install_opts *o, bool remove,
                           char **out, hv_error **err);
/* The Podman drop-in's text. */
char *hv_podman_conf_text (const struct hv_install_opts *o);

/* Write `text` to path atomically (temporary file in the same directory,
 * fsync, rename; an existing file's mode and owner are kept, a symlink's
 * target is replaced).  Returns 1 if written, 0 if path already held text. */
int hv_install_write (const char *path, const char *text, hv_error **err);

/* --policy NAME|FILE loads and can apply to containers (what it cannot
 * give them is said on stderr); errors begin with cmd. */
int hv_install_check_policy (const char *cmd, const char *name, const char *const *key_files, hv_error **err);

/* `haven install docker|podman ...` / `haven uninstall ...` (argv[0] is
 * the verb; install_cmd.h picks the engine). */
int hv_cmd_install_engine (int argc, char **argv, bool uninstall, hv_error **err);
#endif
