/* Haven policies: what an agent may read, write, execute and reach.
 *
 * A policy is a YAML file (schema in policies/README.md).  It is parsed
 * with every error naming file:line:column, layered with `extends`, and
 * compiled into an OCI config.json (policy_compile.c). */
#ifndef HAVEN_POLICY_H
#define HAVEN_POLICY_H

#include <stdbool.h>
#include <stdint.h>

#include "error.h"
#include "haven_annotations.h"
#include "oci_spec.h"
#include "policy_network.h"

/* network.ask_timeout: unanswered this long, a held name is denied. */
#define HV_POLICY_ASK_TIMEOUT_DEFAULT_S 30
#define HV_POLICY_ASK_TIMEOUT_MAX_S 600

enum hv_net_mode
{
  HV_NET_UNSET,
  HV_NET_NONE,      /* a private network namespace with only loopback */
  HV_NET_OPEN,      /* the host's network */
  HV_NET_ALLOWLIST, /* egress only to net_allow minus net_deny (fails closed: loopback only until enforced) */
};

typedef struct
{
  char *path;
  uint64_t size; /* bytes, 0 = kernel default */
} hv_tmpfs;

/* How a home_allow entry may be written (policies/README.md). */
enum hv_home_write
{
  HV_HOME_COPY,      /* copy-on-write: writes go to a per-project overlay, never the real directory */
  HV_HOME_READ_ONLY, /* visible, read-only */
  HV_HOME_DIRECT,    /* the real directory, writable, noexec, `protect` sub-paths read-only */
  HV_HOME_DATA,      /* copy-on-write, but for `data` sub-paths (real, writable, noexec) and
                        `private` ones (the project's own, the real ones never shown) */
};

typedef struct
{
  enum hv_home_write write;
  oci_strv protect; /* relative to the entry (direct only) */
  /* write: data only, relative to the entry; {project_dashed} in them is
   * the project's path with every character but a letter or a digit
   * made '-' (hv_project_dashed). */
  oci_strv data;
  oci_strv own; /* the policy's `private` */
  /* Files the host's tool obeys (relative to the entry; none: the entry
   * itself), and the keys in them whose values it runs: a run is refused
   * when such a value names a path the sandbox can write
   * (session/home_commands.c). */
  oci_strv settings;
  oci_strv commands;
  /* A copy-on-write .json file's members that are objects keyed by
   * project path: the project's copy keeps its own keys only
   * (session/home_copy_filter.c). */
  oci_strv per_project;
} hv_home_access;

/* A secret the sandbox is given from the host (env.set_from_file,
 * env.set_from_env, credentials.git), or one kept from it
 * (credentials.api): read at each run by the session layer
 * (session/run_credentials.c), never by the policy compiler. */
typedef struct
{
  char *name;     /* env: the variable in the sandbox; git, api: the host name */
  char *file;     /* read from this file (~/ is the caller's home), or NULL */
  char *host_var; /* read from this host variable, or NULL */
  char *username; /* git only (default x-access-token) */
  char *where;    /* "policy-file:line:column", for errors */
  char *path;     /* git only: the repository path prefix the token is for, or NULL: any */
  bool from_host; /* git only: the host's own `git credential fill` answers (no file, no variable) */
} hv_secret_source;

/* credentials.api: a model API's key, kept on haven's side by its gateway
 * (policy_api.h); the sandbox gets a placeholder and the gateway's URL. */
typedef struct
{
  hv_secret_source key; /* name: the provider's host; file or host_var (username NULL) */
  char *provider;       /* "anthropic", "openai", "gemini" (gateway_route.c's names) */
  char *auth;           /* how the gateway sends it: "x-api-key", "bearer", "goog-api-key" */
} hv_api_credential;

