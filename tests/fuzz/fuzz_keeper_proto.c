/* Fuzz target of the keeper's messages (runtime/keeper_proto.c): the
 * requests the keeper decodes (from its caller) and the events the
 * caller decodes (from the keeper, inside the sandbox: hostile).
 *
 * The first byte picks the decoder: even, a request with (byte / 2) % 5
 * fds beside it; odd, an event.  The rest is one message, in a buffer of
 * exactly its size.  A decoder fails exactly when it sets an error, and
 * leaves nothing allocated then; what it takes encodes again to the same
 * bytes (every byte of a message is accounted for), within the size
 * limit, a spawn with exactly three fds, a non-empty command, NAME=VALUE
 * entries and an absolute cwd; a signal in 1..64 without fds; an event
 * with a pid above 0 or a status in 0..255.  Built with libFuzzer by
 * build.sh, and with gcc by make check as a replay of the committed
 * corpus (fuzz_corpus_driver.c). */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_util.h"
#include "keeper_proto.h"

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

static void
check_request (char *msg, size_t len, size_t nfds)
{
  struct hv_keeper_request req;
  hv_error *err = NULL;
  int r = hv_keeper_decode_request (msg, len, nfds, &req, &err);
  if ((r < 0) != (err != NULL))
    fuzz_fail ("request: result %d and error %p disagree", r, (void *) err);
  if (r < 0)
    {
      if (req.argv || req.envp)
        fuzz_fail ("request refused with arrays left");
      hv_error_free (&err);
      return;
    }
  if (req.type == HV_KEEPER_REQ_SIGNAL)
    {
      unsigned char again[HV_KEEPER_SIGNAL_SIZE];
      if (nfds != 0 || req.sig < 1 || req.sig > 64)
        fuzz_fail ("signal %d with %zu fds taken", req.sig, nfds);
      if (hv_keeper_encode_signal (req.run_id, req.sig, again, &err) < 0)
        fuzz_fail ("signal taken but not encoded: %s", err->msg);
      if (len != sizeof (again) || memcmp (again, msg, len) != 0)
        fuzz_fail ("signal encodes to other bytes");
      return;
    }
  if (req.type != HV_KEEPER_REQ_SPAWN || nfds != 3 || len > HV_KEEPER_MAX_MESSAGE)
    fuzz_fail ("spawn of %zu bytes with %zu fds taken", len, nfds);
  if (req.argv[0] == NULL || req.argv[0][0] == '\0')
    fuzz_fail ("spawn without a command taken");
  for (char **e = req.envp; *e; e++)
    if (strchr (*e, '=') == NULL || (*e)[0] == '=')
      fuzz_fail ("environment entry \"%s\" taken", *e);
  if (req.cwd && req.cwd[0] != '/')
    fuzz_fail ("relative cwd \"%s\" taken", req.cwd);
  struct hv_keeper_spawn s = { .run_id = req.run_id, .argv = req.argv, .envp = req.envp, .cwd = req.cwd,
                               .stdio = { 0, 1, 2 } };
  char *again = NULL;
  size_t again_len = 0;
  if (hv_keeper_encode_spawn (&s, &again, &again_len, &err) < 0)
    fuzz_fail ("spawn taken but not encoded: %s", err->msg);
  if (again_len != len || memcmp (again, msg, len) != 0)
    fuzz_fail ("spawn encodes to other bytes (%zu, not %zu)", again_len, len);
  free (again);
  hv_keeper_request_clear (&req);
}

static void
check_event (const uint8_t *msg, size_t len)
{
  struct hv_keeper_event ev;
  hv_error *err = NULL;
  int r = hv_keeper_decode_event (msg, len, &ev, &err);
  if ((r < 0) != (err != NULL))
    fuzz_fail ("event: result %d and error %p disagree", r, (void *) err);
  if (r < 0)
    {
      hv_error_free (&err);
      return;
    }
  if (!(ev.kind == HV_KEEPER_STARTED && ev.pid > 0) && !(ev.kind == HV_KEEPER_EXITED && ev.status >= 0 && ev.status <= 255))
    fuzz_fail ("event kind %d pid %d status %d taken", ev.kind, ev.pid, ev.status);
  unsigned char again[HV_KEEPER_EVENT_SIZE];
  hv_keeper_encode_event (&ev, again);
  if (len != sizeof (again) || memcmp (again, msg, len) != 0)
    fuzz_fail ("event encodes to other bytes");
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  if (size < 1)
    return 0;
  uint8_t pick = data[0];
  size_t len = size - 1;
  /* A buffer of exactly the message's size: a read past it is seen. */
  uint8_t *msg = malloc (len ? len : 1);
  memcpy (msg, data + 1, len);
  if (pick & 1)
    check_event (msg, len);
  else
    check_request ((char *) msg, len, (size_t) (pick / 2) % 5);
  free (msg);
  return 0;
}
