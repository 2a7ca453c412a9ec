/* The contract between the policy layer and the runtime: what haven adds
 * to a config.json beside the runtime spec.  The runtime knows no
 * policies; everything a policy asks of it travels as one of these
 * annotations or mount options, written by policy/ and read back by
 * runtime/ (or, for the policy's own name, by haven-runc's filter in
 * cli/).  Both sides name them only through this header, so that a
 * name cannot drift between writer and reader.
 *
 * Each entry says, one line each, the value's grammar, which file writes
 * it and which file reads it.  The value is the config's: as trusted as
 * the rest of it (whoever writes a config can already bind the host's /
 * into a container), and every reader refuses what it cannot read
 * rather than dropping it. */
#ifndef HAVEN_ANNOTATIONS_H
#define HAVEN_ANNOTATIONS_H

/* --- annotations ------------------------------------------------------ */

/* grammar: a policy's name (what hv_policy_find finds) or file
 * writer:  the user (an engine's --annotation), and policy/policy_apply.c, which records the policy applied
 * reader:  cli/config_policy.c (haven-runc's filter tightens create with it, exec reloads it) */
#define HV_POLICY_ANNOTATION "run.haven.policy"

/* grammar: the name of the policy the config was compiled from ("" when it has none); for the record only
 * writer:  policy/policy_compile.c (haven run, haven policy compile)
 * reader:  none: people and tests (it is no request to apply a policy, which HV_POLICY_ANNOTATION is) */
#define HV_COMPILED_ANNOTATION "run.haven.compiled-from"

/* grammar: HV_CGROUP_IF_LIMITED, the only value that counts (any other means a cgroup as usual)
 * writer:  policy/policy_compile.c (haven run)
 * reader:  runtime/container_create.c (no cgroup when the config sets no limit and has a pid namespace) */
#define HV_CGROUP_ANNOTATION "run.haven.cgroup"
#define HV_CGROUP_IF_LIMITED "if-limited"

/* grammar: JSON {"read": [PATH...], "write": [PATH...], "exec": [PATH...], "bestEffort": BOOL}
 * writer:  policy/policy_compile.c (haven run), policy/policy_apply.c (engine configs under exec rules)
 * reader:  runtime/container_init.c and runtime/container_exec.c, parsed by runtime/landlock.c */
#define HV_LANDLOCK_ANNOTATION "run.haven.landlock"

/* grammar: JSON {"execute": ITEM, "write": ITEM}, ITEM the policy item a kind of refusal stands for
 * writer:  policy/policy_compile.c (haven run with an audit log; policy/landlock_audit_rules.c makes it)
 * reader:  runtime/monitor/container_monitor.c (runtime/monitor/landlock_audit.c records), runtime/container_init.c */
#define HV_LANDLOCK_AUDIT_ANNOTATION "run.haven.landlock.audit"

/* grammar: JSON, the table explaining denials (runtime/audit/include/denial_explain.h: project, home,
 *          block, own, exec, block_shell, network, profile, deny, hide_home, view)
 * writer:  policy/policy_compile.c (haven run with an audit log; policy/denial_rules.c makes it)
 * reader:  runtime/monitor/container_monitor.c (the monitor's denial records and the run's view) */
#define HV_DENIALS_ANNOTATION "run.haven.denials"

/* grammar: JSON, an OCI linux.seccomp object without a listener: a second filter stacked on the config's
 * writer:  policy/policy_apply.c (engine configs)
 * reader:  runtime/container_init.c and runtime/container_exec.c, parsed by runtime/process.c */
#define HV_SECCOMP_ANNOTATION "run.haven.seccomp"

/* grammar: HV_AUDIT_TRAIL_DEFAULT or an absolute path (the audit trail's file), reached through no link
 * writer:  policy/policy_apply.c (engine configs; a value the config has is kept)
 * reader:  runtime/monitor/container_monitor.c (starts the per-container monitor) */
#define HV_MONITOR_ANNOTATION "run.haven.audit"
#define HV_AUDIT_TRAIL_DEFAULT "default"

/* grammar: whole seconds in decimal, 1 to a year; needs HV_MONITOR_ANNOTATION
 * writer:  policy/policy_apply.c (engine configs: resources.timeout, the shorter of two policies')
 * reader:  runtime/monitor/container_monitor.c (the monitor kills init that long after create) */
#define HV_TIMEOUT_ANNOTATION "run.haven.timeout"

/* grammar: absolute host directories, one a line; needs HV_MONITOR_ANNOTATION
 * writer:  policy/policy_apply.c (engine configs: the projects policy/container_plan.c finds)
 * reader:  runtime/monitor/container_monitor.c (project_guard.h snapshots, the monitor's git check) */
#define HV_GIT_GUARD_ANNOTATION "run.haven.git-guard"

/* grammar: JSON {"dir": ABSOLUTE-PATH, "keys": ["SHA256:<43 base64 digits>", ...]}
 *          (runtime/monitor/ssh_agent_service.h says each member's rules)
 * writer:  policy/policy_compile.c (haven run: credentials.ssh_agent {keys: [...]})
 * reader:  runtime/monitor/ssh_agent_service.c (create binds the view's socket in dir; the monitor serves it,
 *          asking the agent at $SSH_AUTH_SOCK of create's environment) */
#define HV_SSH_AGENT_VIEW_ANNOTATION "run.haven.ssh-agent-view"
/* ... and the name of the view's socket in that dir. */
#define HV_SSH_AGENT_VIEW_SOCKET_NAME "agent.sock"
/* ... and the most keys "keys" holds (the policy refuses more, the runtime too). */
#define HV_SSH_AGENT_VIEW_MAX_KEYS 32