typedef struct
{
  char *name;
  char *description;
  char *file; /* where it was loaded from */
  /* What hv_policy_load finds it by again (exec reloads the policy a
   * container was created under): the name it was given, or the absolute
   * path of the file it was given, whatever `name` the file declares. */
  char *reload_as;
  oci_strv files; /* every file read for it: the policy and its `extends` chain */

  /* filesystem */
  oci_strv read_only;  /* visible, read-only (default: the whole host) */
  oci_strv read_write; /* writable besides the project */
  oci_strv block;      /* hidden: globs, ~ expands to $HOME */
  oci_strv protect;    /* read-only inside the project (relative paths) */
  oci_opt_bool hide_home;
  oci_strv home_allow; /* kept visible when the home is hidden */
  hv_home_access *home_access; /* how each home_allow entry is writable (same index) */
  oci_opt_bool project_writable;
  /* filesystem.project_links: refuse (true) removes, after a haven run,
   * the symbolic links it left in the project that lead outside it;
   * report (false, the default) lists them (session/project_links.h). */
  oci_opt_bool refuse_project_links;
  size_t n_tmpfs;
  hv_tmpfs *tmpfs;

  /* network */
  enum hv_net_mode net_mode;
  hv_net_rules net_allow; /* policy_network.h; lists add up through `extends` */
  hv_net_rules net_deny;  /* wins over net_allow */
  /* network.ask: names held by the resolver until a person answers
   * (session/approvals.h); network.mode: ask (net_ask_all, with net_mode
   * HV_NET_ALLOWLIST): every name no allow rule lists asks.  Deny wins
   * over ask, allow needs no asking.  Lists add up through `extends`. */
  hv_net_rules net_ask;
  oci_opt_bool net_ask_all;
  char *net_ask_all_where; /* "file:line:column" of `mode: ask` */
  oci_opt_u64 net_ask_timeout_s; /* unset: HV_POLICY_ASK_TIMEOUT_DEFAULT_S */
  /* The approved file merged into net_allow (hv_policy_merge_approved),
   * or NULL: the rules whose `where` starts with it came from there. */
  char *approved_file;

  /* Cautions that do not make the policy invalid ("file:line:column: ..."),
   * for `haven policy check` and `explain`. */
  oci_strv warnings;

  /* process */
  oci_strv allow_exec;
  oci_opt_bool block_shell;
  oci_strv capabilities;

  /* syscalls */
  char *syscall_profile; /* "agent" (default), "none" */
  oci_strv syscall_allow, syscall_deny;

  /* resources */
  oci_opt_u64 memory, pids, nofile, timeout_s;
  oci_opt_u64 cpus_milli; /* 1.5 cpus = 1500 */
  /* resources.containers: limits for engine containers only (cgroups
   * always exist there); the strictest of these, the ones above and the
   * engine's own applies. */
  oci_opt_u64 container_memory, container_pids, container_cpus_milli;
  /* "75%": the value above is a percentage (1-100) of the host's memory
   * or CPUs, worked out at create (policy/host_share.h). */
  bool container_memory_pct, container_cpus_pct;

  /* env */
  oci_strv env_pass, env_deny;
  /* env.containers.pass: also passed in engine containers (what the
   * engine passes is configuration someone wrote for the container:
   * containerEnv, -e, compose's environment), never by haven run. */
  oci_strv env_containers_pass;
  oci_kv_list env_set;
  size_t n_env_from;
  hv_secret_source *env_from; /* env.set_from_file and env.set_from_env */

  /* credentials */
  oci_opt_bool ssh_agent; /* forward $SSH_AUTH_SOCK to HV_SSH_AGENT_SOCKET */
  char *ssh_agent_where;  /* "file:line:column" of ssh_agent, for errors */
  /* credentials.ssh_agent: {keys: [...]}: only a view of the agent with
   * these keys (HV_SSH_AGENT_VIEW_DIR): each a "SHA256:..." fingerprint or
   * the path (absolute or ~/...) of a public key file, read at each run;
   * ssh_agent_keys_where[i] is where keys[i] was written.  Empty with
   * ssh_agent true: the whole agent. */
  oci_strv ssh_agent_keys, ssh_agent_keys_where;
  size_t n_git_creds;
  hv_secret_source *git_creds; /* credentials.git: a token per host */
  size_t n_api_creds;
  hv_api_credential *api_creds; /* credentials.api: at most one per provider */

  /* audit */
  char *audit_log;
  /* haven run --learn (session/run_learn.h), never a policy file's: the
   * resolver answers refused names with sinkholes (egress_config.h). */
  bool learn;
  /* learn over a base of network none: the run is an allowlist of
   * nothing instead (session/run_learn.c says why that widens nothing);
   * the offline environment of none stays (offline.c). */
  bool learn_closed;
  char *audit_log_where; /* "file:line:column" of audit.log, for errors */

  /* kubernetes.service_account_token: true leaves the token kubelet
   * mounts into every pod visible in engine containers; false or unset
   * hides it (k8s_token.h). */
  oci_opt_bool k8s_service_account_token;

  /* kernel features that may be missing without refusing to run */
  oci_strv best_effort;
} hv_policy;

