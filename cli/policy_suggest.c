#include "config.h"
#include "policy_suggest.h"

#include <fnmatch.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "block_match.h"
#include "policy_compile.h"
#include "run_ctx.h"

/* Where an entry goes, in the order the YAML prints them. */
enum section
{
  S_READ_WRITE,
  S_READ_ONLY,
  S_NET_ALLOW,
  S_ALLOW_EXEC,
  S_SYSCALL_ALLOW,
  S_N,
};

#define MAX_PROGS 4 /* program names kept per entry; the rest counted */

/* An entry, or a flag (value: what was refused, reason set). */
struct item
{
  enum section section;
  char *value;  /* the policy text (entries) or what was refused (flags) */
  char *reason; /* flags only */
  char *seen;   /* what the records said, e.g. "fs.write_file", "tcp 8443" */
  char *progs[MAX_PROGS];
  size_t n_progs, more_progs;
  uint64_t count;
  /* network only: a name whose lookup was refused and whose port no
   * connect showed (a bare name: TCP 443 and 80) */
  bool port_unseen;
};

struct items
{
  struct item *v;
  size_t n;
};

struct hv_suggest
{
  const hv_policy *base;
  char *base_ref;
  char *home;
  char *project;
  char *command;
  struct hv_block_matcher *blocks;
  struct items entries, flags;
  oci_strv losses; /* what the run says it did not record */
};

hv_suggest *
hv_suggest_new (const hv_policy *base, const char *base_ref, const char *home, hv_error **err)
{
  /* `extends:` is written from printable ASCII only, as every value. */
  for (const char *c = base_ref; *c; c++)
    if ((unsigned char) *c < 0x20 || (unsigned char) *c > 0x7e)
      {
        hv_error_set (err, 0, "the base policy's name or path \"%s\" holds control or non-ASCII characters: "
                              "give --base with a name or path without them",
                      base_ref);
        return NULL;
      }
  hv_suggest *s = xmalloc0 (sizeof (*s));
  s->base = base;
  s->base_ref = xstrdup (base_ref);
  s->home = home && home[0] == '/' ? xstrdup (home) : NULL;
  return s;
}

static void
items_free (struct items *l)
{
  for (size_t i = 0; i < l->n; i++)
    {
      free (l->v[i].value);
      free (l->v[i].reason);
      free (l->v[i].seen);
      for (size_t j = 0; j < l->v[i].n_progs; j++)
        free (l->v[i].progs[j]);
    }
  free (l->v);
}

void
hv_suggest_free (hv_suggest *s)
{
  if (s == NULL)
    return;
  items_free (&s->entries);
  items_free (&s->flags);
  oci_strv_free (&s->losses);
  hv_block_matcher_free (s->blocks);
  free (s->base_ref);
  free (s->home);
  free (s->project);
  free (s->command);
  free (s);
}

size_t
hv_suggest_entries (const hv_suggest *s)
{
  size_t n = 0;
  for (size_t i = 0; i < s->entries.n; i++)
    n += s->entries.v[i].count > 0;
  return n;
}

size_t
hv_suggest_flags (const hv_suggest *s)
{
  return s->flags.n;
}

/* --- text the records hold ---------------------------------------------- */

/* Printable ASCII: what a value may be written from (no escape can
 * change its meaning, no line break can end it). */
static bool
printable (const char *s)
{
  for (; *s; s++)
    if ((unsigned char) *s < 0x20 || (unsigned char) *s > 0x7e)
      return false;
  return true;
}

/* A name the policy language holds (policy_network.c's rule, checked
 * again here so that the suggestion always loads). */
static bool
valid_name (const char *n)
{
  size_t len = strlen (n), label = 0;
  if (len == 0 || len > 253)
    return false;
  for (const char *p = n; *p; p++)
    {
      char c = *p;
      if (c == '.')
        {
          if (label == 0)
            return false;
          label = 0;
          continue;
        }
      if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_'))
        return false;
      if (++label > 63)
        return false;
    }
  return label > 0;
}

static bool
valid_syscall (const char *n)
{
  if (n[0] == '\0' || strlen (n) > 64)
    return false;
  for (const char *p = n; *p; p++)
    if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '_'))
      return false;
  return true;
}

