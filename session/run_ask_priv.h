/* What run_ask.c (the watch and the terminal) and run_ask_command.c
 * (HAVEN_ASK_COMMAND) share. */
#ifndef HAVEN_RUN_ASK_PRIV_H
#define HAVEN_RUN_ASK_PRIV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "approvals.h"
#include "oci_spec.h"
#include "run_ask.h"

/* Commands running at once: one per pending request, more wait. */
#define HV_ASK_RUNNERS 8
/* The part of a command's stdout that is read: its first word is all
 * that counts. */
#define HV_ASK_OUT_MAX 256
/* How far ahead of a request's deadline_ms its holder may time out (it
 * counts on a clock of its own): a request gone unanswered this close to
 * its deadline went at its deadline. */
#define HV_ASK_DEADLINE_SLACK_MS 1000
/* How long after the question appears a key is still one the user was
 * typing for the agent, not an answer (they cannot have read it yet). */
#define HV_ASK_GRACE_MS 1000

struct hv_ask_runner
{
  pid_t pid; /* 0: a free slot; also its process group */
  int pidfd;
  int out; /* its stdout's pipe, -1 once at its end */
  char *id, *name;
  int64_t deadline_ms;
  char buf[HV_ASK_OUT_MAX + 1];
  size_t len;
};

struct hv_run_ask
{
  char *run;
  int dirfd; /* the approvals directory */
  int ino;   /* inotify of it */
  int ep;    /* the one fd the run polls */
  int timer; /* the commands' next deadline, CLOCK_REALTIME */
  bool terminal;
  char *command;
  oci_strv asked_tty; /* ids the terminal has dealt with */
  oci_strv asked_cmd; /* ids given to the command */
  struct hv_ask_runner runners[HV_ASK_RUNNERS];
  /* The last answer the command gave: what the terminal says when it
   * withdraws that question (the holder may have taken the answer file
   * away by then). */
  char *cmd_answer_id;
  hv_ask_decision cmd_answer;
};

bool hv_ask_listed (const oci_strv *ids, const char *id);
/* A line on stderr, "haven: ...", ended for a raw terminal where there is one. */
void hv_ask_note (const struct hv_run_ask *a, const char *fmt, ...) __attribute__ ((format (printf, 2, 3)));

/* The answer among keys typed to the question: the first of o r a d (or
 * O R A D) that is not part of an escape sequence (an arrow key's "A"),
 * also one split across reads (*esc: where in one the last read ended,
 * 0 at first); every other key is ignored.  0 and *d, or -1. */
int hv_ask_key_decision (const char *buf, size_t n, int *esc, hv_ask_decision *d);

/* run_ask_command.c: on each event, the pending requests (reqs, n) of
 * the run: finish the commands that have ended (their answer), kill those
 * past their deadline or whose request is no longer pending, start one
 * for each new request; then the timer for the next deadline. */
void hv_ask_commands_pump (struct hv_run_ask *a, const hv_approval_request *reqs, size_t n);
/* Kill and reap every command still running. */
void hv_ask_commands_stop (struct hv_run_ask *a);
#endif
