#include "config.h"
#include "audit_trail.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "json_gen.h"
#include "log.h"
#include "trail_chain.h"
#include "utf8.h"
#include "utils.h"

/* Every string of a record is valid UTF-8 (base/utf8.h): yajl escapes
 * the control characters but passes bytes through unchecked, and a
 * process named "\xff\xfe" used to make a line that was not JSON.
 * Returns a new string. */
char *
hv_audit_utf8_sanitize (const char *s)
{
  return hv_utf8_sanitize (s, strlen (s), NULL);
}

void
hv_audit_put_str (yajl_gen g, const char *s)
{
  cleanup_free char *clean = hv_audit_utf8_sanitize (s ? s : "");
  jg_str (g, clean);
}

void
hv_audit_put_kv (yajl_gen g, const char *key, const char *value)
{
  jg_str (g, key);
  hv_audit_put_str (g, value);
}

void
hv_audit_run_id (char out[HV_AUDIT_RUN_ID_SIZE])
{
  unsigned char bytes[8];
  size_t got = 0;
  while (got < sizeof (bytes))
    {
      ssize_t n = getrandom (bytes + got, sizeof (bytes) - got, 0);
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        abort ();
      got += (size_t) n;
    }
  static const char hex[] = "0123456789abcdef";
  for (size_t i = 0; i < sizeof (bytes); i++)
    {
      out[2 * i] = hex[bytes[i] >> 4];
      out[2 * i + 1] = hex[bytes[i] & 0xf];
    }
  out[2 * sizeof (bytes)] = '\0';
}

void
hv_audit_trail_init (struct hv_audit_trail *t, int fd, const char *policy, const char *container)
{
  memset (t, 0, sizeof (*t));
  t->fd = fd;
  t->policy = policy;
  t->container = container;
  t->tokens = HV_AUDIT_BURST;
  pthread_mutex_init (&t->lock, NULL);
  clock_gettime (CLOCK_MONOTONIC, &t->last);
}

void
hv_audit_trail_release (struct hv_audit_trail *t)
{
  free (t->req);
  free (t->resp);
  t->req = NULL;
  t->resp = NULL;
  pthread_mutex_destroy (&t->lock);
}

yajl_gen
hv_audit_trail_record (const struct hv_audit_trail *t, const char *event)
{
  yajl_gen g = yajl_gen_alloc (NULL);
  cleanup_free char *now = now_rfc3339 ();
  yajl_gen_map_open (g);
  hv_audit_put_kv (g, "time", now);
  hv_audit_put_kv (g, "event", event);
  hv_audit_put_kv (g, "policy", t->policy);
  if (t->run)
    hv_audit_put_kv (g, "run", t->run);
  if (t->container)
    hv_audit_put_kv (g, "container", t->container);
  if (t->sandbox)
    hv_audit_put_kv (g, "sandbox", t->sandbox);
  if (t->pod)
    {
      jg_str (g, "pod");
      yajl_gen_map_open (g);
      if (t->pod->pod_namespace)
        hv_audit_put_kv (g, "namespace", t->pod->pod_namespace);
      if (t->pod->name)
        hv_audit_put_kv (g, "name", t->pod->name);
      if (t->pod->uid)
        hv_audit_put_kv (g, "uid", t->pod->uid);
      if (t->pod->container)
        hv_audit_put_kv (g, "container", t->pod->container);
      yajl_gen_map_close (g);
    }
  return g;
}

void
hv_audit_trail_emit (struct hv_audit_trail *t, yajl_gen g)
{
  /* One write per line, chained to the line before it
   * (trail_chain.h), under a lock of the file that every writer of it
   * takes; the mutex keeps the count the sum of this trail's lines. */
  pthread_mutex_lock (&t->lock);
  t->written += hv_trail_append (t->fd, g);
  /* Whoever wrote it (system calls, Landlock, egress, a service): past
   * the cap only what is new and the final summaries are written. */
  if (t->written >= HV_AUDIT_MAX_BYTES)
    t->capped = true;
  pthread_mutex_unlock (&t->lock);
  yajl_gen_free (g);
}

bool
hv_audit_trail_summary_due (const struct hv_audit_trail *t)
{
  return t->dropped && !t->capped;
}

/* {"event":"dropped","count":N,"syscalls":{"ptrace":N,...}}: the denials
 * not recorded one by one since the last summary.  "final" marks the
 * summary written after the size cap, when the sandbox is gone. */