static const char *
str_member (yajl_val rec, const char *key)
{
  const char *path[] = { key, NULL };
  yajl_val v = yajl_tree_get (rec, path, yajl_t_string);
  return v ? YAJL_GET_STRING (v) : NULL;
}

static bool
int_member (yajl_val rec, const char *key, long long *out)
{
  const char *path[] = { key, NULL };
  yajl_val v = yajl_tree_get (rec, path, yajl_t_number);
  if (v == NULL || !YAJL_IS_INTEGER (v))
    return false;
  *out = YAJL_GET_INTEGER (v);
  return true;
}

/* Is path p equal to dir or below it? */
static bool
under (const char *p, const char *dir)
{
  if (dir == NULL)
    return false;
  size_t l = strlen (dir);
  while (l > 1 && dir[l - 1] == '/')
    l--;
  return strncmp (p, dir, l) == 0 && (p[l] == '\0' || p[l] == '/');
}

/* --- what is never suggested ----------------------------------------------- */

/* Files and directories of the home that the host user later executes or
 * sources (a shell's startup, a PATH directory, git's config, an
 * editor's), relative to $HOME: write access to any of them is an escape
 * the next time the user opens a terminal or runs the tool. */
static const char *const home_startup[] = {
  ".bashrc", ".bash_profile", ".bash_login", ".bash_logout", ".profile", ".zshrc", ".zshenv", ".zprofile",
  ".zlogin", ".zlogout", ".kshrc", ".mkshrc", ".cshrc", ".tcshrc", ".inputrc", ".pam_environment", ".xprofile",
  ".xinitrc", ".xsession", ".xsessionrc", ".gitconfig", ".vimrc", ".vim", ".emacs", ".emacs.d", ".config/fish",
  ".config/git", ".config/nvim", ".config/autostart", ".config/systemd", ".config/environment.d", ".local/bin",
  ".local/share/applications", ".cargo/bin", ".cargo/env", ".npm-global", ".npmrc", ".yarnrc", ".pyenv", ".rbenv",
  ".nvm", ".sdkman", ".deno/bin", ".bun/bin", "go/bin", "bin", ".ssh", ".gnupg", NULL,
};

/* Secrets by name, whatever the base hides: the default policy's list in
 * words (policies/default.yaml). */
static const char *const secret_dirs[] = { ".ssh", ".aws", ".gnupg", ".kube", ".docker", ".config/gh",
                                           ".azure", ".config/gcloud", NULL };
static const char *const secret_names[] = { "id_rsa",   "id_dsa",     "id_ecdsa",      "id_ed25519", "id_ecdsa_sk",
                                            "id_ed25519_sk", ".env",  ".env.*",        ".envrc",     ".netrc",
                                            ".git-credentials", ".npmrc", ".pypirc",   "*.pem",      "*.key",
                                            "*.p12",    "*.pfx",      "credentials",   "credentials.json",
                                            "shadow",   "gshadow",    NULL };
static const char *const secret_paths[] = { "/etc/shadow", "/etc/gshadow", "/etc/ssl/private", "/etc/ssh", NULL };

static const char *const engine_sockets[] = { "docker.sock", "podman.sock", "containerd.sock", "crio.sock",
                                              "buildkitd.sock", "dockershim.sock", NULL };
static const char *const engine_dirs[] = { "/run/containerd", "/var/run/containerd", "/run/podman",
                                           "/var/run/podman", "/run/docker", "/var/run/docker", "/var/lib/docker",
                                           "/var/lib/containers", "/run/crio", NULL };

static const char *const shells[] = { "sh",  "bash", "dash", "zsh",  "ksh",     "mksh", "pdksh", "ash",
                                      "csh", "tcsh", "fish", "yash", "busybox", "rbash", NULL };

static const char *
basename_of (const char *p)
{
  const char *slash = strrchr (p, '/');
  return slash ? slash + 1 : p;
}

static bool
is_secret_name (const char *p)
{
  const char *b = basename_of (p);
  for (size_t i = 0; secret_names[i]; i++)
    if (fnmatch (secret_names[i], b, FNM_PERIOD) == 0)
      return true;
  for (size_t i = 0; secret_paths[i]; i++)
    if (under (p, secret_paths[i]))
      return true;
  return false;
}

