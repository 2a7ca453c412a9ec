/* Fuzz target of the trail's chain (runtime/audit/trail_chain.c,
 * trail_verify.c): the input is a trail file's bytes (a user's file,
 * perhaps tampered with, perhaps cut short).  The verifier walks it and
 * must give a verdict that adds up: OK, every line counted as chained or
 * written before chaining; a problem, on a line of the file.  Then one
 * record is appended as every writer appends (hv_trail_append): it is
 * one line, chained; a file that verified and ended with a newline (or
 * was empty) still verifies, one record longer, its seq one past the
 * last (1 when none was chained); a file cut in the middle of a line
 * keeps those bytes, and the record follows them on a line of its own. */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <yajl/yajl_gen.h>

#include "fuzz_util.h"
#include "json_gen.h"
#include "trail_chain.h"

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

static void
verify (int fd, struct hv_trail_verdict *v)
{
  if (lseek (fd, 0, SEEK_SET) < 0 || hv_trail_verify (fd, v) < 0)
    fuzz_fail ("verify: cannot read the trail");
  if (v->ok)
    {
      if (v->problem[0] || v->line)
        fuzz_fail ("OK with a problem: %s", v->problem);
      if (v->chained + v->before_chain != v->lines)
        fuzz_fail ("OK: %llu chained + %llu before != %llu lines", (unsigned long long) v->chained,
                   (unsigned long long) v->before_chain, (unsigned long long) v->lines);
      if (v->chained && v->last_seq - v->first_seq + 1 != v->chained)
        fuzz_fail ("OK: seq %llu..%llu for %llu records", (unsigned long long) v->first_seq,
                   (unsigned long long) v->last_seq, (unsigned long long) v->chained);
    }
  else if (v->problem[0] == '\0' || v->line == 0 || v->line > v->lines + 1)
    fuzz_fail ("a problem on line %llu of %llu: \"%s\"", (unsigned long long) v->line,
               (unsigned long long) v->lines, v->problem);
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  int fd = memfd_create ("trail", MFD_CLOEXEC);
  if (fd < 0 || (size && write (fd, data, size) != (ssize_t) size))
    fuzz_fail ("memfd");
  struct hv_trail_verdict before, after;
  verify (fd, &before);

  /* Appending and write-only, as the writers open a trail. */
  char self[64];
  snprintf (self, sizeof (self), "/proc/self/fd/%d", fd);
  int wfd = open (self, O_WRONLY | O_APPEND | O_CLOEXEC);
  if (wfd < 0)
    fuzz_fail ("reopen the memfd: %s", strerror (errno));
  yajl_gen g = yajl_gen_alloc (NULL);
  yajl_gen_map_open (g);
  jg_str (g, "event");
  jg_str (g, "fuzz");
  size_t n = hv_trail_append (wfd, g);
  yajl_gen_free (g);
  close (wfd);
  if (n == 0)
    fuzz_fail ("append wrote nothing");
  size_t len;
  char *text = fuzz_read_all (fd, &len);
  if (len != size + n || memcmp (text, data, size) != 0)
    fuzz_fail ("append changed what was there");
  bool cut = size && data[size - 1] != '\n';
  const char *line = text + size + (cut ? 1 : 0);
  if ((cut && text[size] != '\n') || text[len - 1] != '\n' || memchr (line, '\n', (size_t) (text + len - line - 1)))
    fuzz_fail ("the record is not one line of its own");
  struct hv_trail_link link;
  hv_trail_link_parse (line, (size_t) (text + len - line - 1), &link);
  if (link.kind != HV_TRAIL_CHAINED)
    fuzz_fail ("the record is not chained");
  free (text);

  verify (fd, &after);
  if (before.ok && !cut)
    {
      if (!after.ok)
        fuzz_fail ("a trail that verified does not after an append: line %llu: %s", (unsigned long long) after.line,
                   after.problem);
      if (after.chained != before.chained + 1 || after.last_seq != (before.chained ? before.last_seq + 1 : 1))
        fuzz_fail ("after an append: %llu records, last seq %llu", (unsigned long long) after.chained,
                   (unsigned long long) after.last_seq);
    }
  close (fd);
  return 0;
}
