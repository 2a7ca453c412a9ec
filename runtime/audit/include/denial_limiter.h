/* The limiter of denial records (net, dns, Landlock's exec and file
 * refusals): repeats are summarised, novelty never is.
 *
 * A sandbox that can shape its own audit trail hides the one denial that
 * matters behind junk: with a plain "N a second" limit, twenty junk
 * connects in a second pushed the next destination out of the trail
 * ("11 more denials suppressed", no address).  So the limit is on
 * repeats, not on what is new:
 *
 *   - a denial whose key (its destination, name, or access and path, as
 *     text) was never recorded is recorded at once, however many came
 *     before it in the second;
 *   - a repeat of a recorded one is only counted; once a second at most
 *     (when something was left out) a summary gives the count and names
 *     the repeated keys with their counts (the HV_DENIAL_SUMMARY_KEYS
 *     most frequent; the rest as one number).
 *
 * Memory is bounded: at most HV_DENIAL_KEYS_MAX distinct keys of at most
 * HV_DENIAL_KEY_BYTES_MAX bytes in all are remembered per limiter.  Past
 * that a key not remembered is still new (everything seen before it was
 * remembered, until the set filled), but it cannot be remembered: at
 * most per_second of them are recorded a second, and the summary counts
 * the rest as "unrecorded_new" and says that novelty was lost from then
 * on.  It is never silent.
 *
 * Keys are compared whole (not by hash), so a sandbox cannot make a
 * junk key that stands for the one that matters.  Time is passed in, so
 * tests choose it. */
#ifndef HAVEN_DENIAL_LIMITER_H
#define HAVEN_DENIAL_LIMITER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define HV_DENIAL_KEYS_MAX 4096
#define HV_DENIAL_KEY_BYTES_MAX (1u << 20)
#define HV_DENIAL_KEY_LEN_MAX 8192 /* a longer key counts as one that cannot be remembered */
#define HV_DENIAL_SUMMARY_KEYS 32
#define HV_DENIAL_RATE_MAX 1000
#define HV_DENIAL_WINDOW_MS 1000

/* What a summary says (its key strings point into the limiter: valid
 * while it lives). */
typedef struct hv_denial_summary
{
  uint64_t count;          /* denials left out since the last summary */
  uint64_t repeats;        /* of them, repeats of recorded ones */
  uint64_t unrecorded_new; /* of them, new ones past the cap, only counted */
  size_t n_named;
  struct
  {
    const char *key;
    uint64_t count;
  } named[HV_DENIAL_SUMMARY_KEYS]; /* most repeated first */
  uint64_t repeats_unnamed;        /* repeats of keys past those named */
  bool full;                       /* the set of remembered keys is full */
  unsigned per_second;             /* new keys recorded a second past the cap */
  uint64_t overruns;               /* the caller's: times its socket dropped denials unread */
  uint64_t kernel_lost;            /* the caller's: records the kernel's audit lost (any process's) */
} hv_denial_summary;

struct hv_denial_seen;

typedef struct hv_denial_limiter
{
  unsigned per_second; /* new keys recorded a second once the set is full */
  uint64_t seed;
  struct hv_denial_seen *seen; /* HV_DENIAL_KEYS_MAX entries */
  uint32_t *slots;             /* open addressing: index + 1 into seen, 0 empty */
  size_t n_seen, key_bytes;
  bool full;
  /* The window that limits new keys past the cap. */
  bool open;
  uint64_t window_start;
  unsigned admitted_unremembered;
  /* Left out since the last summary. */
  uint64_t repeats, unrecorded_new;
  uint64_t due; /* when the summary of that falls due (ms), 0: none */
  uint32_t *dirty; /* seen entries with a count since the last summary */
  size_t n_dirty;
} hv_denial_limiter;

/* per_second: 1..HV_DENIAL_RATE_MAX (clamped). */
void hv_denial_limiter_init (hv_denial_limiter *l, unsigned per_second);
void hv_denial_limiter_release (hv_denial_limiter *l);
/* Record a denial with this key (its bytes) at now_ms?  false: counted
 * for the next summary instead (a repeat, or new past the cap and over
 * per_second). */
bool hv_denial_limiter_admit (hv_denial_limiter *l, const void *key, size_t keylen, uint64_t now_ms);
/* A summary is due by now_ms: fill *s (its counts then reset) and return
 * true.  Call before admitting denials, so a summary comes before what
 * follows it.  now_ms UINT64_MAX: whatever is left, due or not (the
 * sandbox is gone). */
bool hv_denial_limiter_tick (hv_denial_limiter *l, uint64_t now_ms, hv_denial_summary *s);
/* When the next summary falls due (ms), or 0 when none will. */
uint64_t hv_denial_limiter_deadline (const hv_denial_limiter *l);
/* Add s's counts to *to (its named keys as repeats_unnamed): the
 * summaries held back past a trail's size cap, for the final one. */
void hv_denial_summary_add (hv_denial_summary *to, const hv_denial_summary *s);
/* Keys remembered so far. */
size_t hv_denial_limiter_remembered (const hv_denial_limiter *l);
#endif
