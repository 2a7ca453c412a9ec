/* One JSON-lines audit trail: its records, its rate limit and its size
 * cap, and answering seccomp notifications into it.  Shared by the two
 * monitors that write trails: `haven run`'s listener (audit_monitor.c)
 * and the per-container monitor of engine containers
 * (container_monitor.c).  audit_monitor.h describes the records and the
 * limits; a container's records also name the container ("container")
 * and say which process's filter denied the call ("process": "init" or
 * "exec"). */
#ifndef HAVEN_AUDIT_TRAIL_H
#define HAVEN_AUDIT_TRAIL_H

#include <linux/seccomp.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>
#include <yajl/yajl_gen.h>

#include "denial_limiter.h"
#include "error.h"

#define HV_AUDIT_RATE 100           /* denial records per second, sustained */
#define HV_AUDIT_BURST 500          /* ... and at once */
#define HV_AUDIT_MAX_BYTES (4 << 20) /* written per trail, then only a final summary */
#define HV_AUDIT_MAX_KINDS 128      /* distinct system calls in a summary; the rest count as "other" */
#define HV_AUDIT_MAX_RECORDED 1024  /* distinct system calls whose first denial is recorded past the limits */

/* s with every invalid UTF-8 byte replaced by U+FFFD (a new string). */
char *hv_audit_utf8_sanitize (const char *s);

/* What was left out, for the "dropped" summary. */
struct hv_audit_dropped_kind
{
  uint32_t arch;
  int nr;
  uint64_t count;
};

/* The Kubernetes pod a container belongs to (from the CRI runtime's
 * annotations, oci/pod_identity.h): every record of its trail names it,
 * {"pod": {"namespace":..,"name":..,"uid":..,"container":..}}, a member
 * left out where it is NULL (container: the pod's sandbox container). */
struct hv_audit_pod
{
  const char *pod_namespace;
  const char *name;
  const char *uid;
  const char *container;
};

struct hv_audit_trail
{
  int fd;                /* the log (not owned) */
  const char *policy;    /* every record's "policy" */
  /* every record's "run": the run id (hv_audit_run_id) of the haven run,
   * service sandbox or engine container the record is of, the same on
   * each of its records whoever writes them; NULL: none written.  Set
   * after init. */
  const char *run;
  const char *container; /* every record's "container", or NULL (haven run) */
  /* every record's "sandbox": the id `haven serve` gave the sandbox, so
   * that one trail shared by many sandboxes of a policy tells whose each
   * record is; NULL for any other run.  Set after init. */
  const char *sandbox;
  const struct hv_audit_pod *pod; /* every record's "pod", or NULL (not a pod's) */
  /* Denial records are explained with this table ("rule", "allow":
   * denial_explain.h) and copied into this view of the run's denials
   * (`haven why`: denial_view.h); NULL: neither.  Set after init. */
  const struct hv_denial_rules *rules;
  struct hv_denial_view *view;
  /* The limit: a token bucket of HV_AUDIT_RATE per second, HV_AUDIT_BURST
   * at most, and HV_AUDIT_MAX_BYTES in all. */
  double tokens;
  struct timespec last; /* last refill */
  /* Records are written from the monitor's loop and from the threads of
   * its services (monitor_service.h): emit writes each line whole under
   * lock, and the size count and cap are atomic so the loop's reads of
   * them need no lock.  Everything else here is the loop's alone. */
  pthread_mutex_t lock;
  _Atomic uint64_t written; /* bytes of this trail's records */
  _Atomic bool capped;      /* HV_AUDIT_MAX_BYTES reached: only the final summary */
  uint64_t dropped;     /* since the last summary */
  uint64_t dropped_total;
  struct hv_audit_dropped_kind kinds[HV_AUDIT_MAX_KINDS];
  size_t n_kinds;
  uint64_t other; /* denials of kinds past HV_AUDIT_MAX_KINDS */
  /* The system calls recorded at least once: the first denial of
   * another is recorded whatever the rate and the size cap (the
   * limits summarise repeats, never hide what is new).  Past
   * HV_AUDIT_MAX_RECORDED (more than any architecture has) the limits
   * apply to all. */
  struct
  {
    uint32_t arch;
    int nr;
  } recorded[HV_AUDIT_MAX_RECORDED];
  size_t n_recorded;
  /* Notification buffers, of the sizes the kernel asks for. */
  struct seccomp_notif *req;
  struct seccomp_notif_resp *resp;
  size_t req_size, resp_size;
};

/* A run id: 16 lower-case hex characters (8 bytes from getrandom) and
 * the NUL.  Aborts when the kernel has no randomness to give (getrandom
 * blocks until it has): a run's records are told apart by it. */
#define HV_AUDIT_RUN_ID_SIZE 17
void hv_audit_run_id (char out[HV_AUDIT_RUN_ID_SIZE]);

/* A trail writing to fd; the strings must outlive it. */
void hv_audit_trail_init (struct hv_audit_trail *t, int fd, const char *policy, const char *container);
void hv_audit_trail_release (struct hv_audit_trail *t);

/* A record {"time":..,"event":..,"policy":..[,"run":..][,"container":..][,"pod":{..}]} left open
 * for more members; hv_audit_trail_emit closes and writes it.  Both may
 * be called from any thread. */
yajl_gen hv_audit_trail_record (const struct hv_audit_trail *t, const char *event);
void hv_audit_trail_emit (struct hv_audit_trail *t, yajl_gen g);
/* A string member, as valid UTF-8 whatever the bytes. */
void hv_audit_put_kv (yajl_gen g, const char *key, const char *value);
void hv_audit_put_str (yajl_gen g, const char *s);

/* Denials left out since the last summary: true when a summary is due
 * within a second (the rate limit, not the cap, left them out). */
bool hv_audit_trail_summary_due (const struct hv_audit_trail *t);
/* Write the summary of what was left out (the final one after the cap). */
void hv_audit_trail_summarize (struct hv_audit_trail *t, bool final);

/* {"event":"denials-suppressed","kind":KIND,"count":N,"repeats":R,
 *  "repeated":{"KEY":N,...},"repeats_unnamed":N,"unrecorded_new":N,
 *  "overruns":N,"kernel_lost":N,"novelty_lost":BOOL,"message":TEXT}: what a denial
 * limiter (denial_limiter.h) left out.  "repeated" names the keys
 * repeated most (they were recorded one by one before); "novelty_lost"
 * is true when new denials were only counted ("unrecorded_new", past the
 * limiter's cap) or may be missing ("overruns": the reader's socket
 * overflowed; "kernel_lost": the kernel's audit lost records), and the
 * message says so. */
void hv_audit_trail_denials_summary (struct hv_audit_trail *t, const char *kind, const hv_denial_summary *s);

#endif
