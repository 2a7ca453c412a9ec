/* A copy-on-write JSON file that holds every project's entries
 * (~/.claude.json: projects.<path>.mcpServers with their env, allowed
 * tools, last sessions): the project's copy keeps only its own (issue
 * 23, "a run sees its own project's agent state only").  The policy names
 * the members that are objects keyed by project path (home_allow
 * `per_project`); in the copy, each keeps the keys that are the project
 * or a directory in it.  Done at every start, so that a copy made before
 * (or one the sandbox filled again) is cut down too. */
#ifndef HAVEN_HOME_COPY_FILTER_H
#define HAVEN_HOME_COPY_FILTER_H

#include "error.h"
#include "oci_spec.h"

/* Rewrite `file` in directory efd (the project's copy of `real`, for
 * messages).  A copy that is not a JSON object is replaced by "{}" (a
 * line appended to notes says so; NULL: not kept): what it holds cannot
 * be told apart. */
int hv_home_copy_filter (int efd, const char *file, const char *real, const oci_strv *members, const char *project,
                         oci_strv *notes, hv_error **err);
#endif
