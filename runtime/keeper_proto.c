/* The keeper's messages (keeper_proto.h): encode and strict decode. */
#include "config.h"

#include <limits.h>
#include <string.h>

#include "keeper_proto.h"
#include "utils.h"

/* Signal numbers the kernel knows (1 .. SIGRTMAX). */
#define KEEPER_MAX_SIGNAL 64

static uint32_t
get_u32 (const unsigned char *p)
{
  uint32_t v;
  memcpy (&v, p, sizeof (v));
  return v;
}

static void
put_u32 (unsigned char *p, uint32_t v)
{
  memcpy (p, &v, sizeof (v));
}

/* An environment entry: NAME=VALUE with a non-empty name. */
static bool
env_entry_ok (const char *s)
{
  const char *eq = strchr (s, '=');
  return eq != NULL && eq != s;
}

static bool
cwd_ok (const char *s)
{
  return s[0] == '/' && strlen (s) < PATH_MAX;
}

static size_t
strv_len (char *const *v)
{
  size_t n = 0;
  while (v && v[n])
    n++;
  return n;
}

int
hv_keeper_encode_spawn (const struct hv_keeper_spawn *req, char **buf, size_t *len, hv_error **err)
{
  size_t argc = strv_len (req->argv), envc = strv_len (req->envp);
  if (argc == 0 || req->argv[0][0] == '\0')
    return hv_error_set (err, 0, "keeper: spawn without a command");
  if (req->cwd && !cwd_ok (req->cwd))
    return hv_error_set (err, 0, "keeper: cwd \"%s\" is not an absolute path", req->cwd);
  for (int i = 0; i < 3; i++)
    if (req->stdio[i] < 0)
      return hv_error_set (err, 0, "keeper: spawn without stdio fd %d", i);
  size_t total = req->cwd ? strlen (req->cwd) + 1 : 0;
  for (size_t i = 0; i < argc; i++)
    total += strlen (req->argv[i]) + 1;
  for (size_t i = 0; i < envc; i++)
    {
      if (!env_entry_ok (req->envp[i]))
        return hv_error_set (err, 0, "keeper: environment entry \"%s\" is not NAME=VALUE", req->envp[i]);
      total += strlen (req->envp[i]) + 1;
    }
  /* Checked as the sum grows would not matter: each strlen is bounded by
   * memory, and the sum of sizes of objects in memory cannot wrap. */
  if (total > HV_KEEPER_MAX_REQUEST)
    return hv_error_set (err, 0, "keeper: command, environment and cwd take %zu bytes, more than %d", total,
                         HV_KEEPER_MAX_REQUEST);
  unsigned char *out = xmalloc0 (HV_KEEPER_SPAWN_HEADER + total);
  put_u32 (out, HV_KEEPER_REQ_SPAWN);
  put_u32 (out + 4, req->run_id);
  put_u32 (out + 8, (uint32_t) argc);
  put_u32 (out + 12, (uint32_t) envc);
  put_u32 (out + 16, req->cwd != NULL);
  unsigned char *p = out + HV_KEEPER_SPAWN_HEADER;
  for (size_t i = 0; i < argc + envc; i++)
    {
      const char *s = i < argc ? req->argv[i] : req->envp[i - argc];
      size_t l = strlen (s) + 1;
      memcpy (p, s, l);
      p += l;
    }
  if (req->cwd)
    memcpy (p, req->cwd, strlen (req->cwd) + 1);
  *buf = (char *) out;
  *len = HV_KEEPER_SPAWN_HEADER + total;
  return 0;
}

int
hv_keeper_encode_signal (uint32_t run_id, int sig, unsigned char out[HV_KEEPER_SIGNAL_SIZE], hv_error **err)
{
  if (sig < 1 || sig > KEEPER_MAX_SIGNAL)
    return hv_error_set (err, 0, "keeper: signal %d out of range", sig);
  put_u32 (out, HV_KEEPER_REQ_SIGNAL);
  put_u32 (out + 4, run_id);
  put_u32 (out + 8, (uint32_t) sig);
  return 0;
}

/* The n strings of a spawn request's body, each NUL-terminated, ending
 * exactly at the body's end. */
static int
split_strings (char *body, size_t size, char **out, size_t n, hv_error **err)
{
  size_t off = 0;
  for (size_t i = 0; i < n; i++)
    {
      char *nul = off < size ? memchr (body + off, '\0', size - off) : NULL;
      if (nul == NULL)
        return hv_error_set (err, 0, "keeper request: string %zu of %zu is cut", i + 1, n);
      out[i] = body + off;
      off = (size_t) (nul - body) + 1;
    }
  if (off != size)
    return hv_error_set (err, 0, "keeper request: %zu bytes after the last string", size - off);
  return 0;
}