void
hv_audit_trail_summarize (struct hv_audit_trail *t, bool final)
{
  if (t->dropped == 0)
    return;
  yajl_gen g = hv_audit_trail_record (t, "dropped");
  jg_str (g, "count");
  yajl_gen_integer (g, (long long) t->dropped);
  jg_str (g, "reason");
  jg_str (g, t->capped ? "size limit" : "rate limit");
  if (final)
    {
      jg_str (g, "total_dropped");
      yajl_gen_integer (g, (long long) t->dropped_total);
    }
  jg_str (g, "syscalls");
  yajl_gen_map_open (g);
  /* Kinds are counted per architecture and number, but named by name
   * alone, and two can share one (open on x86_64 and on i386): one key
   * per name, with their sum.  A key twice is not a record to readers
   * (haven audit refuses it: they disagree on which one counts). */
  char *names[HV_AUDIT_MAX_KINDS] = { NULL };
  for (size_t i = 0; i < t->n_kinds; i++)
    {
      names[i] = seccomp_syscall_resolve_num_arch (t->kinds[i].arch, t->kinds[i].nr);
      if (names[i] == NULL)
        names[i] = xasprintf ("%d", t->kinds[i].nr);
    }
  for (size_t i = 0; i < t->n_kinds; i++)
    {
      bool named_before = false;
      for (size_t j = 0; j < i && !named_before; j++)
        named_before = strcmp (names[j], names[i]) == 0;
      if (named_before)
        continue;
      uint64_t count = 0;
      for (size_t j = i; j < t->n_kinds; j++)
        if (strcmp (names[j], names[i]) == 0)
          count += t->kinds[j].count;
      hv_audit_put_str (g, names[i]);
      yajl_gen_integer (g, (long long) count);
    }
  for (size_t i = 0; i < t->n_kinds; i++)
    free (names[i]);
  if (t->other)
    {
      jg_str (g, "other");
      yajl_gen_integer (g, (long long) t->other);
    }
  yajl_gen_map_close (g);
  hv_audit_trail_emit (t, g);
  t->dropped = 0;
  t->n_kinds = 0;
  t->other = 0;
}

/* *msg with a clause printed after it. */
static void __attribute__ ((format (printf, 2, 3)))
append_clause (char **msg, const char *fmt, ...)
{
  va_list ap;
  va_start (ap, fmt);
  cleanup_free char *clause = xvasprintf (fmt, ap);
  va_end (ap);
  char *joined = xasprintf ("%s%s", *msg, clause);
  free (*msg);
  *msg = joined;
}

void
hv_audit_trail_denials_summary (struct hv_audit_trail *t, const char *kind, const hv_denial_summary *s)
{
  yajl_gen g = hv_audit_trail_record (t, "denials-suppressed");
  hv_audit_put_kv (g, "kind", kind);
  jg_str (g, "count");
  yajl_gen_integer (g, (long long) s->count);
  jg_str (g, "repeats");
  yajl_gen_integer (g, (long long) s->repeats);
  jg_str (g, "repeated");
  yajl_gen_map_open (g);
  /* Distinct keys can be one string once made valid UTF-8 (a name's
   * invalid bytes all become U+FFFD): one member each, with the sum (a
   * member twice is not a record to readers). */
  char *clean[HV_DENIAL_SUMMARY_KEYS] = { NULL };
  size_t n = s->n_named < HV_DENIAL_SUMMARY_KEYS ? s->n_named : HV_DENIAL_SUMMARY_KEYS;
  for (size_t i = 0; i < n; i++)
    clean[i] = hv_audit_utf8_sanitize (s->named[i].key ? s->named[i].key : "");
  for (size_t i = 0; i < n; i++)
    {
      bool before = false;
      for (size_t j = 0; j < i && !before; j++)
        before = strcmp (clean[j], clean[i]) == 0;
      if (before)
        continue;
      uint64_t count = 0;
      for (size_t j = i; j < n; j++)
        if (strcmp (clean[j], clean[i]) == 0)
          count += s->named[j].count;
      jg_str (g, clean[i]);
      yajl_gen_integer (g, (long long) count);
    }
  for (size_t i = 0; i < n; i++)
    free (clean[i]);
  yajl_gen_map_close (g);
  if (s->repeats_unnamed)
    {
      jg_str (g, "repeats_unnamed");
      yajl_gen_integer (g, (long long) s->repeats_unnamed);
    }
  jg_str (g, "unrecorded_new");
  yajl_gen_integer (g, (long long) s->unrecorded_new);
  if (s->overruns)
    {
      jg_str (g, "overruns");
      yajl_gen_integer (g, (long long) s->overruns);
    }
  if (s->kernel_lost)
    {
      jg_str (g, "kernel_lost");
      yajl_gen_integer (g, (long long) s->kernel_lost);
    }
  jg_str (g, "novelty_lost");
  yajl_gen_bool (g, s->unrecorded_new || s->overruns || s->kernel_lost);
  cleanup_free char *msg = xasprintf ("%llu more %s denials not recorded one by one: %llu repeats of ones recorded before",
                                      (unsigned long long) s->count, kind, (unsigned long long) s->repeats);
  if (s->unrecorded_new)
    append_clause (&msg,
                   "; %llu NEW ones not recorded: haven remembers %u distinct %s denials (keys up to %u bytes), and "
                   "past that records at most %u new ones a second",
                   (unsigned long long) s->unrecorded_new, HV_DENIAL_KEYS_MAX, kind, HV_DENIAL_KEY_LEN_MAX,
                   s->per_second);
  if (s->overruns)
    append_clause (&msg,
                   "; the kernel dropped log messages %llu times while haven was behind: denials, new ones among "
                   "them, may be missing",
                   (unsigned long long) s->overruns);
  if (s->kernel_lost)
    append_clause (&msg,
                   "; the kernel's audit lost %llu records (of any process) while the sandbox ran: denials, new ones "
                   "among them, may be missing",
                   (unsigned long long) s->kernel_lost);
  hv_audit_put_kv (g, "message", msg);
  hv_audit_trail_emit (t, g);
}
