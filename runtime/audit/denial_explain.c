/* What refused a denial and what would allow it: denial_explain.h. */
#include "config.h"
#include "denial_explain.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yajl/yajl_tree.h>

#include "json_gen.h"
#include "utils.h"

static char *
str_of (yajl_val root, const char *key)
{
  const char *path[] = { key, NULL };
  yajl_val v = yajl_tree_get (root, path, yajl_t_string);
  return v ? xstrdup (YAJL_GET_STRING (v)) : NULL;
}

static bool
bool_of (yajl_val root, const char *key)
{
  const char *path[] = { key, NULL };
  yajl_val v = yajl_tree_get (root, path, yajl_t_any);
  return v && YAJL_IS_TRUE (v);
}

static char **
strv_of (yajl_val root, const char *key, size_t *n)
{
  const char *path[] = { key, NULL };
  yajl_val v = yajl_tree_get (root, path, yajl_t_array);
  *n = 0;
  if (v == NULL || v->u.array.len == 0)
    return NULL;
  char **out = xmalloc0 (v->u.array.len * sizeof (*out));
  for (size_t i = 0; i < v->u.array.len; i++)
    if (YAJL_IS_STRING (v->u.array.values[i]))
      out[(*n)++] = xstrdup (YAJL_GET_STRING (v->u.array.values[i]));
  return out;
}

hv_denial_rules *
hv_denial_rules_parse (const char *json)
{
  if (json == NULL)
    return NULL;
  yajl_val root = yajl_tree_parse (json, NULL, 0);
  if (root == NULL || !YAJL_IS_OBJECT (root))
    {
      yajl_tree_free (root);
      return NULL;
    }
  hv_denial_rules *r = xmalloc0 (sizeof (*r));
  r->project = str_of (root, "project");
  r->home = str_of (root, "home");
  r->block = strv_of (root, "block", &r->n_block);
  r->own = strv_of (root, "own", &r->n_own);
  r->exec = str_of (root, "exec");
  r->block_shell = bool_of (root, "block_shell");
  r->network = str_of (root, "network");
  r->profile = str_of (root, "profile");
  r->deny = strv_of (root, "deny", &r->n_deny);
  r->hide_home = bool_of (root, "hide_home");
  r->view = str_of (root, "view");
  r->trail = bool_of (root, "trail");
  yajl_tree_free (root);
  return r;
}

static void
strv_free (char **v, size_t n)
{
  for (size_t i = 0; i < n; i++)
    free (v[i]);
  free (v);
}

void
hv_denial_rules_free (hv_denial_rules *r)
{
  if (r == NULL)
    return;
  free (r->project);
  free (r->home);
  strv_free (r->block, r->n_block);
  strv_free (r->own, r->n_own);
  free (r->exec);
  free (r->network);
  free (r->profile);
  strv_free (r->deny, r->n_deny);
  free (r->view);
  free (r);
}

/* path is dir or below it ("/a/b" is below "/a", "/ab" is not). */
static bool
below (const char *path, const char *dir)
{
  if (dir == NULL || dir[0] == '\0')
    return false;
  size_t n = strlen (dir);
  while (n > 1 && dir[n - 1] == '/')
    n--;
  return strncmp (path, dir, n) == 0 && (path[n] == '\0' || path[n] == '/' || (n == 1 && dir[0] == '/'));
}

char *
hv_denial_policy_path (const hv_denial_rules *r, const char *path)
{
  if (r && below (path, r->project))
    return xasprintf ("{project}%s", path + strlen (r->project));
  if (r && r->home && strcmp (r->home, "/") != 0 && below (path, r->home))
    return xasprintf ("~%s", path + strlen (r->home));
  return xstrdup (path);
}

/* A filesystem.block glob against a path: "*" and "?" within a name,
 * "**" any number of names ("a/ ** /b" is also "a/b").  Patterns are the
 * policy's (a few stars each): the recursion is shallow. */
static bool
glob_match (const char *p, const char *s)
{
  for (;; p++, s++)
    {
      if (p[0] == '*' && p[1] == '*')
        {
          const char *rest = p + 2;
          if (*rest == '\0')
            return true;
          if (*rest == '/')
            rest++;
          for (const char *t = s;; t++)
            {
              if ((t == s || t[-1] == '/') && glob_match (rest, t))
                return true;
              if (*t == '\0')
                return false;
            }
        }
      if (*p == '*')
        {
          for (const char *t = s;; t++)
            {
              if (glob_match (p + 1, t))
                return true;
              if (*t == '\0' || *t == '/')
                return false;
            }
        }
      if (*p == '\0')
        return *s == '\0';
      if (*p == '?' ? (*s == '\0' || *s == '/') : *p != *s)
        return false;
    }
}

