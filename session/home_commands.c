/* Refuse a run whose host settings run what the sandbox can write (see
 * home_commands.h). */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <yajl/yajl_tree.h>

#include "file_read.h"
#include "home_allow.h"
#include "home_commands.h"
#include "json_walk.h"
#include "sandbox_writes.h"
#include "utils.h"

/* Settings files are small; ~/.claude.json grows with history (MiBs). */
#define SETTINGS_MAX (64u << 20)
/* Far deeper than any agent's settings (Claude Code's hooks are 5 levels). */
#define SETTINGS_MAX_DEPTH 64

struct check
{
  const hv_policy *p;
  const struct hv_run_ctx *ctx;
  const char *file; /* for messages */
  const oci_strv *keys;
  hv_error **err;
};

/* One word of a command as a host path, or NULL when it names none:
 * ~, $HOME, ${HOME} and the agents' project variables expanded; a
 * relative word is taken in the project (the directory the host's tool
 * runs its hooks in, when it works there) when it starts with ./ or ../
 * or names a file that is there. */
static char *
word_path (const char *w, const struct hv_run_ctx *ctx)
{
  static const char *const project_vars[] = { "$CLAUDE_PROJECT_DIR", "${CLAUDE_PROJECT_DIR}", "$GEMINI_PROJECT_DIR",
                                              "${GEMINI_PROJECT_DIR}", "$PWD", "${PWD}", NULL };
  static const char *const home_vars[] = { "~", "$HOME", "${HOME}", NULL };
  for (size_t i = 0; project_vars[i]; i++)
    {
      size_t k = strlen (project_vars[i]);
      if (ctx->project && strncmp (w, project_vars[i], k) == 0 && (w[k] == '/' || w[k] == '\0'))
        return xasprintf ("%s%s", ctx->project, w + k);
    }
  const char *home = ctx->home ? ctx->home : (ctx->homes && ctx->homes->n ? ctx->homes->v[0] : NULL);
  for (size_t i = 0; home_vars[i]; i++)
    {
      size_t k = strlen (home_vars[i]);
      if (home && strncmp (w, home_vars[i], k) == 0 && (w[k] == '/' || w[k] == '\0'))
        return xasprintf ("%s%s", home, w + k);
    }
  if (w[0] == '/')
    return xstrdup (w);
  if (w[0] == '-' || w[0] == '$' || strchr (w, '=') || ctx->project == NULL)
    return NULL;
  cleanup_free char *in_project = xasprintf ("%s/%s", ctx->project, w);
  struct stat st;
  if (strncmp (w, "./", 2) == 0 || strncmp (w, "../", 3) == 0
      || (stat (in_project, &st) == 0 && S_ISREG (st.st_mode)))
    return steal_pointer (&in_project);
  return NULL;
}

/* Every word of a command (split at blanks and the shell's operators,
 * quotes dropped, VAR=value taken as value) that names a path the
 * sandbox can write: refused. */
static int
check_command (struct check *c, const char *where, const char *value)
{
  cleanup_free char *copy = xstrdup (value);
  char *save = NULL;
  for (char *w = strtok_r (copy, " \t\n\r;&|()<>`'\"", &save); w; w = strtok_r (NULL, " \t\n\r;&|()<>`'\"", &save))
    {
      char *eq = strchr (w, '=');
      if (eq && eq != w && strchr (w, '/') > eq)
        w = eq + 1; /* FOO=/path/x */
      cleanup_free char *path = word_path (w, c->ctx);
      if (path == NULL)
        continue;
      cleanup_free char *real = hv_host_resolve (path);
      struct stat st;
      /* A directory is an argument (a server's root), not something run. */
      if (stat (real, &st) == 0 && S_ISDIR (st.st_mode))
        continue;
      const char *why = hv_sandbox_writes (c->p, c->ctx, real);
      if (why)
        {
          return hv_error_set (c->err, 0,
                               "%s: %s runs %s, which the sandbox can write (%s): the agent on the host "
                               "would run what this run leaves there; point it outside what the policy "
                               "makes writable",
                               c->file, where, real, why);
        }
    }
  return 0;
}

static bool
is_command_key (const struct check *c, const char *key)
{
  for (size_t i = 0; i < c->keys->n; i++)
    if (strcmp (c->keys->v[i], key) == 0)
      return true;
  return false;
}

