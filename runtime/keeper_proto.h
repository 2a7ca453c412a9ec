/* The keeper's wire format (keeper.h), shared by the keeper (init's side)
 * and its caller.  One SOCK_SEQPACKET message per request or event,
 * integers in the host's byte order (both ends are on one machine).
 *
 *   SPAWN   u32 type=1, u32 run_id, u32 argc, u32 envc, u32 has_cwd, then
 *           argc + envc (+ 1 with has_cwd) NUL-terminated strings and
 *           nothing else; exactly three fds (SCM_RIGHTS): stdin, stdout,
 *           stderr.
 *   SIGNAL  u32 type=2, u32 run_id, i32 signal; no fd.
 *   event   u32 kind (keeper.h), u32 run_id, i32 pid (STARTED) or status
 *           (EXITED); no fd.
 *
 * Both directions are decoded strictly: a message is taken only when
 * every byte of it is accounted for. */
#ifndef HAVEN_KEEPER_PROTO_H
#define HAVEN_KEEPER_PROTO_H

#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "keeper.h"

enum hv_keeper_request_type
{
  HV_KEEPER_REQ_SPAWN = 1,
  HV_KEEPER_REQ_SIGNAL = 2,
};

#define HV_KEEPER_SPAWN_HEADER 20
#define HV_KEEPER_SIGNAL_SIZE 12
#define HV_KEEPER_EVENT_SIZE 12
/* The largest message either side ever needs to receive. */
#define HV_KEEPER_MAX_MESSAGE (HV_KEEPER_SPAWN_HEADER + HV_KEEPER_MAX_REQUEST)

/* A request as the keeper reads it: the strings point into the message
 * (which must outlive it), argv and envp are NULL-terminated arrays of
 * their own (hv_keeper_request_clear frees them). */
struct hv_keeper_request
{
  enum hv_keeper_request_type type;
  uint32_t run_id;
  int sig;           /* SIGNAL */
  char **argv;       /* SPAWN */
  char **envp;       /* SPAWN */
  const char *cwd;   /* SPAWN: NULL when the request names none */
};

/* The message of a spawn request (no fds: they travel beside it), in a
 * new buffer; fails on what the keeper would refuse. */
int hv_keeper_encode_spawn (const struct hv_keeper_spawn *req, char **buf, size_t *len, hv_error **err);
/* The message of a signal request; fails on a signal number out of range. */
int hv_keeper_encode_signal (uint32_t run_id, int sig, unsigned char out[HV_KEEPER_SIGNAL_SIZE], hv_error **err);
/* Decode one request of len bytes (req points into buf, which must stay
 * alive while req is used).  nfds: how many fds came with it (a spawn
 * needs exactly 3, a signal none). */
int hv_keeper_decode_request (char *buf, size_t len, size_t nfds, struct hv_keeper_request *req, hv_error **err);
void hv_keeper_request_clear (struct hv_keeper_request *req);

void hv_keeper_encode_event (const struct hv_keeper_event *ev, unsigned char out[HV_KEEPER_EVENT_SIZE]);
/* Decode one event of len bytes: its exact size, a known kind, a pid
 * above 0 for STARTED, a status in 0..255 for EXITED. */
int hv_keeper_decode_event (const void *buf, size_t len, struct hv_keeper_event *ev, hv_error **err);

#endif