/* grammar: JSON, the egress rules of runtime/egress/include/egress_config.h
 * writer:  policy/policy_egress.c, for policy/policy_compile.c (connect "pasta") and policy/policy_apply.c ("engine")
 * reader:  runtime/egress/egress_sandbox.c (create: the table) and monitor_egress.c (the resolver), both
 *          through runtime/egress/egress_config.c; runtime/monitor/container_monitor.c (starts the monitor) */
#define HV_EGRESS_ANNOTATION "run.haven.egress"

/* grammar: JSON {"dir": ABSOLUTE-PATH, "project": PATH, "command": [ARG, ...], "haven_pid": N}
 * writer:  policy/policy_compile.c (haven run under a policy that asks: run_ctx's approvals_dir)
 * reader:  runtime/egress/egress_ask.c, for monitor_egress.c (the resolver's hold writes its requests in
 *          dir, session/approvals.h) */
#define HV_ASK_ANNOTATION "run.haven.ask"

/* grammar: JSON {"apis":[{"provider":"anthropic"|"openai"|"gemini","port":N,"auth":"x-api-key"|"bearer"|
 *          "goog-api-key"[,"key_file":ABSOLUTE HOST PATH]},...]}, at most one entry per provider; never a key
 * writer:  policy/policy_api.c, for policy/policy_compile.c (haven run: the credentials.api items whose key
 *          is set; no key_file, the key is in create's service_secrets) and policy/engine_gateway.c (engine
 *          configs: key_file, the file the runtime's registration names)
 * reader:  runtime/gateway/gateway_config.c, for runtime/gateway_sandbox.c (create: the listeners in the
 *          sandbox's network namespace, the keys) and runtime/monitor/monitor_gateway.c (serves them) */
#define HV_GATEWAY_ANNOTATION "run.haven.gateway"
/* The ports the policy layer gives each provider's listener, on 127.0.0.1 inside the sandbox. */
#define HV_GATEWAY_PORT_ANTHROPIC 8961
#define HV_GATEWAY_PORT_OPENAI 8962
#define HV_GATEWAY_PORT_GEMINI 8963
/* What the sandbox holds in the agent's key variable: not a secret (the gateway drops any credential
 * header the sandbox sends and sets the real one). */
#define HV_GATEWAY_PLACEHOLDER_KEY "haven-gateway-placeholder"

/* grammar: HV_NETWORK_NONE, the only value; any other is an error
 * writer:  policy/policy_apply.c (engine configs of a policy with network none)
 * reader:  runtime/netns_check.c (init's namespace has nothing but loopback after the engine's hooks) */
#define HV_NETWORK_ANNOTATION "run.haven.network"
#define HV_NETWORK_NONE "none"

/* grammar: JSON {"dir": ABSOLUTE-PATH, "hosts": [{"host": NAME, "path": PREFIX, "from": "token" | "host"}, ...]}
 *          (runtime/monitor/git_broker.h says each member's rules)
 * writer:  policy/policy_compile.c (haven run: credentials.git)
 * reader:  runtime/monitor/git_broker_config.c (create binds the broker's socket in dir; the monitor serves it) */
#define HV_GIT_CREDENTIALS_ANNOTATION "run.haven.git-credentials"
/* ... and the name of the broker's socket in that dir. */
#define HV_GIT_CREDENTIALS_SOCKET_NAME "credential.sock"

/* --- mount options ---------------------------------------------------- */

/* haven's own options in a mount's "options", never passed to the
 * kernel.  Their meaning is runtime/mounts.h's (struct hv_mount_opts);
 * an unknown one with the prefix is an error, so that a misspelt safety
 * option is never dropped.  All are read by runtime/mounts.c
 * (hv_mount_opts_parse). */
#define HV_MOUNT_OPT_PREFIX "x-haven."

/* grammar: the bare option: resolve source and destination through no symbolic link
 * writer:  policy/policy_compile.c, policy/policy_apply.c, policy/git_identity_mount.c, policy/offline.c */
#define HV_MOUNT_OPT_NOFOLLOW "x-haven.nofollow"

/* grammar: the bare option, with HV_MOUNT_OPT_NOFOLLOW: make a missing mount point
 * writer:  policy/policy_compile.c, policy/git_identity_mount.c */
#define HV_MOUNT_OPT_MKDIR "x-haven.mkdir"

/* grammar: the bare option: a missing source or destination skips the mount
 * writer:  policy/policy_compile.c */
#define HV_MOUNT_OPT_OPTIONAL "x-haven.optional"

/* grammar: the bare option, on a bind whose source is its destination: pin what is there
 * writer:  policy/policy_compile.c, policy/policy_apply.c (policy/container_git.c and container_plan.c read it back) */
#define HV_MOUNT_OPT_PIN "x-haven.pin"

/* grammar: the prefix, then PATH: a relative path of the new filesystem, mounted alone
 * writer:  policy/policy_compile.c (the home overlay's sub-directories) */
#define HV_MOUNT_OPT_SUBDIR "x-haven.subdir="

/* grammar: the prefix, then NAME:TEXT: a file NAME (one component) holding TEXT in a new tmpfs's root
 * writer:  policy/policy_apply.c (the hidden home's copy of the image's git identity) */
#define HV_MOUNT_OPT_FILE "x-haven.file="
#endif