/* JSON: every member named in keys, at any depth: its value if a
 * string, its strings if an array, its members' strings if an object. */
static int
walk_json (struct check *c, yajl_val v, char *path, size_t len, size_t cap)
{
  if (YAJL_IS_OBJECT (v))
    {
      for (size_t i = 0; i < v->u.object.len; i++)
        {
          const char *k = v->u.object.keys[i];
          yajl_val m = v->u.object.values[i];
          int n = snprintf (path + len, cap - len, ".%s", k);
          size_t l = n < 0 || (size_t) n >= cap - len ? cap - 1 : len + (size_t) n;
          if (is_command_key (c, k))
            {
              if (YAJL_IS_STRING (m) && check_command (c, path, YAJL_GET_STRING (m)) < 0)
                return -1;
              for (size_t j = 0; YAJL_IS_ARRAY (m) && j < m->u.array.len; j++)
                if (YAJL_IS_STRING (m->u.array.values[j])
                    && check_command (c, path, YAJL_GET_STRING (m->u.array.values[j])) < 0)
                  return -1;
              /* An object's string members: an environment (env: {BASH_ENV: ...}). */
              for (size_t j = 0; YAJL_IS_OBJECT (m) && j < m->u.object.len; j++)
                if (YAJL_IS_STRING (m->u.object.values[j]))
                  {
                    cleanup_free char *where = xasprintf ("%s.%s", path, m->u.object.keys[j]);
                    if (check_command (c, where, YAJL_GET_STRING (m->u.object.values[j])) < 0)
                      return -1;
                  }
            }
          if (walk_json (c, m, path, l, cap) < 0)
            return -1;
          path[len] = '\0';
        }
    }
  else if (YAJL_IS_ARRAY (v))
    for (size_t i = 0; i < v->u.array.len; i++)
      {
        int n = snprintf (path + len, cap - len, "[%zu]", i);
        size_t l = n < 0 || (size_t) n >= cap - len ? cap - 1 : len + (size_t) n;
        if (walk_json (c, v->u.array.values[i], path, l, cap) < 0)
          return -1;
        path[len] = '\0';
      }
  return 0;
}

/* TOML, as far as commands go: `key = "..."` or `key = ["...", ...]`
 * or an inline table's strings (also over several lines) under any
 * [table], the key's last dotted part named in keys; basic and literal
 * strings. */
static int
walk_toml (struct check *c, const char *text)
{
  char table[512] = "";
  const char *s = text;
  unsigned line = 0;
  while (*s)
    {
      line++;
      const char *eol = strchrnul (s, '\n');
      const char *t = s;
      while (t < eol && (*t == ' ' || *t == '\t'))
        t++;
      if (*t == '[')
        {
          const char *end = memchr (t, ']', (size_t) (eol - t));
          const char *start = t + (t[1] == '[' ? 2 : 1);
          if (end && end > start)
            snprintf (table, sizeof (table), "%.*s.", (int) (end - start), start);
        }
      else if (*t != '#' && t < eol)
        {
          const char *eq = memchr (t, '=', (size_t) (eol - t));
          if (eq)
            {
              const char *ke = eq;
              while (ke > t && (ke[-1] == ' ' || ke[-1] == '\t'))
                ke--;
              cleanup_free char *key = xasprintf ("%.*s", (int) (ke - t), t);
              char *last = strrchr (key, '.') ? strrchr (key, '.') + 1 : key;
              size_t ln = strlen (last);
              if (ln >= 2 && (last[0] == '"' || last[0] == '\'') && last[ln - 1] == last[0])
                {
                  last[ln - 1] = '\0';
                  last++;
                }
              if (is_command_key (c, last))
                {
                  cleanup_free char *where = xasprintf ("line %u, %s%s", line, table, key);
                  const char *v = eq + 1;
                  while (*v == ' ' || *v == '\t')
                    v++;
                  bool array = *v == '[' || *v == '{';
                  int depth = 0;
                  /* One string, or the strings up to the end of the array
                   * or inline table (env = { BASH_ENV = "..." }). */
                  for (; *v; v++)
                    {
                      if (*v == '[' || *v == '{')
                        depth++;
                      else if ((*v == ']' || *v == '}') && --depth <= 0)
                        break;
                      else if (*v == '#' )
                        v = strchrnul (v, '\n') - 1;
                      else if (*v == '\n' && !array)
                        break;
                      else if (*v == '"' || *v == '\'')
                        {
                          char q = *v;
                          cleanup_free char *str = xmalloc0 (strlen (v) + 1);
                          size_t n = 0;
                          for (v++; *v && *v != q && *v != '\n'; v++)
                            {
                              if (q == '"' && *v == '\\' && v[1])
                                v++;
                              str[n++] = *v;
                            }
                          if (check_command (c, where, str) < 0)
                            return -1;
                          if (!array)
                            break;
                          if (*v == '\0')
                            break;
                        }
                    }
                  eol = strchrnul (v, '\n');
                }
            }
        }
      s = *eol ? eol + 1 : eol;
    }
  return 0;
}

