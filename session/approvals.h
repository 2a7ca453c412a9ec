/* The approvals directory: a name a policy marks `ask` (network.ask,
 * network.mode: ask) is held by the sandbox's resolver until someone
 * answers, and the question and its answer are files in
 *
 *   ${XDG_STATE_HOME:-~/.local/state}/haven/approvals/     (0700, ours)
 *
 * beside the default trail, where the sandbox reaches nothing.
 *
 *   ID.request   written by the holder (the monitor that holds the query):
 *                .ID.request.tmp then rename.  A JSON object:
 *                {"id","run","policy","name","type","command":[...],
 *                 "project","time" (RFC 3339),"deadline_ms" (CLOCK_REALTIME
 *                 epoch ms),"haven_pid"}.  ID = RUN-N (the run id, a counter).
 *   ID.answer    written by whoever answers (haven approve, the terminal
 *                asker, the configured command's runner):
 *                {"decision":"once|run|always|deny","by":"approve|terminal|command"}
 *                through a temp file and renameat2 (RENAME_NOREPLACE): the
 *                first answer wins, a second one is "already answered".
 *
 * The holder takes the answer, writes the trail's `ask` record and removes
 * both files; at the deadline the decision is `timeout` (deny).
 *
 * The directory is the user's, but what is in it is read strictly: only
 * regular files (no link followed), owned by us, of bounded size, whose
 * JSON is what is written above; anything else is skipped.
 *
 * "always" also adds the name to ~/.config/haven/approved/POLICY.yaml
 * (${XDG_CONFIG_HOME:-~/.config}), a policy fragment
 * `network: {allow: [...]}` that `haven run --policy POLICY` merges at
 * compile time: 0600 in a 0700 directory, rewritten atomically, each entry
 * after a comment saying who approved it and when. */
#ifndef HAVEN_APPROVALS_H
#define HAVEN_APPROVALS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "error.h"

typedef enum
{
  HV_ASK_ONCE,   /* the held queries only; a later lookup asks again */
  HV_ASK_RUN,    /* the rest of this run */
  HV_ASK_ALWAYS, /* the run, and the approved file for later runs */
  HV_ASK_DENY,
} hv_ask_decision;

/* "once", "run", "always", "deny". */
const char *hv_ask_decision_name (hv_ask_decision d);
/* Also takes the first letter ("o", "r", "a", "d"); -1 for anything else. */
int hv_ask_decision_parse (const char *s, hv_ask_decision *out);

typedef struct
{
  char *id;      /* RUN-N */
  char *run;     /* the run id (16 hex) */
  char *policy;  /* the policy's name, as the run was given it */
  char *name;    /* the DNS name asked for, lower case, no trailing dot */
  char *type;    /* "A", "AAAA", ... */
  char **command; /* the run's command, NULL-terminated (may be empty) */
  char *project;  /* the run's project directory ("" when none) */
  char *time;     /* when asked, RFC 3339 */
  int64_t deadline_ms; /* CLOCK_REALTIME, epoch milliseconds */
  pid_t haven_pid;
} hv_approval_request;

void hv_approval_request_clear (hv_approval_request *r);
void hv_approval_requests_free (hv_approval_request *r, size_t n);

/* The directory's path (a new string); NULL with *err when neither
 * XDG_STATE_HOME nor HOME is an absolute path. */
char *hv_approvals_dir_path (hv_error **err);

/* Open the directory (an O_DIRECTORY fd), made 0700
 * with its parents when create is true.  Refused when it is a link, not
 * ours, or open to group or others. */
int hv_approvals_dir_open (const char *path, bool create, hv_error **err);

/* The pending requests in dirfd: not answered, deadline not passed; when
 * run is not NULL, only that run's.  Sorted by deadline, soonest first.
 * Files that are not well-formed requests are skipped. */
int hv_approvals_list (int dirfd, const char *run, hv_approval_request **out, size_t *n, hv_error **err);

/* One request by id, pending or not (0), or -1 with *err. */
int hv_approval_get (int dirfd, const char *id, hv_approval_request *out, hv_error **err);

/* Why an answer was refused. */
typedef enum
{
  HV_APPROVAL_OK,
  HV_APPROVAL_NO_SUCH,  /* "no pending request ID" */
  HV_APPROVAL_ANSWERED, /* "request ID already answered" */
  HV_APPROVAL_EXPIRED,  /* "request ID expired" (its deadline has passed) */
  HV_APPROVAL_FAILED,   /* anything else (I/O, a bad id) */
} hv_approval_status;

/* Answer request id with d; by is "approve", "terminal" or "command".
 * HV_ASK_ALWAYS also appends the request's name to its policy's approved
 * file (hv_approved_append, who = by) once the answer is in place: the
 * run is approved even when that append fails (the error says so).
 * Returns 0, or -1 with *err and *status (when status is not NULL) saying
 * which refusal it was. */
int hv_approval_answer (int dirfd, const char *id, hv_ask_decision d, const char *by,
                        hv_approval_status *status, hv_error **err);

/* The approved file of a policy name: ${XDG_CONFIG_HOME:-~/.config}/haven/
 * approved/POLICY.yaml (a new string).  A name that is not a plain file
 * name ([A-Za-z0-9._-], not starting with '.') is refused. */
char *hv_approved_path (const char *policy, hv_error **err);

/* Add name to policy's approved file (no-op if already there), with a
 * comment line "# approved by WHO at TIME": the directory made 0700, the
 * file written 0600 through a temp file and a rename, under an flock of
 * the directory so that two answerers do not lose one another's entry. */
int hv_approved_append (const char *policy, const char *name, const char *who, hv_error **err);

#endif