/* Why path must not be allowed (a static or allocated string in *why),
 * or false. */
static bool
path_refused (hv_suggest *s, const char *path, bool write, char **why)
{
  if (s->blocks == NULL && s->project)
    {
      struct hv_run_ctx ctx = { .project = s->project, .home = s->home };
      s->blocks = hv_block_matcher_new (s->base, &ctx);
    }
  /* The base hides it (or a directory above it). */
  if (s->blocks)
    {
      cleanup_free char *p = xstrdup (path);
      for (char *slash = NULL;;)
        {
          if (hv_block_matcher_hides (s->blocks, p))
            {
              *why = xasprintf ("a secret: the base policy hides %s (filesystem.block); a policy that extends it "
                                "cannot show it again",
                                p);
              return true;
            }
          slash = strrchr (p, '/');
          if (slash == NULL || slash == p)
            break;
          *slash = '\0';
        }
    }
  for (size_t i = 0; s->home && secret_dirs[i]; i++)
    {
      cleanup_free char *d = xasprintf ("%s/%s", s->home, secret_dirs[i]);
      if (under (path, d))
        {
          *why = xasprintf ("a secret: ~/%s holds credentials", secret_dirs[i]);
          return true;
        }
    }
  if (is_secret_name (path))
    {
      *why = xstrdup ("a secret: its name is one of the credentials the default policy hides");
      return true;
    }
  for (size_t i = 0; engine_sockets[i]; i++)
    if (strcmp (basename_of (path), engine_sockets[i]) == 0)
      {
        *why = xstrdup ("a container engine's socket: whoever reaches it runs containers as the engine (root)");
        return true;
      }
  for (size_t i = 0; engine_dirs[i]; i++)
    if (under (path, engine_dirs[i]))
      {
        *why = xasprintf ("a container engine's state (%s): whoever reaches it runs containers as the engine",
                          engine_dirs[i]);
        return true;
      }
  if (write && s->home)
    {
      if (strcmp (path, s->home) == 0)
        {
          *why = xstrdup ("the whole home: it holds the shell's startup files and toolchains the host user runs");
          return true;
        }
      for (size_t i = 0; home_startup[i]; i++)
        {
          cleanup_free char *d = xasprintf ("%s/%s", s->home, home_startup[i]);
          if (under (path, d) || under (d, path))
            {
              *why = xasprintf ("a home file the host user later executes or sources (~/%s): a write there runs "
                                "outside the sandbox",
                                home_startup[i]);
              return true;
            }
        }
    }
  return false;
}

/* --- items ------------------------------------------------------------------- */

static struct item *
find (struct items *l, enum section sec, const char *value, const char *reason)
{
  for (size_t i = 0; i < l->n; i++)
    if (l->v[i].section == sec && strcmp (l->v[i].value, value) == 0
        && (reason == NULL || strcmp (l->v[i].reason, reason) == 0))
      return &l->v[i];
  return NULL;
}

static void
note_prog (struct item *it, const char *prog)
{
  if (prog == NULL || prog[0] == '\0')
    return;
  for (size_t i = 0; i < it->n_progs; i++)
    if (strcmp (it->progs[i], prog) == 0)
      return;
  if (it->n_progs < MAX_PROGS)
    it->progs[it->n_progs++] = xstrdup (prog);
  else
    it->more_progs++;
}

static struct item *
add_item (struct items *l, enum section sec, const char *value, const char *reason, const char *seen,
          const char *prog, uint64_t count)
{
  struct item *it = find (l, sec, value, reason);
  if (it == NULL)
    {
      l->v = xrealloc (l->v, (l->n + 1) * sizeof (*l->v));
      it = &l->v[l->n++];
      memset (it, 0, sizeof (*it));
      it->section = sec;
      it->value = xstrdup (value);
      it->reason = reason ? xstrdup (reason) : NULL;
      it->seen = xstrdup (seen);
    }
  else if (strstr (it->seen, seen) == NULL && strlen (it->seen) < 200)
    {
      char *more = xasprintf ("%s, %s", it->seen, seen);
      free (it->seen);
      it->seen = more;
    }
  note_prog (it, prog);
  it->count += count;
  return it;
}

