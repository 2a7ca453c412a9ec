/* A request body's checks before yajl's tree reads it (see
 * service_api_internal.h): a pass of yajl's event parser, which hands
 * strings over with their length, keeping the JSON path to name where a
 * U+0000 is. */
#include "config.h"

#include <stdio.h>
#include <string.h>
#include <yajl/yajl_parse.h>

#include "json_walk.h"
#include "service_api.h"
#include "service_api_internal.h"

struct frame
{
  bool is_map;
  size_t index; /* an array's members seen so far */
  char key[128]; /* a map's current member name (cut: only shown) */
};

struct scan
{
  struct frame stack[HV_API_JSON_DEPTH_MAX + 1];
  size_t depth;
  /* Where the first U+0000 is (path, and whether in a member name). */
  char where[HV_API_JSON_DEPTH_MAX * 140 + 1];
  bool in_name;
};

static void
path_of (struct scan *sc, const char *name, size_t name_len)
{
  size_t n = 0, room = sizeof (sc->where);
  /* A member name's path ends in that name, not in the one before it. */
  size_t upto = name ? sc->depth - 1 : sc->depth;
  sc->where[0] = '\0';
  for (size_t i = 0; i < upto && n < room; i++)
    {
      const struct frame *f = &sc->stack[i];
      int w = f->is_map ? snprintf (sc->where + n, room - n, ".%s", f->key)
                        : snprintf (sc->where + n, room - n, "[%zu]", f->index - 1);
      n += w > 0 ? (size_t) w : 0;
    }
  if (name && n < room)
    snprintf (sc->where + n, room - n, ".%.*s", (int) (name_len < 127 ? name_len : 127), name);
  if (sc->where[0] == '\0')
    snprintf (sc->where, room, ".");
}

/* A value starts in the innermost container: an array counts it. */
static void
value_seen (struct scan *sc)
{
  if (sc->depth > 0 && !sc->stack[sc->depth - 1].is_map)
    sc->stack[sc->depth - 1].index++;
}

static int
on_scalar (void *ctx)
{
  value_seen (ctx);
  return 1;
}
static int
on_bool (void *ctx, int b)
{
  (void) b;
  return on_scalar (ctx);
}
static int
on_number (void *ctx, const char *s, size_t len)
{
  (void) s;
  (void) len;
  return on_scalar (ctx);
}

static int
on_string (void *ctx, const unsigned char *s, size_t len)
{
  struct scan *sc = ctx;
  value_seen (sc);
  if (memchr (s, '\0', len))
    {
      path_of (sc, NULL, 0);
      return 0; /* stop: yajl_status_client_canceled */
    }
  return 1;
}

static int
on_key (void *ctx, const unsigned char *s, size_t len)
{
  struct scan *sc = ctx;
  if (memchr (s, '\0', len))
    {
      /* The name as far as its NUL: what the tree would have read. */
      path_of (sc, (const char *) s, strnlen ((const char *) s, len));
      sc->in_name = true;
      return 0;
    }
  struct frame *f = &sc->stack[sc->depth - 1];
  size_t n = len < sizeof (f->key) - 1 ? len : sizeof (f->key) - 1;
  memcpy (f->key, s, n);
  f->key[n] = '\0';
  return 1;
}

static int
open_container (struct scan *sc, bool is_map)
{
  value_seen (sc);
  /* hv_api_body_scan counted the depth first: this cannot overflow. */
  if (sc->depth >= sizeof (sc->stack) / sizeof (sc->stack[0]))
    return 0;
  struct frame *f = &sc->stack[sc->depth++];
  f->is_map = is_map;
  f->index = 0;
  f->key[0] = '\0';
  return 1;
}
static int
on_start_map (void *ctx)
{
  return open_container (ctx, true);
}
static int
on_start_array (void *ctx)
{
  return open_container (ctx, false);
}
static int
on_end (void *ctx)
{
  struct scan *sc = ctx;
  sc->depth--;
  return 1;
}

static const yajl_callbacks callbacks = {
  .yajl_null = on_scalar,
  .yajl_boolean = on_bool,
  .yajl_number = on_number,
  .yajl_string = on_string,
  .yajl_start_map = on_start_map,
  .yajl_map_key = on_key,
  .yajl_end_map = on_end,
  .yajl_start_array = on_start_array,
  .yajl_end_array = on_end,
};

int
hv_api_body_scan (const char *body, size_t len, char **text, hv_error **err)
{
  if (len > HV_API_BODY_MAX)
    return hv_error_set (err, 0, "request body: more than %d bytes", HV_API_BODY_MAX);
  if (len == 0)
    return hv_error_set (err, 0, "request body: empty (a JSON object is expected)");
  /* yajl's tree reads NUL-terminated text: a NUL byte would end the body
   * early.  JSON has no place for one. */
  if (memchr (body, '\0', len))
    return hv_error_set (err, 0, "request body: a NUL byte (JSON text has none)");
  cleanup_free char *copy = xmalloc0 (len + 1);
  memcpy (copy, body, len);
  if (jw_too_deep (copy, HV_API_JSON_DEPTH_MAX))
    return hv_error_set (err, 0, "request body: nested deeper than %d levels", HV_API_JSON_DEPTH_MAX);
  cleanup_free struct scan *sc = xmalloc0 (sizeof (*sc));
  yajl_handle h = yajl_alloc (&callbacks, NULL, sc);
  /* As yajl's tree reads it (jw_parse): a body it would refuse is
   * refused there, with its message. */
  yajl_config (h, yajl_allow_comments, 1);
  yajl_status st = yajl_parse (h, (const unsigned char *) copy, len);
  if (st == yajl_status_ok)
    st = yajl_complete_parse (h);
  yajl_free (h);
  if (st == yajl_status_client_canceled && sc->where[0])
    return hv_error_set (err, 0, "request body: %s: %s holds a NUL character (\\u0000)", sc->where,
                         sc->in_name ? "a member name" : "the string");
  *text = steal_pointer (&copy);
  return 0;
}
