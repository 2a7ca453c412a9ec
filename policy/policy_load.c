/* Finding policies by name, `extends` layering, validation. */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <libgen.h>
#include <stdlib.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "file_read.h"
#include "policy_api.h"
#include "policy_load.h"
#include "policy_parse.h"
#include "self_exe.h"
#include "utils.h"

#ifndef HAVEN_POLICY_DIR
#define HAVEN_POLICY_DIR "/usr/local/share/haven/policies"
#endif

char **
hv_policy_search_path (void)
{
  char **dirs = xmalloc0 (16 * sizeof (char *));
  size_t n = 0;
  const char *env = getenv ("HAVEN_POLICY_PATH");
  if (env && env[0])
    {
      cleanup_free char *copy = xstrdup (env);
      char *save = NULL;
      for (char *d = strtok_r (copy, ":", &save); d && n < 8; d = strtok_r (NULL, ":", &save))
        dirs[n++] = xstrdup (d);
    }
  const char *home = getenv ("HOME");
  if (home && home[0])
    dirs[n++] = xasprintf ("%s/.config/haven/policies", home);
  dirs[n++] = xstrdup ("/etc/haven/policies");
  /* A build tree: policies/ next to the binary (where it was run from,
   * also after the re-exec that protects it: self_exe.h). */
  cleanup_free char *self = hv_self_exe_path ();
  if (self && strchr (self, '/') && !str_has_prefix (self, "/memfd:") && strcmp (self, "/") != 0)
    dirs[n++] = xasprintf ("%s/policies", dirname (self));
  dirs[n++] = xstrdup (HAVEN_POLICY_DIR);
  return dirs;
}

char *
hv_policy_find (const char *name)
{
  char **dirs = hv_policy_search_path ();
  char *found = NULL;
  for (size_t i = 0; dirs[i]; i++)
    {
      if (found == NULL)
        {
          char *candidate = xasprintf ("%s/%s.yaml", dirs[i], name);
          if (access (candidate, R_OK) == 0)
            found = candidate;
          else
            free (candidate);
        }
      free (dirs[i]);
    }
  free (dirs);
  return found;
}

static void
append (oci_strv *dst, const oci_strv *src)
{
  for (size_t i = 0; i < src->n; i++)
    oci_strv_push (dst, src->v[i]);
}

/* child on top of base: lists accumulate, set scalars override. */
/* The child's source for a variable replaces the base's, whichever of
 * env.set, set_from_file and set_from_env either used; a git host's
 * token likewise. */
static void
drop_env_source (hv_policy *base, const char *name)
{
  for (size_t i = 0; i < base->env_set.n;)
    if (strcmp (base->env_set.v[i].key, name) == 0)
      {
        free (base->env_set.v[i].key);
        free (base->env_set.v[i].value);
        memmove (&base->env_set.v[i], &base->env_set.v[i + 1], (--base->env_set.n - i) * sizeof (oci_kv));
      }
    else
      i++;
  for (size_t i = 0; i < base->n_env_from;)
    if (strcmp (base->env_from[i].name, name) == 0)
      {
        hv_secret_source_free (&base->env_from[i]);
        memmove (&base->env_from[i], &base->env_from[i + 1], (--base->n_env_from - i) * sizeof (hv_secret_source));
      }
    else
      i++;
}

static void
copy_secret (hv_secret_source **v, size_t *n, const hv_secret_source *src)
{
  *v = xrealloc (*v, (*n + 1) * sizeof (hv_secret_source));
  hv_secret_source *s = &(*v)[(*n)++];
  s->name = xstrdup (src->name);
  s->file = src->file ? xstrdup (src->file) : NULL;
  s->host_var = src->host_var ? xstrdup (src->host_var) : NULL;
  s->username = src->username ? xstrdup (src->username) : NULL;
  s->where = xstrdup (src->where);
  s->path = src->path ? xstrdup (src->path) : NULL;
  s->from_host = src->from_host;
}

