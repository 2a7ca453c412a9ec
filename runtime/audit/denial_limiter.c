/* Repeats summarised, novelty recorded (denial_limiter.h). */
#include "config.h"
#include "denial_limiter.h"

#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "utils.h"

/* Twice the keys: a probe sequence stays short. */
#define SLOTS (2 * HV_DENIAL_KEYS_MAX)

struct hv_denial_seen
{
  uint64_t hash;
  char *key; /* NUL-terminated copy (the summary names it) */
  size_t len;
  uint64_t count; /* repeats since the last summary */
};

void
hv_denial_limiter_init (hv_denial_limiter *l, unsigned per_second)
{
  memset (l, 0, sizeof (*l));
  if (per_second < 1)
    per_second = 1;
  if (per_second > HV_DENIAL_RATE_MAX)
    per_second = HV_DENIAL_RATE_MAX;
  l->per_second = per_second;
  /* Seeded, so a sandbox cannot choose keys that share one probe
   * sequence (keys are compared whole: that would only cost time). */
  if (getrandom (&l->seed, sizeof (l->seed), GRND_NONBLOCK) != sizeof (l->seed))
    l->seed = (uint64_t) (uintptr_t) l ^ 0x9e3779b97f4a7c15ULL;
  l->seen = xmalloc0 (HV_DENIAL_KEYS_MAX * sizeof (*l->seen));
  l->slots = xmalloc0 (SLOTS * sizeof (*l->slots));
  l->dirty = xmalloc0 (HV_DENIAL_KEYS_MAX * sizeof (*l->dirty));
}

void
hv_denial_limiter_release (hv_denial_limiter *l)
{
  if (l->seen)
    for (size_t i = 0; i < l->n_seen; i++)
      free (l->seen[i].key);
  free (l->seen);
  free (l->slots);
  free (l->dirty);
  l->seen = NULL;
  l->slots = NULL;
  l->dirty = NULL;
  l->n_seen = 0;
}

/* FNV-1a from a seeded start. */
static uint64_t
key_hash (uint64_t seed, const void *key, size_t len)
{
  const uint8_t *p = key;
  uint64_t h = 0xcbf29ce484222325ULL ^ seed;
  for (size_t i = 0; i < len; i++)
    h = (h ^ p[i]) * 0x100000001b3ULL;
  return h ^ (h >> 29);
}

/* The slot of key: its entry's (value != 0), or the empty one where it
 * would go. */
static uint32_t *
find_slot (hv_denial_limiter *l, uint64_t h, const void *key, size_t len)
{
  for (size_t i = 0; i < SLOTS; i++)
    {
      uint32_t *s = &l->slots[(h + i) % SLOTS];
      if (*s == 0)
        return s;
      const struct hv_denial_seen *e = &l->seen[*s - 1];
      if (e->hash == h && e->len == len && memcmp (e->key, key, len) == 0)
        return s;
    }
  return NULL; /* not reached: at most half the slots are used */
}

static void
left_out (hv_denial_limiter *l, uint64_t now_ms)
{
  if (l->due == 0)
    l->due = now_ms + HV_DENIAL_WINDOW_MS;
}

bool
hv_denial_limiter_admit (hv_denial_limiter *l, const void *key, size_t keylen, uint64_t now_ms)
{
  uint64_t h = key_hash (l->seed, key, keylen);
  uint32_t *slot = keylen <= HV_DENIAL_KEY_LEN_MAX ? find_slot (l, h, key, keylen) : NULL;
  if (slot && *slot)
    {
      /* A repeat: counted, named in the summary. */
      struct hv_denial_seen *e = &l->seen[*slot - 1];
      if (e->count++ == 0)
        l->dirty[l->n_dirty++] = *slot - 1;
      l->repeats++;
      left_out (l, now_ms);
      return false;
    }
  if (slot && l->n_seen < HV_DENIAL_KEYS_MAX && l->key_bytes + keylen + 1 <= HV_DENIAL_KEY_BYTES_MAX)
    {
      /* New, and remembered: recorded. */
      struct hv_denial_seen *e = &l->seen[l->n_seen++];
      e->hash = h;
      e->len = keylen;
      e->key = xmalloc0 (keylen + 1);
      memcpy (e->key, key, keylen);
      e->count = 0;
      l->key_bytes += keylen + 1;
      *slot = (uint32_t) l->n_seen;
      return true;
    }
  /* New, but the set is full (or the key too long to keep): recorded at
   * per_second, counted past that.  A clock that went back stays in the
   * window it is in. */
  if (slot)
    l->full = true;
  if (!l->open || (now_ms >= l->window_start && now_ms - l->window_start >= HV_DENIAL_WINDOW_MS))
    {
      l->open = true;
      l->window_start = now_ms;
      l->admitted_unremembered = 0;
    }
  if (l->admitted_unremembered < l->per_second)
    {
      l->admitted_unremembered++;
      return true;
    }
  l->unrecorded_new++;
  left_out (l, now_ms);
  return false;
}

static int
by_count_desc (const void *a, const void *b, void *arg)
{
  const struct hv_denial_seen *seen = arg;
  uint64_t x = seen[*(const uint32_t *) a].count, y = seen[*(const uint32_t *) b].count;
  return x > y ? -1 : x < y;
}

bool
hv_denial_limiter_tick (hv_denial_limiter *l, uint64_t now_ms, hv_denial_summary *s)
{
  memset (s, 0, sizeof (*s));
  if (l->due == 0 || (now_ms != UINT64_MAX && now_ms < l->due))
    return false;
  s->repeats = l->repeats;
  s->unrecorded_new = l->unrecorded_new;
  s->count = l->repeats + l->unrecorded_new;
  s->full = l->full;
  s->per_second = l->per_second;
  qsort_r (l->dirty, l->n_dirty, sizeof (*l->dirty), by_count_desc, l->seen);
  for (size_t i = 0; i < l->n_dirty; i++)
    {
      struct hv_denial_seen *e = &l->seen[l->dirty[i]];
      if (s->n_named < HV_DENIAL_SUMMARY_KEYS)
        {
          s->named[s->n_named].key = e->key;
          s->named[s->n_named].count = e->count;
          s->n_named++;
        }
      else
        s->repeats_unnamed += e->count;
      e->count = 0;
    }
  l->n_dirty = 0;
  l->repeats = 0;
  l->unrecorded_new = 0;
  l->due = 0;
  return true;
}

uint64_t
hv_denial_limiter_deadline (const hv_denial_limiter *l)
{
  return l->due;
}

size_t
hv_denial_limiter_remembered (const hv_denial_limiter *l)
{
  return l->n_seen;
}

void
hv_denial_summary_add (hv_denial_summary *to, const hv_denial_summary *s)
{
  to->count += s->count;
  to->repeats += s->repeats;
  to->unrecorded_new += s->unrecorded_new;
  for (size_t i = 0; i < s->n_named && i < HV_DENIAL_SUMMARY_KEYS; i++)
    to->repeats_unnamed += s->named[i].count;
  to->repeats_unnamed += s->repeats_unnamed;
  to->full |= s->full;
  if (s->per_second)
    to->per_second = s->per_second;
  to->overruns += s->overruns;
  to->kernel_lost += s->kernel_lost;
}