static void
flag (hv_suggest *s, const char *what, const char *reason, const char *seen, const char *prog)
{
  add_item (&s->flags, S_N, what, reason, seen, prog, 1);
}

/* --- records ------------------------------------------------------------------ */

static int
missing (const char *where, const char *event, const char *member, hv_error **err)
{
  return hv_error_set (err, 0, "%s: a \"%s\" record without \"%s\"", where, event, member);
}

/* A path in the policy's words: "{project}/..." inside the project. */
static char *
policy_path (const hv_suggest *s, const char *path)
{
  if (s->project && under (path, s->project))
    {
      const char *rest = path + strlen (s->project);
      while (*rest == '/')
        rest++;
      return *rest ? xasprintf ("{project}/%s", rest) : xstrdup ("{project}");
    }
  return xstrdup (path);
}

/* Text the policy language would read as something else: a glob, a
 * variable, a link-free absolute path's "..". */
static const char *
path_unwritable (const char *path)
{
  if (path[0] != '/')
    return "not an absolute path";
  if (!printable (path))
    return "it holds control or non-ASCII characters (or bytes the trail could not keep), which this suggestion "
           "does not write";
  if (strpbrk (path, "*?[]{}$\\") != NULL)
    return "it holds characters a policy path reads as a glob or a variable";
  if (strstr (path, "/../") || strstr (path, "/./") || strcmp (basename_of (path), "..") == 0
      || strcmp (basename_of (path), ".") == 0)
    return "it is not a plain path (\".\" or \"..\")";
  return NULL;
}

static int
on_landlock (hv_suggest *s, yajl_val rec, const char *where, hv_error **err)
{
  const char *access = str_member (rec, "access");
  const char *path = str_member (rec, "path");
  const char *comm = str_member (rec, "comm");
  const char *rule = str_member (rec, "rule");
  if (access == NULL)
    return missing (where, "landlock-denied", "access", err);
  if (path == NULL)
    return missing (where, "landlock-denied", "path", err);
  const char *bad = path_unwritable (path);
  if (bad)
    {
      flag (s, "a path", bad, access, comm);
      return 0;
    }
  bool exec = strcmp (access, "fs.execute") == 0;
  bool read = strncmp (access, "fs.read_", 8) == 0;
  cleanup_free char *why = NULL;
  if (path_refused (s, path, !exec && !read, &why))
    {
      flag (s, path, why, access, comm);
      return 0;
    }
  if (exec)
    {
      bool shell = false;
      for (size_t i = 0; shells[i] && !shell; i++)
        shell = strcmp (basename_of (path), shells[i]) == 0;
      if ((rule && strcmp (rule, "process.block_shell") == 0) || (shell && s->base->block_shell.value))
        {
          flag (s, path, "a shell: the base policy has block_shell, which a policy that extends it keeps", access,
                comm);
          return 0;
        }
      if (s->project && under (path, s->project))
        {
          flag (s, path,
                "a program in the project: under allow_exec or block_shell the project is noexec, so no entry can "
                "allow it",
                access, comm);
          return 0;
        }
      add_item (&s->entries, S_ALLOW_EXEC, path, NULL, access, comm, 1);
      return 0;
    }
  if (s->project && under (path, s->project) && (!s->base->project_writable.set || s->base->project_writable.value) && !read)
    {
      /* The project is writable: what refused it is a protect entry,
       * which extending cannot take back. */
      flag (s, path, "the base policy protects it (filesystem.protect), which a policy that extends it keeps", access,
            comm);
      return 0;
    }
  cleanup_free char *value = policy_path (s, path);
  add_item (&s->entries, read ? S_READ_ONLY : S_READ_WRITE, value, NULL, access, comm, 1);
  return 0;
}