static void
merge_secrets (hv_policy *base, const hv_policy *child)
{
  for (size_t i = 0; i < child->env_set.n; i++)
    drop_env_source (base, child->env_set.v[i].key);
  for (size_t i = 0; i < child->n_env_from; i++)
    drop_env_source (base, child->env_from[i].name);
  for (size_t i = 0; i < child->n_env_from; i++)
    copy_secret (&base->env_from, &base->n_env_from, &child->env_from[i]);
  for (size_t i = 0; i < child->n_git_creds; i++)
    {
      for (size_t j = 0; j < base->n_git_creds; j++)
        if (strcmp (base->git_creds[j].name, child->git_creds[i].name) == 0)
          {
            hv_secret_source_free (&base->git_creds[j]);
            memmove (&base->git_creds[j], &base->git_creds[j + 1],
                     (--base->n_git_creds - j) * sizeof (hv_secret_source));
            break;
          }
      copy_secret (&base->git_creds, &base->n_git_creds, &child->git_creds[i]);
    }
  /* An API's item in the child replaces the base's for that host. */
  for (size_t i = 0; i < child->n_api_creds; i++)
    {
      const hv_api_credential *c = &child->api_creds[i];
      for (size_t j = 0; j < base->n_api_creds; j++)
        if (strcmp (base->api_creds[j].key.name, c->key.name) == 0)
          {
            hv_api_credential_free (&base->api_creds[j]);
            memmove (&base->api_creds[j], &base->api_creds[j + 1],
                     (--base->n_api_creds - j) * sizeof (hv_api_credential));
            break;
          }
      base->api_creds = xrealloc (base->api_creds, (base->n_api_creds + 1) * sizeof (hv_api_credential));
      hv_api_credential *d = &base->api_creds[base->n_api_creds++];
      *d = (hv_api_credential) { .key = { .name = xstrdup (c->key.name),
                                          .file = c->key.file ? xstrdup (c->key.file) : NULL,
                                          .host_var = c->key.host_var ? xstrdup (c->key.host_var) : NULL,
                                          .where = xstrdup (c->key.where) },
                                 .provider = xstrdup (c->provider),
                                 .auth = xstrdup (c->auth) };
    }
}

