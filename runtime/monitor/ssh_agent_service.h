/* The restricted ssh-agent view served by the per-container monitor
 * (runtime/guard/include/ssh_agent_view.h is the protocol): the sandbox
 * connects to a socket bound in a directory of the caller's, and each of
 * its requests the view passes on goes to the host's agent over a
 * connection the monitor makes, outside the sandbox.
 *
 * annotations["run.haven.ssh-agent-view"] (oci/haven_annotations.h):
 *   {"dir": "/ABS/HOST/DIR", "keys": ["SHA256:...", ...]}
 * dir: a directory of the caller's, 0700, reached from / through no
 *   symbolic link; create binds HV_SSH_AGENT_VIEW_SOCKET_NAME in it (haven
 *   run's config binds the directory into the sandbox read-only, at
 *   /run/haven/ssh-agent).
 * keys: 1 to HV_SSH_AGENT_VIEW_MAX_KEYS fingerprints as ssh-keygen -l
 *   prints them, none twice: the only keys the view lists and signs with.
 * Anything else: create fails naming the annotation and the JSON path.
 *
 * The real agent is the one at $SSH_AUTH_SOCK of create's environment
 * (haven run's own: create runs in haven's process), which must name a
 * socket when create runs, else create fails.  It is not in the
 * annotation: a config's author must not be able to point the monitor, and
 * through it the sandbox's bytes, at any socket the runtime can reach.
 *
 * Each sign request is one "ssh-sign" record in the monitor's trail:
 * {"event":"ssh-sign","key":"SHA256:...","allowed":true|false}, never the
 * data signed.  Past the trail's cap they are counted, and the count is
 * one "ssh-sign-suppressed" record when the view stops. */
#ifndef HAVEN_SSH_AGENT_SERVICE_H
#define HAVEN_SSH_AGENT_SERVICE_H

#include <stdatomic.h>
#include <stddef.h>

#include "audit_trail.h"
#include "error.h"
#include "oci_spec.h"
#include "ssh_agent_view.h"

/* Connections served at once: ssh, git and ssh-add each hold one for a
 * moment; more is a sandbox trying to exhaust the monitor's threads. */
#define HV_SSH_AGENT_SERVICE_MAX_CONNS 16

struct hv_monitor_service;

typedef struct hv_ssh_agent_service
{
  int listen_fd;
  char *upstream; /* $SSH_AUTH_SOCK at create */
  hv_ssh_fingerprint *keys;
  size_t n_keys;
  hv_ssh_agent_view view;
  struct hv_audit_trail *trail; /* the monitor's, or NULL: no records */
  atomic_ulong suppressed;      /* sign records left out past the trail's cap */
  struct hv_monitor_service *service;
} hv_ssh_agent_service;

/* At create, before the monitor is forked: read the annotation (NULL *out
 * without it), find the real agent and listen on the socket in the
 * annotation's directory. */
int hv_ssh_agent_service_prepare (const oci_spec *spec, hv_ssh_agent_service **out, hv_error **err);
/* The listening socket (the monitor keeps it across its fd clean-up and
 * sets it back). */
int hv_ssh_agent_service_fd (const hv_ssh_agent_service *s);
void hv_ssh_agent_service_set_fd (hv_ssh_agent_service *s, int fd);
/* In the monitor: serve the socket, recording into trail (NULL: none;
 * it must outlive hv_ssh_agent_service_stop). */
int hv_ssh_agent_service_start (hv_ssh_agent_service *s, struct hv_audit_trail *trail, hv_error **err);
/* Stop serving: the socket is closed, the sandbox's connects fail from
 * then on; the suppressed count is recorded.  NULL is fine. */
void hv_ssh_agent_service_stop (hv_ssh_agent_service *s);
/* Stop and free; NULL is fine. */
void hv_ssh_agent_service_free (hv_ssh_agent_service *s);

static inline void
hv_ssh_agent_service_freep (hv_ssh_agent_service **s)
{
  hv_ssh_agent_service_free (*s);
}
#define cleanup_ssh_agent_service __attribute__ ((cleanup (hv_ssh_agent_service_freep)))

/* One accepted connection, served to its end (the service's handler;
 * public for the tests). */
void hv_ssh_agent_service_serve (int conn, void *data);
#endif