/* The pattern covers the path: the path itself, or something in it. */
static bool
covers (const char *pattern, const char *path)
{
  if (glob_match (pattern, path))
    return true;
  /* Under a blocked directory: any of the path's parents matches. */
  size_t n = strlen (path);
  cleanup_free char *parent = xstrdup (path);
  for (size_t i = n; i-- > 1;)
    if (parent[i] == '/')
      {
        parent[i] = '\0';
        if (glob_match (pattern, parent))
          return true;
      }
  return false;
}

/* The filesystem.block entry hiding path, or NULL ("!" entries except). */
static const char *
secret_of (const hv_denial_rules *r, const char *path)
{
  if (r == NULL || path == NULL || path[0] != '/')
    return NULL;
  const char *hit = NULL;
  for (size_t i = 0; i < r->n_block && hit == NULL; i++)
    if (r->block[i][0] != '!' && covers (r->block[i], path))
      hit = r->block[i];
  if (hit == NULL)
    return NULL;
  for (size_t i = 0; i < r->n_block; i++)
    if (r->block[i][0] == '!' && glob_match (r->block[i] + 1, path))
      return NULL;
  return hit;
}

static bool
own_file (const hv_denial_rules *r, const char *path)
{
  for (size_t i = 0; r && path && i < r->n_own; i++)
    if (below (path, r->own[i]))
      return true;
  return false;
}

static bool
is_shell (const char *path)
{
  static const char *const shells[] = { "sh",   "bash", "dash", "zsh",     "ksh",   "mksh", "fish",
                                        "csh",  "tcsh", "ash",  "busybox", "rbash", NULL };
  const char *base = strrchr (path, '/');
  base = base ? base + 1 : path;
  for (size_t i = 0; shells[i]; i++)
    if (strcmp (base, shells[i]) == 0)
      return true;
  return false;
}

/* A YAML flow scalar: plain where that reads the same, else double-quoted
 * with JSON's escapes (YAML's double-quoted style accepts them). */