static void
merge (hv_policy *base, const hv_policy *child)
{
#define OVERRIDE_STR(m)                                                                            \
  if (child->m)                                                                                    \
    {                                                                                              \
      free (base->m);                                                                              \
      base->m = xstrdup (child->m);                                                                \
    }
#define OVERRIDE_OPT(m)                                                                            \
  if (child->m.set)                                                                                \
    base->m = child->m;
  OVERRIDE_STR (name);
  OVERRIDE_STR (description);
  OVERRIDE_STR (file);
  OVERRIDE_STR (syscall_profile);
  OVERRIDE_STR (audit_log);
  OVERRIDE_STR (audit_log_where);
  append (&base->read_only, &child->read_only);
  append (&base->read_write, &child->read_write);
  append (&base->block, &child->block);
  append (&base->protect, &child->protect);
  for (size_t i = 0; i < child->home_allow.n; i++)
    {
      /* An entry the base has already is the same entry, not a second
       * one: two overlays of one directory would share their upper and
       * work directories, which overlayfs does not support.  The child's
       * write mode wins; protected sub-paths only add up. */
      size_t j = 0;
      while (j < base->home_allow.n && strcmp (base->home_allow.v[j], child->home_allow.v[i]) != 0)
        j++;
      if (j == base->home_allow.n)
        {
          base->home_access = xrealloc (base->home_access, (base->home_allow.n + 1) * sizeof (hv_home_access));
          base->home_access[j] = (hv_home_access) { 0 };
          oci_strv_push (&base->home_allow, child->home_allow.v[i]);
        }
      hv_home_access *a = &base->home_access[j];
      a->write = child->home_access[i].write;
      append (&a->protect, &child->home_access[i].protect);
      append (&a->data, &child->home_access[i].data);
      append (&a->own, &child->home_access[i].own);
      append (&a->settings, &child->home_access[i].settings);
      append (&a->commands, &child->home_access[i].commands);
      append (&a->per_project, &child->home_access[i].per_project);
    }
  /* Allow and deny lists add up; deny wins wherever it was written, so
   * an extending policy can narrow what it inherits but never re-open
   * what its base denies. */
  hv_net_rules_append (&base->net_allow, &child->net_allow);
  hv_net_rules_append (&base->net_deny, &child->net_deny);
  hv_net_rules_append (&base->net_ask, &child->net_ask);
  OVERRIDE_OPT (net_ask_all);
  if (child->net_ask_all.set)
    {
      free (base->net_ask_all_where);
      base->net_ask_all_where = child->net_ask_all_where ? xstrdup (child->net_ask_all_where) : NULL;
    }
  OVERRIDE_OPT (net_ask_timeout_s);
  append (&base->warnings, &child->warnings);
  append (&base->allow_exec, &child->allow_exec);
  append (&base->capabilities, &child->capabilities);
  append (&base->syscall_allow, &child->syscall_allow);
  append (&base->syscall_deny, &child->syscall_deny);
  append (&base->env_pass, &child->env_pass);
  append (&base->env_containers_pass, &child->env_containers_pass);
  append (&base->env_deny, &child->env_deny);
  append (&base->best_effort, &child->best_effort);
  OVERRIDE_OPT (hide_home);
  OVERRIDE_OPT (ssh_agent);
  if (child->ssh_agent.set)
    {
      free (base->ssh_agent_where);
      base->ssh_agent_where = xstrdup (child->ssh_agent_where);
      /* The child's ssh_agent replaces the base's whole: its keys (none
       * for true or false) are the only ones. */
      oci_strv_free (&base->ssh_agent_keys);
      oci_strv_free (&base->ssh_agent_keys_where);
      for (size_t i = 0; i < child->ssh_agent_keys.n; i++)
        {
          oci_strv_push (&base->ssh_agent_keys, child->ssh_agent_keys.v[i]);
          oci_strv_push (&base->ssh_agent_keys_where, child->ssh_agent_keys_where.v[i]);
        }
    }
  OVERRIDE_OPT (project_writable);
  OVERRIDE_OPT (refuse_project_links);
  OVERRIDE_OPT (block_shell);
  OVERRIDE_OPT (k8s_service_account_token);
  OVERRIDE_OPT (memory);
  OVERRIDE_OPT (pids);
  OVERRIDE_OPT (nofile);
  OVERRIDE_OPT (timeout_s);
  OVERRIDE_OPT (cpus_milli);
  if (child->container_memory.set)
    base->container_memory_pct = child->container_memory_pct;
  OVERRIDE_OPT (container_memory);
  OVERRIDE_OPT (container_pids);
  if (child->container_cpus_milli.set)
    base->container_cpus_pct = child->container_cpus_pct;
  OVERRIDE_OPT (container_cpus_milli);
  if (child->net_mode != HV_NET_UNSET)
    base->net_mode = child->net_mode;
  for (size_t i = 0; i < child->n_tmpfs; i++)
    {
      base->tmpfs = xrealloc (base->tmpfs, (base->n_tmpfs + 1) * sizeof (hv_tmpfs));
      base->tmpfs[base->n_tmpfs].path = xstrdup (child->tmpfs[i].path);
      base->tmpfs[base->n_tmpfs++].size = child->tmpfs[i].size;
    }
  merge_secrets (base, child);
  for (size_t i = 0; i < child->env_set.n; i++)
    {
      base->env_set.v = xrealloc (base->env_set.v, (base->env_set.n + 1) * sizeof (oci_kv));
      base->env_set.v[base->env_set.n].key = xstrdup (child->env_set.v[i].key);
      base->env_set.v[base->env_set.n++].value = xstrdup (child->env_set.v[i].value);
    }
#undef OVERRIDE_STR
#undef OVERRIDE_OPT
}

