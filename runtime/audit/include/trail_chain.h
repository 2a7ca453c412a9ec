/* The trail's chain: every record written to a trail file carries its
 * place ("seq", 1-based, per file) and the SHA-256 of the line before it
 * ("prev", 64 hex: the line's bytes without its newline; 64 zeros for
 * the first line of a file), so that a changed, removed or inserted line
 * breaks the chain where it is (hv_trail_verify, `haven audit --verify`).
 *
 * One function appends to a trail, hv_trail_append: every writer of a
 * trail (hv_audit_trail_emit) goes through it.  Writers are many
 * processes (the session, the audit listener, the container's monitor,
 * other runs sharing the file) that often share one open file
 * description (fork, dup), whose flock is then one lock: each append
 * locks a description of its own, opened again from /proc/self/fd, which
 * also reads what a write-only descriptor cannot. */
#ifndef HAVEN_TRAIL_CHAIN_H
#define HAVEN_TRAIL_CHAIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <yajl/yajl_gen.h>

#include "sha256.h"

/* The longest line the chain reads back; a longer one breaks the chain
 * (the writer hashes only its last HV_TRAIL_MAX_LINE bytes, the verifier
 * reports it).  No record haven writes comes near it. */
#define HV_TRAIL_MAX_LINE (16 << 20)

/* g: a record left open (hv_audit_trail_record, or any open map).  Adds
 * "seq" and "prev" after what the last line of fd's file says, closes the
 * map and writes the line with one write, all under flock(LOCK_EX) of
 * the file.  A last line without a newline (a writer that died in the
 * middle of its write) stays as it is, as evidence: the record starts a
 * new line and chains to those bytes (seq 1, as after any line that is
 * not chained).  fd not a regular file (a pipe, a socket): the record is
 * written without "seq" and "prev" (there is no file to chain).
 * Returns the bytes written (0 when the write failed). */
size_t hv_trail_append (int fd, yajl_gen g);

enum hv_trail_link_kind
{
  HV_TRAIL_NOT_JSON,  /* not a JSON object */
  HV_TRAIL_UNCHAINED, /* an object with neither "seq" nor "prev" */
  HV_TRAIL_BAD_LINK,  /* "seq" or "prev" missing or malformed */
  HV_TRAIL_CHAINED,
};

/* What one line (len bytes, no newline) says of its place in a chain;
 * also its "time" (empty when none). */
struct hv_trail_link
{
  enum hv_trail_link_kind kind;
  uint64_t seq;
  char prev[HV_SHA256_HEX_SIZE];
  char time[64];
};
void hv_trail_link_parse (const char *line, size_t len, struct hv_trail_link *out);

/* The verdict of a walk over a trail file. */
struct hv_trail_verdict
{
  bool ok;
  uint64_t lines;          /* lines read (up to the problem when there is one) */
  uint64_t before_chain;   /* lines before the first chained record */
  uint64_t chained;        /* chained records */
  uint64_t first_seq, last_seq;
  char first_time[64], last_time[64]; /* the chained records' span */
  char head[HV_SHA256_HEX_SIZE];      /* the SHA-256 of the last line */
  /* !ok: the first problem, on line (1-based), said in words. */
  uint64_t line;
  char problem[256];
};

/* Walk the trail open on fd (read from its start, under flock(LOCK_SH)
 * so that no record is read half-written): 0 with *v filled (v->ok says
 * whether the chain holds), -1 with errno when it cannot be read. */
int hv_trail_verify (int fd, struct hv_trail_verdict *v);
#endif
