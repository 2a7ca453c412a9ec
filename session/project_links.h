/* Symbolic links a haven run leaves in the project that lead outside it
 * (policies/README.md, "Links a run leaves for the host").  The sandbox
 * may plant `docs/shadow -> /etc/shadow` or
 * `preview.png -> ~/.ssh/id_ed25519`: harmless inside (it reads only
 * what the policy shows), but host tools that later follow links in the
 * project (a web server, an archiver, an editor's preview, an agent on
 * the host) read the target with the user's rights.
 *
 * After the sandbox has exited, the project is walked without following
 * links (bounded like the project guard); a link whose change time is at
 * or after the run's start (the sandbox cannot set a change time: a link
 * made, renamed or re-made during the run has a new one) and that leads
 * outside the project, by its own text or once every link on its way is
 * followed, is:
 *   - report (the default): named on stderr with where it leads;
 *   - refuse (`filesystem.project_links: refuse`): removed, and named.
 * Links the run did not touch are the user's own and not mentioned.
 * Only `haven run`: engine containers have no after-run step (their
 * policy note says so).  While the run goes on, host tools can follow a
 * link it just made: the check is after the run. */
#ifndef HAVEN_PROJECT_LINKS_H
#define HAVEN_PROJECT_LINKS_H

#include <time.h>

#include "error.h"
#include "policy.h"

struct hv_project_links
{
  struct timespec since; /* the run's start, in the clock file times use */
};

/* Just before the sandbox starts. */
void hv_project_links_start (struct hv_project_links *l);
/* After it has exited: report (lines appended to notes) or remove
 * (p->refuse_project_links).  Returns the number of links named, or -1
 * when one could not be removed (err names it). */
int hv_project_links_check (const hv_policy *p, const char *project, const struct hv_project_links *l,
                            oci_strv *notes, hv_error **err);
#endif