/* The best_effort entries haven knows: "landlock" (run where the kernel
 * has no Landlock) and the weaker forms a run without namespaces may
 * take (session/direct_plan.h's HV_WEAKER_*; policies/README.md,
 * "Without namespaces").  What an entry accepts, or NULL for an unknown
 * one; the names, comma-separated (free it). */
const char *hv_policy_best_effort_what (const char *entry);
char *hv_policy_best_effort_names (void);

/* The model's own functions (policy.c); loading is policy_load.h,
 * parsing policy_parse.h. */
void hv_policy_free (hv_policy *p);
void hv_policy_free_fields (hv_policy *p);
/* Is this the name of a shell (sh, bash, zsh, ...)? */
bool hv_policy_is_shell_name (const char *name);

/* Where the sandbox finds what credentials: gives it. */
#define HV_SSH_AGENT_SOCKET "/run/haven/ssh-agent.sock"
/* The git credential broker's directory, bound read-only (nothing in the
 * sandbox may replace the socket), so not /run/haven/git, where the
 * identity's files are bound (git_identity_mount.h), and its socket
 * (runtime/monitor/git_broker.h). */
#define HV_GIT_CREDENTIALS_DIR "/run/haven/git-credentials"
#define HV_GIT_CREDENTIALS_SOCKET HV_GIT_CREDENTIALS_DIR "/" HV_GIT_CREDENTIALS_SOCKET_NAME
/* The restricted ssh-agent view's directory (the run's own, holding only
 * the view's socket) and the socket SSH_AUTH_SOCK names. */
#define HV_SSH_AGENT_VIEW_DIR "/run/haven/ssh-agent"
#define HV_SSH_AGENT_VIEW_SOCKET HV_SSH_AGENT_VIEW_DIR "/" HV_SSH_AGENT_VIEW_SOCKET_NAME
#define HV_SECRET_MAX_SIZE (64u << 10) /* bytes of a token file */

void hv_secret_source_free (hv_secret_source *s);
void hv_api_credential_free (hv_api_credential *c);

/* Bounds of policy values.  Values outside them are errors, never
 * clamped or dropped (policies/README.md, "How policies are read"). */
#define HV_POLICY_MAX_TIMEOUT_S (30u * 24 * 3600) /* 30 days: fits the runtime's unsigned timeout */
#define HV_POLICY_MAX_PIDS 4194304ULL             /* the kernel's PID_MAX_LIMIT */
#define HV_POLICY_MAX_NOFILE (1ULL << 30)         /* above any fs.nr_open a kernel accepts */
#define HV_POLICY_MAX_CPUS 4096
#define HV_POLICY_MAX_DEPTH 64                    /* nesting of mappings and lists */
#define HV_POLICY_MAX_FILE_SIZE (1u << 20)        /* bytes of one policy file */

static inline void
cleanup_policyp (hv_policy **p)
{
  hv_policy_free (*p);
}
#define cleanup_policy __attribute__ ((cleanup (cleanup_policyp)))
#endif
