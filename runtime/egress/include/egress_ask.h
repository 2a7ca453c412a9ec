/* Where the egress resolver asks about a name a policy marks `ask`: the
 * `run.haven.ask` annotation (haven_annotations.h), one JSON object
 *
 *   {"dir": "/home/u/.local/state/haven/approvals", "run": "0123456789abcdef", "project": "/home/u/p",
 *    "command": ["claude", "-p", "..."], "haven_pid": 1234}
 *
 * dir is the approvals directory (session/approvals.h has the files'
 * format): the resolver writes RUN-N.request there, waits for
 * RUN-N.answer (inotify, and a look every 250 ms while a request is
 * pending), and removes both.  The rules (which names ask, the timeout)
 * are the egress annotation's (egress_config.h). */
#ifndef HAVEN_EGRESS_ASK_H
#define HAVEN_EGRESS_ASK_H

#include <stddef.h>
#include <sys/types.h>

#include "error.h"

typedef struct hv_egress_ask_config
{
  char *dir;     /* absolute */
  char *project; /* "" when none */
  char **command; /* NULL-terminated */
  pid_t haven_pid;
  /* From the egress annotation, set by the caller. */
  char *policy;
  unsigned timeout_ms;
  char run[17]; /* the run id (16 hex): the annotation's, or "" (the caller makes one) */
} hv_egress_ask_config;

/* doc names the document in errors ("config.json"). */
int hv_egress_ask_config_parse (const char *json, const char *doc, hv_egress_ask_config **out, hv_error **err);
void hv_egress_ask_config_free (hv_egress_ask_config *c);
#endif