static int
on_denied (hv_suggest *s, yajl_val rec, const char *where, hv_error **err)
{
  const char *name = str_member (rec, "syscall");
  const char *comm = str_member (rec, "comm");
  if (name == NULL)
    return missing (where, "denied", "syscall", err);
  if (!valid_syscall (name))
    {
      flag (s, "a system call", "its name is not one the policy language holds", "denied", comm);
      return 0;
    }
  for (size_t i = 0; i < s->base->syscall_deny.n; i++)
    if (strcmp (s->base->syscall_deny.v[i], name) == 0)
      {
        flag (s, name, "the base policy denies it by name (syscalls.deny), which a policy that extends it keeps",
              "denied", comm);
        return 0;
      }
  if (!hv_policy_denies_syscall (s->base, name))
    {
      flag (s, name,
            "denied for its arguments (TIOCSTI, a new user namespace...), which syscalls.allow does not change",
            "denied", comm);
      return 0;
    }
  add_item (&s->entries, S_SYSCALL_ALLOW, name, NULL, "denied", comm, 1);
  return 0;
}

/* A name or address with its port, as network.allow writes it. */
static void
add_net (hv_suggest *s, const char *host, long long port, const char *seen, bool is_name)
{
  char value[300];
  if (!is_name && strchr (host, ':'))
    snprintf (value, sizeof (value), "[%s]:%lld", host, port);
  else
    snprintf (value, sizeof (value), "%s:%lld", host, port);
  add_item (&s->entries, S_NET_ALLOW, value, NULL, seen, NULL, 1);
  /* The port is known now: the bare name (TCP 443 and 80) goes. */
  struct item *bare = is_name ? find (&s->entries, S_NET_ALLOW, host, NULL) : NULL;
  if (bare)
    bare->port_unseen = false, bare->count = 0;
}

