/* A reader for git's configuration file format, to tell which settings of
 * a repository make git execute a program.  haven never runs git on files
 * the sandbox wrote (git itself would execute them); it reads them with
 * this parser, which follows git's own (config.c) closely enough that a
 * key git sees is a key this parser sees, and refuses what git refuses. */
#ifndef HAVEN_GIT_CONFIG_H
#define HAVEN_GIT_CONFIG_H

#include <stdbool.h>
#include <stddef.h>

#include "error.h"
#include "oci_spec.h"

/* Called for every entry: `key` is "section.key" or "section.sub.key"
 * with the section and key lowercased (the subsection keeps its case, as
 * in git), `value` NULL for a bare key (boolean true).  Return <0 to stop. */
typedef int (*hv_git_config_fn) (const char *key, const char *value, void *data);

/* Parse the text; an error names the line (git would refuse the file). */
int hv_git_config_parse (const char *text, size_t len, hv_git_config_fn fn, void *data, hv_error **err);

/* Whether git may execute a program named by (or selected with) this
 * setting; `key` as passed to hv_git_config_fn. */
bool hv_git_config_key_executes (const char *key);

/* The execution-capable entries of a config text as "key=value" strings
 * (value "(true)" for a bare key), in file order. */
int hv_git_config_exec_entries (const char *text, size_t len, oci_strv *out, hv_error **err);

/* The last value of `key` (lowercase canonical form), or NULL. */
char *hv_git_config_get (const char *text, size_t len, const char *key);
#endif
