/* The git credential broker: the monitor answers the sandbox's git
 * credential requests over a Unix socket, so that no token is ever in a
 * file or variable inside the sandbox.
 *
 * annotations["run.haven.git-credentials"] (oci/haven_annotations.h):
 *   {"dir": "/ABS/HOST/DIR",
 *    "hosts": [{"host": "github.com", "path": "org/repo", "from": "token"}, ...]}
 * dir: a directory of the caller's, 0700, reached from / through no
 *   symbolic link; create binds HV_GIT_BROKER_SOCKET in it (the config
 *   binds the directory into the sandbox, haven run at /run/haven/git).
 * host: a lower-case host name (letters, digits, '.', '-'), answered on
 *   https's port 443 only; at most one entry per host.
 * path: optional repository path prefix, whole '/'-separated segments
 *   (git sends the path only with credential.useHttpPath).
 * from: "token": the secret create was given in memory
 *   (hv_create_opts.service_secrets, service "git:HOST"), else create
 *   fails; "host": the host's own `git credential fill`, run by the
 *   monitor outside the sandbox.
 * Anything else: create fails naming the annotation and the JSON path.
 *
 * The sandbox's git talks to the socket with git's own cache client
 * (`git credential-cache --socket ...`, hv_git_credential_parse_cache):
 * only "get" is answered, and only for https and a listed host (and
 * path); store, erase and exit are ignored.  Each get answered or
 * refused is one "git-credential" record in the monitor's trail (host,
 * path, decision, reason; never the token). */
#ifndef HAVEN_GIT_BROKER_H
#define HAVEN_GIT_BROKER_H

#include <stdbool.h>
#include <stddef.h>

#include "audit_trail.h"
#include "error.h"
#include "git_credential.h"
#include "haven_annotations.h"
#include "oci_spec.h"

#define HV_GIT_BROKER_SOCKET HV_GIT_CREDENTIALS_SOCKET_NAME

struct hv_service_secret;
struct hv_monitor_service;

/* One listed host: what decides (match) and what answers. */
struct hv_git_broker_host
{
  bool from_host; /* the host's git credential fill; else username and secret */
  char *username;
  char *secret;
};

typedef struct hv_git_broker
{
  int listen_fd;
  size_t n_hosts;
  hv_git_credential_host *match; /* for hv_git_credential_decide (its strings owned here) */
  struct hv_git_broker_host *hosts;
  struct hv_audit_trail *trail;  /* the monitor's, or NULL: no records */
  const char *git;               /* the host's git for fill (NULL: git on PATH) */
  int read_timeout_ms;           /* for the request */
  int fill_timeout_ms;           /* for the host's git credential fill */
  struct hv_monitor_service *service;
} hv_git_broker;

/* At create, before the monitor is forked: read the annotation (NULL
 * *out without it), take the git secrets it needs from secrets (copied),
 * and listen on the socket in its directory. */
int hv_git_broker_prepare (const oci_spec *spec, const struct hv_service_secret *secrets, size_t n_secrets,
                           hv_git_broker **out, hv_error **err);
/* The listening socket (the monitor keeps it across its fd clean-up and
 * sets it back with hv_git_broker_set_fd). */
int hv_git_broker_fd (const hv_git_broker *b);
void hv_git_broker_set_fd (hv_git_broker *b, int fd);
/* In the monitor: serve the socket, recording into trail (which must
 * outlive hv_git_broker_stop). */
int hv_git_broker_start (hv_git_broker *b, struct hv_audit_trail *trail, hv_error **err);
/* Stop serving (the socket is closed: git's requests fail from then on). */
void hv_git_broker_stop (hv_git_broker *b);
/* Wipe the secrets and free; NULL is fine. */
void hv_git_broker_free (hv_git_broker *b);

static inline void
hv_git_broker_freep (hv_git_broker **b)
{
  hv_git_broker_free (*b);
}
#define cleanup_git_broker __attribute__ ((cleanup (hv_git_broker_freep)))

/* One request on an accepted connection: read, decide, answer, record.
 * (The service's handler; its own for the tests.) */
void hv_git_broker_serve (int conn, void *data);
#endif