/* Only a regular file of at most HV_POLICY_MAX_FILE_SIZE bytes is a
 * policy.  `extends: /some/fifo` used to block haven forever in open(),
 * and a device or /dev/zero would be read without end.  The type is
 * checked before opening (opening a device can have effects of its own)
 * and again on the open fd, which O_NONBLOCK keeps from blocking if a
 * FIFO was swapped in between.  A link to a regular file is followed:
 * where policies may live is checked elsewhere. */
static int
read_policy_file (const char *path, char **text, size_t *len, hv_error **err)
{
  struct stat st;
  if (stat (path, &st) < 0)
    return hv_error_set (err, errno, "policy %s", path);
  if (!S_ISREG (st.st_mode))
    return hv_error_set (err, 0, "policy %s: not a regular file", path);
  cleanup_close int fd = open (path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd < 0)
    return hv_error_set (err, errno, "policy %s", path);
  if (fstat (fd, &st) < 0)
    return hv_error_set (err, errno, "policy %s: fstat", path);
  if (!S_ISREG (st.st_mode))
    return hv_error_set (err, 0, "policy %s: not a regular file", path);
  if (st.st_size > HV_POLICY_MAX_FILE_SIZE)
    return hv_error_set (err, 0, "policy %s: larger than %u bytes", path, HV_POLICY_MAX_FILE_SIZE);
  /* The buffer starts at the size fstat saw and grows while the file
   * grows, never past the cap: a buffer of the cap for every file cost
   * every run a megabyte of zeroed pages. */
  if (hv_read_fd_max (fd, (size_t) st.st_size, HV_POLICY_MAX_FILE_SIZE, text, len, NULL) == 0)
    return 0;
  if (errno == EFBIG)
    return hv_error_set (err, 0, "policy %s: larger than %u bytes", path, HV_POLICY_MAX_FILE_SIZE);
  return hv_error_set (err, errno, "policy %s: read", path);
}

static bool
is_path (const char *s)
{
  return strchr (s, '/') != NULL || str_has_prefix (s, ".") || strstr (s, ".yaml") != NULL;
}

/* Is the file at path the policy that the name "default" finds?  It is
 * the base of every policy without `extends`, so it cannot extend itself
 * (a user's own default.yaml without `extends: none` included). */