static bool
valid_address (const char *a)
{
  if (a[0] == '\0' || strlen (a) > 45)
    return false;
  for (const char *p = a; *p; p++)
    if (!((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f') || (*p >= 'A' && *p <= 'F') || *p == '.'
          || *p == ':'))
      return false;
  return true;
}

static int
on_net_denied (hv_suggest *s, yajl_val rec, const char *where, hv_error **err)
{
  const char *dest = str_member (rec, "destination");
  const char *proto = str_member (rec, "protocol");
  long long port = 0;
  if (dest == NULL)
    return missing (where, "net-denied", "destination", err);
  if (proto == NULL)
    return missing (where, "net-denied", "protocol", err);
  if (!int_member (rec, "port", &port))
    return missing (where, "net-denied", "port", err);
  const char *path[] = { "names", NULL };
  yajl_val names = yajl_tree_get (rec, path, yajl_t_array);
  if (strcmp (proto, "tcp") != 0 || port < 1 || port > 65535)
    {
      cleanup_free char *seen = xasprintf ("%s %lld", printable (proto) ? proto : "?", port);
      flag (s, printable (dest) ? dest : "an address", "network.allow holds TCP only (not UDP, ICMP or QUIC)", seen,
            NULL);
      return 0;
    }
  cleanup_free char *seen = xasprintf ("connect tcp %lld", port);
  size_t named = 0;
  for (size_t i = 0; names && i < YAJL_GET_ARRAY (names)->len; i++)
    {
      yajl_val n = YAJL_GET_ARRAY (names)->values[i];
      if (!YAJL_IS_STRING (n))
        continue;
      const char *name = YAJL_GET_STRING (n);
      named++;
      if (!valid_name (name))
        flag (s, "a name", "not a name the policy language holds", seen, NULL);
      else
        add_net (s, name, port, seen, true);
    }
  if (named > 0)
    return 0;
  /* A learn run's sinkhole (runtime/egress/egress_learn.h) whose name
   * the resolver no longer remembered: the address leads nowhere. */
  if (strncmp (dest, "240.", 4) == 0)
    {
      flag (s, dest, "a learn-mode sinkhole whose name was not kept (run again with fewer names at once)", seen,
            NULL);
      return 0;
    }
  if (!valid_address (dest))
    flag (s, "an address", "not an address the policy language holds", seen, NULL);
  else
    add_net (s, dest, port, seen, false);
  return 0;
}

static int
on_dns_refused (hv_suggest *s, yajl_val rec, const char *where, hv_error **err)
{
  const char *name = str_member (rec, "name");
  const char *why = str_member (rec, "why");
  const char *type = str_member (rec, "type");
  if (name == NULL)
    return missing (where, "dns-refused", "name", err);
  cleanup_free char *seen = xasprintf ("lookup %s", type && printable (type) && strlen (type) < 16 ? type : "?");
  if (!valid_name (name))
    {
      flag (s, "a name", "not a name the policy language holds", seen, NULL);
      return 0;
    }
  if (why && strcmp (why, "denied by the policy") == 0)
    {
      flag (s, name, "the base policy denies it (network.deny), which wins over any allow", seen, NULL);
      return 0;
    }
  if (why && strcmp (why, "type not allowed") == 0)
    {
      flag (s, name, "a record type the resolver never answers (not A, AAAA or what a lookup needs)", seen, NULL);
      return 0;
    }
  /* A connect already showed its port: nothing more to add. */
  for (size_t i = 0; i < s->entries.n; i++)
    {
      const struct item *it = &s->entries.v[i];
      size_t l = strlen (name);
      if (it->section == S_NET_ALLOW && strncmp (it->value, name, l) == 0 && it->value[l] == ':')
        return 0;
    }
  struct item *it = add_item (&s->entries, S_NET_ALLOW, name, NULL, seen, NULL, 1);
  it->port_unseen = true;
  return 0;
}

static void
on_start (hv_suggest *s, yajl_val rec)
{
  const char *project = str_member (rec, "project");
  if (project && project[0] == '/' && s->project == NULL)
    s->project = xstrdup (project);
  const char *path[] = { "command", NULL };
  yajl_val cmd = yajl_tree_get (rec, path, yajl_t_array);
  if (cmd == NULL || s->command)
    return;
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream (&buf, &len);
  for (size_t i = 0; i < YAJL_GET_ARRAY (cmd)->len && i < 16; i++)
    if (YAJL_IS_STRING (YAJL_GET_ARRAY (cmd)->values[i]))
      fprintf (f, "%s%s", i ? " " : "", YAJL_GET_STRING (YAJL_GET_ARRAY (cmd)->values[i]));
  fclose (f);
  s->command = buf;
}

int
hv_suggest_add (hv_suggest *s, yajl_val rec, const char *where, hv_error **err)
{
  if (!YAJL_IS_OBJECT (rec))
    return hv_error_set (err, 0, "%s: not a JSON object", where);
  const char *event = str_member (rec, "event");
  if (event == NULL)
    return hv_error_set (err, 0, "%s: a record without \"event\"", where);
  if (strcmp (event, "start") == 0)
    on_start (s, rec);
  else if (strcmp (event, "landlock-denied") == 0)
    return on_landlock (s, rec, where, err);
  else if (strcmp (event, "denied") == 0)
    return on_denied (s, rec, where, err);
  else if (strcmp (event, "net-denied") == 0)
    return on_net_denied (s, rec, where, err);
  else if (strcmp (event, "dns-refused") == 0)
    return on_dns_refused (s, rec, where, err);
  else if (strcmp (event, "landlock-unrecorded") == 0)
    {
      const char *reason = str_member (rec, "reason");
      oci_strv_pushf (&s->losses, "Landlock's refusals (execs, writes) were not recorded: %s",
                      reason ? reason : "no reason given");
    }
  else if (strcmp (event, "dropped") == 0 || strcmp (event, "denials-suppressed") == 0)
    {
      const char *path[] = { "novelty_lost", NULL };
      yajl_val lost = yajl_tree_get (rec, path, yajl_t_any);
      if (strcmp (event, "dropped") == 0 || (lost && YAJL_IS_TRUE (lost)))
        oci_strv_push_unique (&s->losses, "some refusals were only counted, not recorded one by one: run again to "
                                          "see the rest");
    }
  return 0;
}

/* --- the YAML ---------------------------------------------------------------------- */

/* A comment's text: printable ASCII, anything else '?' (a line break
 * or a YAML line separator would end the comment). */
static void
put_comment_text (FILE *f, const char *t)
{
  for (; *t; t++)
    fputc ((unsigned char) *t >= 0x20 && (unsigned char) *t <= 0x7e ? *t : '?', f);
}

/* A value, double-quoted: only printable ASCII reaches here, so " and \
 * are all that need escaping. */
static void
put_quoted (FILE *f, const char *v)
{
  fputc ('"', f);
  for (; *v; v++)
    {
      if (*v == '"' || *v == '\\')
        fputc ('\\', f);
      fputc (*v, f);
    }
  fputc ('"', f);
}

static void
put_who (FILE *f, const struct item *it)
{
  if (it->n_progs)
    {
      fputs ("by ", f);
      for (size_t i = 0; i < it->n_progs; i++)
        {
          fputs (i ? ", " : "", f);
          put_comment_text (f, it->progs[i]);
        }
      if (it->more_progs)
        fprintf (f, " and %zu more", it->more_progs);
      fputs ("; ", f);
    }
  put_comment_text (f, it->seen);
  fprintf (f, ", %" PRIu64 " time%s", it->count, it->count == 1 ? "" : "s");
}

static void
put_section (FILE *f, const hv_suggest *s, enum section sec, const char *key, const char *indent)
{
  bool any = false;
  for (size_t i = 0; i < s->entries.n; i++)
    {
      const struct item *it = &s->entries.v[i];
      if (it->section != sec || it->count == 0)
        continue;
      if (!any)
        fprintf (f, "%s%s:\n", indent, key);
      any = true;
      fprintf (f, "%s  - ", indent);
      put_quoted (f, it->value);
      fputs ("   # ", f);
      put_who (f, it);
      if (it->port_unseen)
        fputs ("; no connect showed its port: TCP 443 and 80", f);
      fputc ('\n', f);
    }
}

static bool
has (const hv_suggest *s, enum section a, enum section b)
{
  for (size_t i = 0; i < s->entries.n; i++)
    if (s->entries.v[i].count && s->entries.v[i].section >= a && s->entries.v[i].section <= b)
      return true;
  return false;
}

char *
hv_suggest_yaml (const hv_suggest *s, const char *from)
{
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream (&buf, &len);
  fputs ("# Suggested by haven policy suggest: what one learn run was refused, allowed.\n# from: ", f);
  put_comment_text (f, from ? from : "records");
  fputc ('\n', f);
  if (s->command)
    {
      fputs ("# command: ", f);
      put_comment_text (f, s->command);
      fputc ('\n', f);
    }
  if (s->project)
    {
      fputs ("# project: ", f);
      put_comment_text (f, s->project);
      fputc ('\n', f);
    }
  for (size_t i = 0; i < s->losses.n; i++)
    {
      fputs ("# NOTE: ", f);
      put_comment_text (f, s->losses.v[i]);
      fputc ('\n', f);
    }
  fputs ("extends: ", f);
  put_quoted (f, s->base_ref);
  fputc ('\n', f);
  if (has (s, S_READ_WRITE, S_READ_ONLY))
    {
      fputs ("filesystem:\n", f);
      put_section (f, s, S_READ_WRITE, "read_write", "  ");
      put_section (f, s, S_READ_ONLY, "read_only", "  ");
    }
  if (has (s, S_NET_ALLOW, S_NET_ALLOW))
    {
      fputs ("network:\n", f);
      put_section (f, s, S_NET_ALLOW, "allow", "  ");
    }
  if (has (s, S_ALLOW_EXEC, S_ALLOW_EXEC))
    {
      fputs ("process:\n", f);
      put_section (f, s, S_ALLOW_EXEC, "allow_exec", "  ");
    }
  if (has (s, S_SYSCALL_ALLOW, S_SYSCALL_ALLOW))
    {
      fputs ("syscalls:\n", f);
      put_section (f, s, S_SYSCALL_ALLOW, "allow", "  ");
    }
  if (s->entries.n == 0 || !has (s, S_READ_WRITE, S_SYSCALL_ALLOW))
    fputs ("# Nothing refused that a policy may allow.\n", f);
  if (s->flags.n)
    {
      fputs ("\n# Not suggested (refused in the run, and kept refused):\n", f);
      for (size_t i = 0; i < s->flags.n; i++)
        {
          const struct item *it = &s->flags.v[i];
          fputs ("# - ", f);
          put_comment_text (f, it->value);
          fputs (": ", f);
          put_comment_text (f, it->reason);
          fputs (" (", f);
          put_who (f, it);
          fputs (")\n", f);
        }
    }
  fclose (f);
  return buf;
}
