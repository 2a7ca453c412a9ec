/* Commands in a sandbox (service_run.c): started for a run request,
 * their pipes, their exits as the sandbox's keeper reports them, time
 * limits, and their answers. */
#ifndef HAVEN_SERVICE_RUN_H
#define HAVEN_SERVICE_RUN_H

#include <stdbool.h>
#include <stdint.h>

#include "service_base.h"

void svc_handle_run (struct svc *s, struct svc_conn *c, struct svc_sandbox *x);
/* The keeper says run run_id of x exited: answered, and true, when it is
 * one still running (its answer may let the connection's next request
 * run, which may delete x). */
bool svc_run_exited (struct svc *s, struct svc_sandbox *x, uint32_t run_id, int status);
void svc_run_io (struct svc *s, struct svc_run *r, int fd, short revents);
void svc_run_timers (struct svc *s, uint64_t now, uint64_t *next);
void svc_run_client_gone (struct svc *s, struct svc_run *r);
void svc_run_sandbox_gone (struct svc *s, struct svc_sandbox *x); /* fail its runs */
void svc_run_reap (struct svc *s); /* free runs that are finished and answered */

#endif
