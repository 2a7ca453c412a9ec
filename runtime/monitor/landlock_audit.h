/* Landlock's refusals as audit trail records, read from the kernel's
 * audit subsystem (Landlock logs there since Linux 6.15, ABI 7; it never
 * tells the process that created the domain).
 *
 * The monitor joins the audit netlink multicast group AUDIT_NLGRP_READLOG
 * (a copy of every record: auditd, journald and the kernel log still get
 * theirs; it needs CAP_AUDIT_READ in the initial user namespace, and the
 * initial network namespace).  Of what it hears it keeps only the
 * refusals of one Landlock domain: the one whose AUDIT_LANDLOCK_DOMAIN
 * "status=allocated" record names the container's init as the process
 * that made it (init calls landlock_restrict_self before it runs the
 * command).  Each AUDIT_LANDLOCK_ACCESS record of that domain, with the
 * AUDIT_SYSCALL record of the same event when the kernel writes one,
 * becomes
 *
 *   {"event":"landlock-denied","access":"fs.execute","path":"/usr/bin/bash",
 *    "pid":4250,"comm":"sh","syscall":59,"domain":"1caadd671",
 *    "rule":"process.block_shell"}
 *
 * "rule" comes from the run.haven.landlock.audit annotation (the policy
 * layer's words for which of its items each kind of access stands for):
 *   {"execute": "process.allow_exec", "write": "filesystem.read_write"}
 * Records go through a limiter (denial_limiter.h: HV_LANDLOCK_AUDIT_RATE
 * a second, one per access and path in a second) and the trail's size
 * cap; what is left out is counted in
 *   {"event":"denials-suppressed","kind":"landlock","count":N,...}.
 *
 * Nothing is recorded when the kernel's audit is off (Landlock then logs
 * nothing at all): haven never turns it on.  The annotation also makes
 * the runtime ask Landlock to log refusals after init's execve
 * (LANDLOCK_RESTRICT_SELF_LOG_NEW_EXEC_ON), which by default it does not. */
#ifndef HAVEN_LANDLOCK_AUDIT_H
#define HAVEN_LANDLOCK_AUDIT_H

#include <stdbool.h>
#include <sys/types.h>

#include "audit_trail.h"

#define HV_LANDLOCK_AUDIT_RATE 20

typedef struct hv_landlock_audit hv_landlock_audit;

/* Join the multicast group.  NULL when that is not possible, with
 * *why saying so (a static string) and the errno in *errnum. */
hv_landlock_audit *hv_landlock_audit_open (const char *rules_json, const char **why, int *errnum);
void hv_landlock_audit_free (hv_landlock_audit *l);
int hv_landlock_audit_fd (const hv_landlock_audit *l);
/* Is the kernel's audit enabled?  1 yes, 0 no, -1 unknown. */
int hv_landlock_audit_enabled (void);
/* The container's init (host pid): its domain is the one recorded. */
void hv_landlock_audit_attach (hv_landlock_audit *l, pid_t init_pid);

/* The reader is accepted in any network namespace, but the kernel sends
 * its records to one only: in another (haven under `ip netns exec`) it
 * hears nothing, and every refusal would be missing from the trail in
 * silence.  Joining the group makes the kernel write a record of the
 * join (AUDIT_EVENT_LISTENER) while its audit is on, which the reader
 * itself hears in the namespace the kernel sends to.  After
 * hv_landlock_audit_expect_join (the audit is on), a reader that has
 * heard nothing HV_LANDLOCK_AUDIT_JOIN_MS after it joined, or by
 * hv_landlock_audit_finish, writes one landlock-unrecorded record with
 * HV_LANDLOCK_AUDIT_UNHEARD as its reason (from hv_landlock_audit_tick:
 * the loop never waits for it). */
#define HV_LANDLOCK_AUDIT_JOIN_MS 1000
#define HV_LANDLOCK_AUDIT_UNHEARD                                                                                   \
  "the kernel's audit sends its records to another network namespace than haven's (haven runs in one of its own, " \
  "e.g. under `ip netns exec`): haven heard nothing from it, not even the record of its own joining"
void hv_landlock_audit_expect_join (hv_landlock_audit *l);
/* Read what is queued and record it.  -1: the socket is of no more use. */
int hv_landlock_audit_ready (hv_landlock_audit *l, struct hv_audit_trail *t);
/* Milliseconds until hv_landlock_audit_tick has work (an event waiting
 * for its end, a summary due, the join's record still unheard), or -1. */
int hv_landlock_audit_timeout (const hv_landlock_audit *l);
void hv_landlock_audit_tick (hv_landlock_audit *l, struct hv_audit_trail *t);
/* The sandbox is gone: read until the socket has been quiet for
 * quiet_ms (at most 20 times that), then record what is left. */
void hv_landlock_audit_finish (hv_landlock_audit *l, struct hv_audit_trail *t, int quiet_ms);

/* For tests: one record's text (what follows "audit(...): "), parsed
 * into key's value (hex-encoded strings decoded); NULL when absent. */
char *hv_landlock_audit_field (const char *text, const char *key);
/* For the fuzz target (tests/fuzz): a reader on fd (owned) without the
 * socket setup, and one received datagram of n bytes, in a buffer with
 * room for one more byte (it is NUL-terminated in place), handled as
 * hv_landlock_audit_ready handles what the kernel sends. */
hv_landlock_audit *hv_landlock_audit_new (int fd, const char *rules_json);
void hv_landlock_audit_datagram (hv_landlock_audit *l, struct hv_audit_trail *t, char *buf, size_t n);
#endif
