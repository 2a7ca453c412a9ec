/* The run's own denials where the sandbox can read them: `haven why`.
 *
 * haven's side (the monitor, the seccomp listener, a run's parent)
 * appends every denial record it writes into the trail to
 * DIR/denials.jsonl too, one JSON line each, where DIR is a directory of
 * the run's bundle that the sandbox sees read-only at HV_WHY_DIR (a run
 * without namespaces: by its path, read-only through Landlock).  The
 * file is bounded: past HV_DENIAL_VIEW_MAX_BYTES it is rewritten (a new
 * file renamed into place, so a reader sees a whole one) with its last
 * HV_DENIAL_VIEW_KEEP lines.  Writers of several processes take turns
 * under flock of DIR.  The sandbox never writes DIR: the records it
 * reads are haven's. */
#ifndef HAVEN_DENIAL_VIEW_H
#define HAVEN_DENIAL_VIEW_H

#include <stddef.h>
#include <yajl/yajl_gen.h>

#include "audit_trail.h"

#define HV_WHY_DIR "/run/haven/why"
#define HV_WHY_FILE "denials.jsonl"
/* The table explaining denials (denial_explain.h), for `haven why PATH`. */
#define HV_WHY_RULES "rules.json"
/* Where `haven why` finds the view of a run without namespaces. */
#define HV_WHY_ENV "HAVEN_WHY_DIR"
#define HV_DENIAL_VIEW_KEEP 200
#define HV_DENIAL_VIEW_MAX_BYTES (128 << 10)
#define HV_DENIAL_VIEW_LINE_MAX (8 << 10) /* a longer record stays in the trail only */

typedef struct hv_denial_view hv_denial_view;

/* The view in dir (made by the session); NULL when it cannot be opened. */
hv_denial_view *hv_denial_view_open (const char *dir);
void hv_denial_view_free (hv_denial_view *v);

/* Append one line (without its newline). */
void hv_denial_view_add (hv_denial_view *v, const char *line, size_t len);

/* hv_audit_trail_emit of a denial record: also into the trail's view. */
void hv_audit_denial_emit (struct hv_audit_trail *t, yajl_gen g);
#endif
