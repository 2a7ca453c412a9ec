/* `haven policy suggest`'s builder: the records of one learn run (a
 * `haven run --learn`, policies/README.md "Learn mode and haven policy
 * suggest") in, the smallest policy that extends the run's base and
 * allows what was refused out, as YAML text.
 *
 * Each refusal becomes one entry, grouped by key and commented with who
 * hit it and how often: a path in the project a "{project}/..." rule,
 * one elsewhere exactly that path, a name a network.allow entry with the
 * port its connect was refused on, a program a process.allow_exec entry
 * (its full path), a system call a syscalls.allow entry.  What must not
 * be allowed (a secret the base hides, a shell under block_shell, a home
 * file the host user later runs or sources, an engine's socket, what the
 * policy language cannot say) is flagged with the reason in comments at
 * the end, never suggested.
 *
 * The records are hostile text (the sandbox chose the names, paths and
 * program names): every value is written double-quoted from printable
 * ASCII only (anything else is flagged, not written), every comment is
 * printable ASCII, so the YAML stays one mapping with the keys written
 * here and nothing a record says can add a key. */
#ifndef HAVEN_POLICY_SUGGEST_H
#define HAVEN_POLICY_SUGGEST_H

#include <yajl/yajl_tree.h>

#include "error.h"
#include "policy.h"

typedef struct hv_suggest hv_suggest;

/* base: the run's policy, loaded (its block list, block_shell and
 * syscalls decide what is flagged); base_ref: what `extends:` says (its
 * name or file: NULL with *err when it holds a character a value is not
 * written with); home: the caller's $HOME (NULL: none).  The strings are
 * copied; base must outlive the builder. */
hv_suggest *hv_suggest_new (const hv_policy *base, const char *base_ref, const char *home, hv_error **err);
void hv_suggest_free (hv_suggest *s);

/* One record of the run, a parsed JSON object; where: "FILE:LINE", for
 * errors.  A record of a known kind missing a member it must have is an
 * error; kinds that refuse nothing are read for the run's command and
 * project ("start") or its losses ("denials-suppressed", "dropped",
 * "landlock-unrecorded": said in the header), others are skipped. */
int hv_suggest_add (hv_suggest *s, yajl_val record, const char *where, hv_error **err);

/* The policy: a header (from: where the records came from, one line),
 * `extends:`, the entries, then the flagged refusals as comments. */
char *hv_suggest_yaml (const hv_suggest *s, const char *from);

/* How many entries and flags were made (for the caller's summary). */
size_t hv_suggest_entries (const hv_suggest *s);
size_t hv_suggest_flags (const hv_suggest *s);

static inline void
cleanup_suggestp (hv_suggest **s)
{
  hv_suggest_free (*s);
}
#define cleanup_suggest __attribute__ ((cleanup (cleanup_suggestp)))
#endif