static char *
yaml_scalar (const char *s)
{
  bool plain = s[0] != '\0' && (s[0] == '/' || (s[0] >= 'a' && s[0] <= 'z') || (s[0] >= 'A' && s[0] <= 'Z')
                                || (s[0] == '~' && s[1] == '/'));
  for (const char *c = s; plain && *c; c++)
    plain = (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') || *c == '/'
            || *c == '.' || *c == '_' || *c == '-' || *c == '+' || *c == '~';
  if (plain && strcmp (s, "true") != 0 && strcmp (s, "false") != 0 && strcmp (s, "null") != 0)
    return xstrdup (s);
  size_t n = strlen (s);
  char *out = xmalloc0 (n * 6 + 3), *o = out;
  *o++ = '"';
  for (const unsigned char *c = (const unsigned char *) s; *c; c++)
    {
      if (*c == '"' || *c == '\\')
        {
          *o++ = '\\';
          *o++ = (char) *c;
        }
      else if (*c < 0x20 || *c == 0x7f)
        o += sprintf (o, "\\x%02x", *c);
      else
        *o++ = (char) *c;
    }
  *o++ = '"';
  return out;
}

/* "KEY: {SUB: [VALUE]}" */
static char *
flow (const char *key, const char *sub, const char *value)
{
  cleanup_free char *v = yaml_scalar (value);
  return xasprintf ("%s: {%s: [%s]}", key, sub, v);
}

static void
set (struct hv_denial_explained *out, char *rule, char *allow)
{
  out->rule = rule;
  out->allow = allow;
}

static void
never (struct hv_denial_explained *out, char *rule, char *why_not)
{
  out->rule = rule;
  out->allow = xstrdup ("");
  out->never = true;
  out->why_not = why_not;
}

/* Arguments, not the call, are what the agent profile refuses of these:
 * a syscalls.allow entry would not change that. */
static const char *
refused_by_argument (const char *name)
{
  static const struct
  {
    const char *name, *what;
  } calls[] = {
    { "clone", "a new user namespace" },       { "clone3", "new namespaces" },
    { "unshare", "new namespaces" },           { "ioctl", "TIOCSTI and TIOCLINUX (typing into the terminal)" },
    { "memfd_create", "an executable memory file" }, { "socket", "a packet socket" },
    /* Only their set-user-ID and set-group-ID modes (policy_compile.c). */
    { "open", "a set-user-ID or set-group-ID file" },     { "openat", "a set-user-ID or set-group-ID file" },
    { "creat", "a set-user-ID or set-group-ID file" },    { "chmod", "a set-user-ID or set-group-ID file" },
    { "fchmod", "a set-user-ID or set-group-ID file" },   { "fchmodat", "a set-user-ID or set-group-ID file" },
    { "fchmodat2", "a set-user-ID or set-group-ID file" }, { "mknod", "a set-user-ID or set-group-ID file" },
    { "mknodat", "a set-user-ID or set-group-ID file" },
  };
  for (size_t i = 0; i < sizeof (calls) / sizeof (calls[0]); i++)
    if (strcmp (calls[i].name, name) == 0)
      return calls[i].what;
  return NULL;
}

static void
explain_syscall (const hv_denial_rules *r, const struct hv_denial_facts *f, struct hv_denial_explained *out)
{
  const char *name = f->syscall && f->syscall[0] ? f->syscall : "?";
  for (size_t i = 0; r && i < r->n_deny; i++)
    if (strcmp (r->deny[i], name) == 0)
      {
        never (out, xasprintf ("syscalls.deny: %s", name),
               xasprintf ("this policy denies %s by name, and a deny wins over any allow in a policy that "
                          "extends it",
                          name));
        return;
      }
  const char *profile = r && r->profile ? r->profile : "agent";
  const char *arg = refused_by_argument (name);
  if (arg)
    {
      never (out, xasprintf ("syscalls.profile: %s (%s with arguments for %s)", profile, name, arg),
             xasprintf ("the %s profile refuses %s only where it would make %s, an escape from the sandbox; no "
                        "policy line lifts that",
                        profile, name, arg));
      return;
    }
  set (out, xasprintf ("syscalls.profile: %s", profile), flow ("syscalls", "allow", name));
  out->caution = xasprintf ("the %s profile refuses %s because it can reach beyond the sandbox (the host's "
                            "kernel, other processes); allow it only for a tool that needs it",
                            profile, name);
}

static void
explain_file (const hv_denial_rules *r, const struct hv_denial_facts *f, struct hv_denial_explained *out)
{
  const char *access = f->access ? f->access : "";
  const char *path = f->path ? f->path : "";
  cleanup_free char *shown = hv_denial_policy_path (r, path);
  const char *secret = secret_of (r, path);
  if (secret)
    {
      cleanup_free char *entry = hv_denial_policy_path (r, secret);
      never (out, xasprintf ("filesystem.block: %s", entry),
             xasprintf ("%s is a secret this policy hides: a line that shows it would hand it to the agent; "
                        "copy what the task needs yourself, or lend it through credentials: (ssh_agent, git, "
                        "api), which never show it",
                        shown));
      return;
    }
  if (own_file (r, path))
    {
      never (out, xstrdup ("haven's own files"),
             xasprintf ("%s is haven's (its state, trail, approvals or configuration): the sandbox never reads "
                        "or writes it, or it could shape its own record and policy",
                        shown));
      return;
    }
  if (strcmp (access, "fs.execute") == 0)
    {
      if (r && below (path, r->project))
        {
          never (out, xstrdup (r->exec ? r->exec : "process.allow_exec"),
                 xasprintf ("%s is in the project, which the agent can write: under allow_exec or block_shell "
                            "nothing there runs, named or not; run it through an allowed interpreter",
                            shown));
          return;
        }
      bool shell = is_shell (path) && (r == NULL || r->block_shell);
      const char *rule = shell ? "process.block_shell" : r && r->exec ? r->exec : f->hint ? f->hint : "process.allow_exec";
      set (out, xstrdup (rule), flow ("process", "allow_exec", path));
      if (shell)
        out->caution = xasprintf ("%s is a shell: allowing it defeats process.block_shell (anything the agent "
                                  "writes can then be run as a script)",
                                  path);
      return;
    }
  if (strncmp (access, "fs.read", 7) == 0)
    {
      if (r && r->hide_home && r->home && below (path, r->home))
        {
          set (out, xstrdup ("filesystem.hide_home"), flow ("filesystem", "home_allow", shown));
          return;
        }
      set (out, xstrdup (f->hint ? f->hint : "filesystem.read_only"), flow ("filesystem", "read_only", shown));
      return;
    }
  if (r && below (path, r->project))
    {
      never (out, xstrdup ("filesystem.protect"),
             xasprintf ("%s stays read-only in the project: the host's own tools obey it (git's hooks and config, "
                        ".env files), so what the agent wrote there would run outside the sandbox",
                        shown));
      return;
    }
  set (out, xstrdup (f->hint ? f->hint : "filesystem.read_write"), flow ("filesystem", "read_write", shown));
}

static void
explain_net (const hv_denial_rules *r, const struct hv_denial_facts *f, struct hv_denial_explained *out)
{
  const char *proto = f->protocol ? f->protocol : "tcp";
  if (strcmp (proto, "tcp") != 0)
    {
      never (out, xasprintf ("network.allow (TCP only)"),
             xasprintf ("policies allow TCP only: %s leaves the sandbox to nowhere but haven's own resolver", proto));
      return;
    }
  /* Only an allowlist has an egress table, whose refusals these are. */
  (void) r;
  cleanup_free char *entry = NULL;
  if (f->name && f->name[0])
    entry = f->port == 443 || f->port == 80 ? xstrdup (f->name) : xasprintf ("%s:%u", f->name, f->port);
  else if (f->address && strchr (f->address, ':'))
    entry = xasprintf ("[%s]:%u", f->address, f->port);
  else
    entry = xasprintf ("%s:%u", f->address ? f->address : "?", f->port);
  set (out, xstrdup ("network.allow"), flow ("network", "allow", entry));
}

static void
explain_dns (const hv_denial_rules *r, const struct hv_denial_facts *f, struct hv_denial_explained *out)
{
  (void) r;
  const char *name = f->name ? f->name : "?";
  const char *why = f->why ? f->why : "";
  if (strcmp (why, "denied by the policy") == 0)
    {
      never (out, xasprintf ("network.deny: %s", name),
             xasprintf ("this policy denies %s by name, and a deny wins over any allow in a policy that extends it",
                        name));
      return;
    }
  if (strcmp (why, "type not allowed") == 0)
    {
      never (out, xasprintf ("network.allow (DNS type %s)", f->type ? f->type : "?"),
             xasprintf ("haven's resolver answers a listed name's A and AAAA queries only: %s records are not in "
                        "the policy language",
                        f->type ? f->type : "other"));
      return;
    }
  set (out, xstrdup ("network.allow"), flow ("network", "allow", name));
}

void
hv_denial_explain (const hv_denial_rules *r, const struct hv_denial_facts *f, struct hv_denial_explained *out)
{
  memset (out, 0, sizeof (*out));
  switch (f->kind)
    {
    case HV_DENIAL_SYSCALL:
      explain_syscall (r, f, out);
      break;
    case HV_DENIAL_FILE:
      explain_file (r, f, out);
      break;
    case HV_DENIAL_NET:
      explain_net (r, f, out);
      break;
    case HV_DENIAL_DNS:
      explain_dns (r, f, out);
      break;
    }
}

void
hv_denial_explained_release (struct hv_denial_explained *e)
{
  free (e->rule);
  free (e->allow);
  free (e->why_not);
  free (e->caution);
  memset (e, 0, sizeof (*e));
}

void
hv_denial_explained_put (yajl_gen g, const struct hv_denial_explained *e)
{
  jg_kv_utf8 (g, "rule", e->rule ? e->rule : "");
  jg_kv_utf8 (g, "allow", e->allow ? e->allow : "");
  if (e->never)
    {
      jg_str (g, "never");
      yajl_gen_bool (g, true);
      jg_kv_utf8 (g, "why_not", e->why_not ? e->why_not : "");
    }
  if (e->caution)
    jg_kv_utf8 (g, "caution", e->caution);
}

void
hv_denial_explain_put (yajl_gen g, const hv_denial_rules *r, const struct hv_denial_facts *f)
{
  struct hv_denial_explained e;
  hv_denial_explain (r, f, &e);
  hv_denial_explained_put (g, &e);
  hv_denial_explained_release (&e);
}
