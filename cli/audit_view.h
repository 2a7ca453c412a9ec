/* Audit trails for people: `haven audit` reads the JSON-lines trails the
 * monitors write (runtime/audit/include/audit_trail.h) and prints one line per record.
 *
 * A trail is input, not trusted: the monitor writes it, but strings in it
 * are the sandboxed process's own claims ("comm", the command, names it
 * looked up), and a file may be cut short or damaged.  A line that is not
 * a record (not a JSON object, no "time" or "event", nested deeper than
 * HV_AUDIT_VIEW_MAX_DEPTH, longer than HV_AUDIT_VIEW_MAX_LINE) is
 * skipped and counted, and every control character a string holds is
 * printed escaped, so a record cannot move the cursor or retitle the
 * terminal. */
#ifndef HAVEN_AUDIT_VIEW_H
#define HAVEN_AUDIT_VIEW_H

#include <stdbool.h>
#include <time.h>
#include <yajl/yajl_tree.h>

#include "error.h"
#include "oci_spec.h"

#define HV_AUDIT_VIEW_MAX_LINE (256 * 1024)
#define HV_AUDIT_VIEW_MAX_DEPTH 16

/* --since: "10s", "5m", "2h", "3d" before now, or a time
 * "2026-11-23T10:00[:SS]" (also with a space for T, or a date alone) in
 * local time, in UTC with a trailing "Z".  Errors name the value. */
int hv_audit_parse_since (const char *s, time_t now, time_t *out, hv_error **err);

/* A record's "time" (RFC 3339 in UTC, as the monitors write it:
 * 2026-11-23T10:00:01.123456789Z): seconds and nanoseconds.  -1 when it
 * is not such a time. */
int hv_audit_parse_time (const char *s, time_t *sec, long *nsec);

struct hv_audit_record
{
  yajl_val root;
  time_t sec;
  long nsec;
  const char *event;
  const char *policy;    /* NULL when absent */
  const char *container; /* NULL for haven run's records */
  /* A Kubernetes pod's container: its "pod" object's members (NULL when
   * absent; container NULL for the pod's sandbox container). */
  const char *pod_namespace, *pod_name, *pod_container;
};

/* Parse one line; -1 when it is not a record (see above). */
int hv_audit_record_parse (const char *line, struct hv_audit_record *r);
void hv_audit_record_release (struct hv_audit_record *r);

struct hv_audit_filter
{
  bool has_since;
  time_t since;
  oci_strv events;     /* any of: the event, a denial's system call, a "rule" */
  /* any of: a container id prefix, a policy name, a pod's
   * NAMESPACE/POD (its containers and its sandbox's) or one of its
   * containers, NAMESPACE/POD/CONTAINER */
  oci_strv containers;
};

bool hv_audit_record_matches (const struct hv_audit_record *r, const struct hv_audit_filter *f);

/* One line for people (no newline): local time, who (container id and
 * policy, or haven run and policy), event, the fields that matter. */
char *hv_audit_record_format (const struct hv_audit_record *r);
#endif