static bool
is_toml (const char *name)
{
  size_t n = strlen (name);
  return n > 5 && strcmp (name + n - 5, ".toml") == 0;
}

int
hv_home_commands_check_text (const hv_policy *p, const struct hv_run_ctx *ctx, const char *name, const char *text,
                             const oci_strv *keys, hv_error **err)
{
  struct check c = { .p = p, .ctx = ctx, .file = name, .keys = keys, .err = err };
  if (is_toml (name))
    return walk_toml (&c, text);
  /* walk_json and yajl's tree recurse once a level. */
  if (jw_too_deep (text, SETTINGS_MAX_DEPTH))
    return hv_error_set (err, 0, "%s: nested deeper than %d levels: cannot check the commands it names", name,
                         SETTINGS_MAX_DEPTH);
  char errbuf[256] = "";
  yajl_val tree = yajl_tree_parse (text, errbuf, sizeof (errbuf));
  if (tree == NULL)
    {
      /* The host's tool cannot read it either; nothing to check, but a
       * file that is not JSON for haven may be for a laxer reader (JSON
       * with comments): refuse rather than guess. */
      return hv_error_set (err, 0, "%s: not JSON haven can read (%s): cannot check the commands it names",
                           name, errbuf[0] ? strtok (errbuf, "\n") : "parse error");
    }
  char path[4096] = "";
  int r = walk_json (&c, tree, path, 0, sizeof (path));
  yajl_tree_free (tree);
  return r;
}

/* One settings file: a regular file read without following a link in
 * its last component (a link is read through as the host's tool reads
 * it, since a link is how dotfiles are kept). */
static int
check_file (const hv_policy *p, const struct hv_run_ctx *ctx, const char *file, const oci_strv *keys,
            hv_error **err)
{
  cleanup_close int fd = open (file, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0)
    return errno == ENOENT || errno == ENOTDIR ? 0 : hv_error_set (err, errno, "open %s", file);
  struct stat st;
  if (fstat (fd, &st) < 0)
    return hv_error_set (err, errno, "stat %s", file);
  if (!S_ISREG (st.st_mode))
    return 0;
  if ((uint64_t) st.st_size > SETTINGS_MAX)
    return hv_error_set (err, 0, "%s: larger than %u MiB: cannot check the commands it names", file,
                         SETTINGS_MAX >> 20);
  cleanup_free char *text = NULL;
  size_t len = 0;
  if (hv_read_fd (fd, file, (size_t) st.st_size, &text, &len, err) < 0)
    return -1;
  if (len == 0)
    return 0;
  return hv_home_commands_check_text (p, ctx, file, text, keys, err);
}

int
hv_home_commands_check (const hv_policy *p, const struct hv_run_ctx *ctx, hv_error **err)
{
  for (size_t i = 0; i < p->home_allow.n; i++)
    {
      const hv_home_access *a = &p->home_access[i];
      if (a->commands.n == 0)
        continue;
      cleanup_strv oci_strv paths = { 0 };
      hv_home_allow_expand (p->home_allow.v[i], ctx, &paths);
      for (size_t j = 0; j < paths.n; j++)
        {
          if (a->settings.n == 0 && check_file (p, ctx, paths.v[j], &a->commands, err) < 0)
            return hv_error_wrap (err, "home_allow %s", p->home_allow.v[i]);
          for (size_t k = 0; k < a->settings.n; k++)
            {
              cleanup_free char *file = xasprintf ("%s/%s", paths.v[j], a->settings.v[k]);
              if (check_file (p, ctx, file, &a->commands, err) < 0)
                return hv_error_wrap (err, "home_allow %s", p->home_allow.v[i]);
            }
        }
    }
  return 0;
}