static bool
is_the_default (const char *path)
{
  cleanup_free char *def = hv_policy_find ("default");
  struct stat a, b;
  return def && stat (path, &a) == 0 && stat (def, &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

static int
load_layer (const char *name_or_file, const char *relative_to, int depth, hv_policy *into, hv_error **err)
{
  if (depth > 8)
    return hv_error_set (err, 0, "policy %s: `extends` nests deeper than 8 levels (a cycle?)", name_or_file);
  cleanup_free char *path = NULL;
  if (is_path (name_or_file))
    {
      if (name_or_file[0] != '/' && relative_to)
        {
          cleanup_free char *dir = xstrdup (relative_to);
          path = xasprintf ("%s/%s", dirname (dir), name_or_file);
        }
      else
        path = xstrdup (name_or_file);
    }
  else if ((path = hv_policy_find (name_or_file)) == NULL)
    return hv_error_set (err, 0, "policy \"%s\" not found (searched HAVEN_POLICY_PATH, ~/.config/haven/policies, "
                                 "/etc/haven/policies and the installed policies)",
                         name_or_file);
  cleanup_free char *text = NULL;
  size_t len = 0;
  if (read_policy_file (path, &text, &len, err) < 0)
    return -1;
  /* Each file that shaped the policy must stay out of the sandbox's
   * reach (run_trust.c). */
  oci_strv_push (&into->files, path);
  hv_policy layer = { 0 };
  cleanup_free char *extends = NULL;
  if (hv_policy_parse (text, len, path, &layer, &extends, err) < 0)
    {
      hv_policy_free_fields (&layer);
      return -1;
    }
  /* The policy being run is named after its own file unless it says
   * otherwise, never after the policy it extends. */
  if (depth == 0 && layer.name == NULL)
    {
      const char *base = strrchr (path, '/') ? strrchr (path, '/') + 1 : path;
      size_t n = strlen (base);
      if (n > 5 && strcmp (base + n - 5, ".yaml") == 0)
        n -= 5;
      else if (n > 4 && strcmp (base + n - 4, ".yml") == 0)
        n -= 4;
      layer.name = xasprintf ("%.*s", (int) n, base);
    }
  if (extends == NULL && !is_the_default (path))
    {
      /* A policy that names no base builds on `default`, so a file that is
       * silent about .git/hooks, /tmp or PATH (the LLM-safe-haven seed
       * format is) is as strict there as the default and never weaker.
       * `extends: none` starts from nothing, as the default itself does. */
      cleanup_free char *def = hv_policy_find ("default");
      if (def == NULL)
        {
          hv_policy_free_fields (&layer);
          return hv_error_set (err, 0,
                               "%s: a policy without `extends` builds on the default policy, which was not found "
                               "(searched HAVEN_POLICY_PATH, ~/.config/haven/policies, /etc/haven/policies and the "
                               "installed policies); write `extends: none` to start from nothing",
                               path);
        }
      extends = xstrdup ("default");
      /* Its own description, not default's ("Safe default..."). */
      if (depth == 0 && layer.description == NULL)
        layer.description = xstrdup ("(no description; builds on default)");
    }
  if (extends && strcmp (extends, "none") == 0)
    {
      free (extends);
      extends = NULL;
    }
  if (extends && load_layer (extends, path, depth + 1, into, err) < 0)
    {
      hv_policy_free_fields (&layer);
      return hv_error_wrap (err, "%s: extends", path);
    }
  merge (into, &layer);
  hv_policy_free_fields (&layer);
  return 0;
}


static int
validate (hv_policy *p, hv_error **err)
{
  const char *file = p->file ? p->file : "policy";
  if (p->block_shell.value)
    for (size_t i = 0; i < p->allow_exec.n; i++)
      if (hv_policy_is_shell_name (p->allow_exec.v[i]))
        return hv_error_set (err, 0, "%s: process.allow_exec lists the shell \"%s\" but process.block_shell is true",
                             file, p->allow_exec.v[i]);
  if (p->syscall_profile && strcmp (p->syscall_profile, "agent") != 0 && strcmp (p->syscall_profile, "none") != 0)
    return hv_error_set (err, 0, "%s: syscalls.profile: \"%s\" is not agent or none", file, p->syscall_profile);
  for (size_t i = 0; i < p->protect.n; i++)
    if (p->protect.v[i][0] == '/' || strstr (p->protect.v[i], ".."))
      return hv_error_set (err, 0, "%s: filesystem.protect: \"%s\" must be relative to the project, without ..",
                           file, p->protect.v[i]);
  /* "!pattern" un-hides what block hides; anywhere else it would be read
   * as a path and silently match nothing. */
  const struct
  {
    const char *key;
    const oci_strv *list;
  } no_exceptions[] = { { "read_only", &p->read_only }, { "read_write", &p->read_write },
                        { "protect", &p->protect }, { "home_allow", &p->home_allow } };
  for (size_t l = 0; l < N_ELEMENTS (no_exceptions); l++)
    for (size_t i = 0; i < no_exceptions[l].list->n; i++)
      if (no_exceptions[l].list->v[i][0] == '!')
        return hv_error_set (err, 0, "%s: filesystem.%s: \"%s\": only filesystem.block takes \"!\" exceptions", file,
                             no_exceptions[l].key, no_exceptions[l].list->v[i]);
  for (size_t i = 0; i < p->block.n; i++)
    if (strcmp (p->block.v[i], "!") == 0)
      return hv_error_set (err, 0, "%s: filesystem.block: \"!\" needs a pattern after it", file);
  if (p->net_mode == HV_NET_UNSET)
    p->net_mode = p->net_allow.n || p->net_ask.n ? HV_NET_ALLOWLIST : HV_NET_NONE;
  if (p->net_mode != HV_NET_ALLOWLIST && p->net_ask.n)
    return hv_error_set (err, 0,
                         "%s: network.mode is %s, but network.ask lists \"%s\" (%s): only an allowlist asks (use "
                         "mode: allowlist or ask)",
                         file, p->net_mode == HV_NET_OPEN ? "open" : "none", p->net_ask.v[0].entry,
                         p->net_ask.v[0].where ? p->net_ask.v[0].where : "?");
  /* `mode: open` over a base that lists hosts (or the other way round
   * through several files): the lists would be silently meaningless. */
  if (p->net_mode == HV_NET_OPEN && (p->net_allow.n || p->net_deny.n))
    {
      const hv_net_rule *r = p->net_allow.n ? &p->net_allow.v[0] : &p->net_deny.v[0];
      return hv_error_set (err, 0,
                           "%s: network.mode is open, but network.%s lists \"%s\" (%s): the host's network filters "
                           "nothing (extend a policy without network lists, or use mode: allowlist)",
                           file, p->net_allow.n ? "allow" : "deny", r->entry, r->where ? r->where : "?");
    }
  /* A git token only for a host the sandbox may reach on https: the
   * credentials file is the whole of what git inside can answer with. */
  for (size_t i = 0; i < p->n_git_creds; i++)
    if (p->net_mode != HV_NET_OPEN
        && (p->net_mode != HV_NET_ALLOWLIST || !hv_net_name_allowed (&p->net_allow, &p->net_deny, p->git_creds[i].name, 443)))
      return hv_error_set (err, 0,
                           "%s: credentials.git: %s is not a host network.allow lets the sandbox reach on port 443: "
                           "haven gives git credentials only for hosts the policy allows",
                           p->git_creds[i].where, p->git_creds[i].name);
  return hv_api_validate (p, err);
}

int
hv_policy_load (const char *name_or_file, hv_policy **out, hv_error **err)
{
  hv_policy *p = xmalloc0 (sizeof (*p));
  if (load_layer (name_or_file, NULL, 0, p, err) < 0 || validate (p, err) < 0)
    {
      hv_policy_free (p);
      return -1;
    }
  if (p->name == NULL)
    p->name = xstrdup (name_or_file);
  /* A file by its absolute path: a runtime's exec may run elsewhere than
   * its create did. */
  p->reload_as = is_path (name_or_file) ? realpath (name_or_file, NULL) : NULL;
  if (p->reload_as == NULL)
    p->reload_as = xstrdup (name_or_file);
  *out = p;
  return 0;
}


static int
compare_names (const void *a, const void *b)
{
  return strcmp (*(char *const *) a, *(char *const *) b);
}

void
hv_policy_names (oci_strv *names)
{
  char **dirs = hv_policy_search_path ();
  for (size_t i = 0; dirs[i]; i++)
    {
      DIR *d = opendir (dirs[i]);
      struct dirent *de;
      while (d && (de = readdir (d)))
        {
          size_t l = strlen (de->d_name);
          if (l < 6 || strcmp (de->d_name + l - 5, ".yaml") != 0)
            continue;
          cleanup_free char *name = strndup (de->d_name, l - 5);
          oci_strv_push_unique (names, name);
        }
      if (d)
        closedir (d);
      free (dirs[i]);
    }
  free (dirs);
  if (names->n)
    qsort (names->v, names->n, sizeof (names->v[0]), compare_names);
}
