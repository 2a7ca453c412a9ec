/* Why a denial happened and what would allow it, in the policy's own
 * words: every denial record of a trail ("denied", "landlock-denied",
 * "net-denied", "dns-refused") carries
 *
 *   "rule":  the policy rule that refused it ("network.allow",
 *            "filesystem.block: ~/.ssh", "process.block_shell",
 *            "syscalls.profile: agent"),
 *   "allow": the policy text that would allow it, YAML flow text to paste
 *            into a policy that extends this one
 *            ("network: {allow: [\"x.example:8443\"]}"),
 *            or "" with "never": true and "why_not" when no policy line
 *            should allow it (a secret the policy hides, haven's own
 *            files),
 *   "caution": (only when the allow text weakens what the policy is
 *            for, e.g. a shell under block_shell) what it would defeat.
 *
 * The runtime knows no policies: the policy layer hands it a small table
 * (hv_denial_rules, the run.haven.denials annotation, made by
 * policy/denial_rules.c) and hv_denial_explain, a pure function over that
 * table and one denial's facts, says the rest.  `haven why` and the MCP
 * `why` tool read the members back from the records. */
#ifndef HAVEN_DENIAL_EXPLAIN_H
#define HAVEN_DENIAL_EXPLAIN_H

#include <stdbool.h>
#include <stddef.h>
#include <yajl/yajl_gen.h>

/* The run.haven.denials annotation (HV_DENIALS_ANNOTATION):
 *   {"trail": true, "project": "/abs/project", "home": "/home/u",
 *    "block": ["/home/u/.ssh", "/abs/project/ ** /.env", "!/abs/...", ...],
 *    "own": ["/home/u/.local/state/haven", ...],
 *    "exec": "process.allow_exec" | "process.block_shell" (absent: none),
 *    "block_shell": true, "network": "none" | "allowlist" | "open",
 *    "profile": "agent", "deny": ["ptrace", ...], "hide_home": true,
 *    "view": "/run/user/1000/haven/run-X/why"}
 * "block": filesystem.block with ~ and {project} expanded (globs: "*"
 * within a name, "**" any depth; "!" exceptions); "own": haven's own
 * files (its state, its configuration, the trail); "view": the run's
 * directory haven's side copies the denials into (denial_view.h). */
typedef struct hv_denial_rules
{
  char *project, *home;
  char **block;
  size_t n_block;
  char **own;
  size_t n_own;
  char *exec;
  bool block_shell;
  char *network;
  char *profile;
  char **deny;
  size_t n_deny;
  bool hide_home;
  char *view;
  bool trail; /* the policy keeps an audit trail: denials are recorded */
} hv_denial_rules;

/* The table from its JSON text; NULL for NULL or text that is not such
 * an object (the explanations then fall back to the facts alone). */
hv_denial_rules *hv_denial_rules_parse (const char *json);
void hv_denial_rules_free (hv_denial_rules *r);

enum hv_denial_kind
{
  HV_DENIAL_SYSCALL, /* seccomp: "denied" */
  HV_DENIAL_FILE,    /* Landlock: "landlock-denied" (execute, write, read) */
  HV_DENIAL_NET,     /* the egress table: "net-denied" */
  HV_DENIAL_DNS,     /* the resolver: "dns-refused" */
};

struct hv_denial_facts
{
  enum hv_denial_kind kind;
  const char *syscall;          /* SYSCALL: its name */
  const char *access, *path;    /* FILE: Landlock's blockers ("fs.execute", "fs.write_file"...), the path */
  const char *hint;             /* FILE: the rule the monitor's own annotation names, or NULL */
  const char *name;             /* NET: the first name whose answer held the address (or NULL); DNS: the name */
  const char *address;          /* NET */
  unsigned port;                /* NET */
  const char *protocol;         /* NET: "tcp", "udp", "icmp"... */
  const char *why;              /* DNS: the resolver's reason (egress_decide.h) */
  const char *type;             /* DNS: the query's type */
};

struct hv_denial_explained
{
  char *rule;
  char *allow;   /* "" when never */
  bool never;
  char *why_not; /* with never */
  char *caution; /* or NULL */
};

/* Fill *out (free it with hv_denial_explained_release).  r may be NULL. */
void hv_denial_explain (const hv_denial_rules *r, const struct hv_denial_facts *f, struct hv_denial_explained *out);
void hv_denial_explained_release (struct hv_denial_explained *e);

/* "rule", "allow", and "never"/"why_not", "caution" where set, as
 * members of an open record. */
void hv_denial_explained_put (yajl_gen g, const struct hv_denial_explained *e);

/* Both at once: explain f and put the members into the open record g. */
void hv_denial_explain_put (yajl_gen g, const hv_denial_rules *r, const struct hv_denial_facts *f);

/* A path as a policy writes it: "{project}/sub" under the project, "~/x"
 * under the home, else as it is (a new string). */
char *hv_denial_policy_path (const hv_denial_rules *r, const char *path);
#endif