static int
decode_spawn (char *buf, size_t len, size_t nfds, struct hv_keeper_request *req, hv_error **err)
{
  if (len < HV_KEEPER_SPAWN_HEADER)
    return hv_error_set (err, 0, "keeper request: spawn of %zu bytes", len);
  if (len > HV_KEEPER_MAX_MESSAGE)
    return hv_error_set (err, 0, "keeper request: spawn of %zu bytes, more than %d", len, HV_KEEPER_MAX_MESSAGE);
  if (nfds != 3)
    return hv_error_set (err, 0, "keeper request: spawn with %zu fds", nfds);
  const unsigned char *h = (const unsigned char *) buf;
  uint32_t argc = get_u32 (h + 8), envc = get_u32 (h + 12), has_cwd = get_u32 (h + 16);
  size_t size = len - HV_KEEPER_SPAWN_HEADER;
  /* Every string takes at least its NUL: counts beyond the body's size
   * are refused before anything is allocated for them. */
  if (argc == 0 || has_cwd > 1 || argc > size || envc > size || (size_t) argc + envc + has_cwd > size)
    return hv_error_set (err, 0, "keeper request: counts %u, %u, %u for %zu bytes", argc, envc, has_cwd, size);
  size_t n = (size_t) argc + envc + has_cwd;
  cleanup_free char **strings = xmalloc0 (n * sizeof (char *));
  if (split_strings (buf + HV_KEEPER_SPAWN_HEADER, size, strings, n, err) < 0)
    return -1;
  if (strings[0][0] == '\0')
    return hv_error_set (err, 0, "keeper request: empty command");
  for (size_t i = argc; i < (size_t) argc + envc; i++)
    if (!env_entry_ok (strings[i]))
      return hv_error_set (err, 0, "keeper request: environment entry %zu is not NAME=VALUE", i - argc);
  if (has_cwd && !cwd_ok (strings[n - 1]))
    return hv_error_set (err, 0, "keeper request: cwd is not an absolute path");
  req->argv = xmalloc0 (((size_t) argc + 1) * sizeof (char *));
  req->envp = xmalloc0 (((size_t) envc + 1) * sizeof (char *));
  memcpy (req->argv, strings, argc * sizeof (char *));
  memcpy (req->envp, strings + argc, envc * sizeof (char *));
  req->cwd = has_cwd ? strings[n - 1] : NULL;
  return 0;
}

int
hv_keeper_decode_request (char *buf, size_t len, size_t nfds, struct hv_keeper_request *req, hv_error **err)
{
  memset (req, 0, sizeof (*req));
  if (len < 8)
    return hv_error_set (err, 0, "keeper request: %zu bytes", len);
  const unsigned char *h = (const unsigned char *) buf;
  uint32_t type = get_u32 (h);
  req->run_id = get_u32 (h + 4);
  if (type == HV_KEEPER_REQ_SPAWN)
    {
      req->type = HV_KEEPER_REQ_SPAWN;
      return decode_spawn (buf, len, nfds, req, err);
    }
  if (type != HV_KEEPER_REQ_SIGNAL)
    return hv_error_set (err, 0, "keeper request: unknown type %u", type);
  req->type = HV_KEEPER_REQ_SIGNAL;
  if (len != HV_KEEPER_SIGNAL_SIZE || nfds != 0)
    return hv_error_set (err, 0, "keeper request: signal of %zu bytes with %zu fds", len, nfds);
  int32_t sig;
  memcpy (&sig, h + 8, sizeof (sig));
  if (sig < 1 || sig > KEEPER_MAX_SIGNAL)
    return hv_error_set (err, 0, "keeper request: signal %d out of range", sig);
  req->sig = sig;
  return 0;
}

void
hv_keeper_request_clear (struct hv_keeper_request *req)
{
  free (req->argv);
  free (req->envp);
  req->argv = req->envp = NULL;
}

void
hv_keeper_encode_event (const struct hv_keeper_event *ev, unsigned char out[HV_KEEPER_EVENT_SIZE])
{
  put_u32 (out, (uint32_t) ev->kind);
  put_u32 (out + 4, ev->run_id);
  put_u32 (out + 8, (uint32_t) (ev->kind == HV_KEEPER_STARTED ? ev->pid : ev->status));
}

int
hv_keeper_decode_event (const void *buf, size_t len, struct hv_keeper_event *ev, hv_error **err)
{
  memset (ev, 0, sizeof (*ev));
  if (len != HV_KEEPER_EVENT_SIZE)
    return hv_error_set (err, 0, "keeper event of %zu bytes", len);
  const unsigned char *p = buf;
  uint32_t kind = get_u32 (p);
  int32_t value;
  memcpy (&value, p + 8, sizeof (value));
  if (kind == HV_KEEPER_STARTED && value > 0)
    ev->pid = value;
  else if (kind == HV_KEEPER_EXITED && value >= 0 && value <= 255)
    ev->status = value;
  else
    return hv_error_set (err, 0, "keeper event: kind %u with value %d", kind, value);
  ev->kind = (enum hv_keeper_event_kind) kind;
  ev->run_id = get_u32 (p + 4);
  return 0;
}
