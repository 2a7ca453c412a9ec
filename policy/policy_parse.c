/* YAML -> hv_policy with libyaml's document API.
 *
 * Every error names file:line:column and the key path.  Unknown keys are
 * errors: a misspelt `blok:` must not silently leave ~/.ssh visible.  So
 * is everything else that would weaken a policy without a word: a second
 * document, a duplicate key, a number that is not exactly representable
 * (inf, nan, 1e-9, overflow), a path written with $VARIABLES or ~user.
 *
 * libyaml's document loader recurses once per nesting level and its
 * scanner slows down quadratically with deep flow nesting, so the event
 * stream is scanned first and a document nested deeper than
 * HV_POLICY_MAX_DEPTH is refused before it is loaded. */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <yaml.h>

#include "git_credential.h"
#include "policy_api.h"
#include "policy_network.h"
#include "policy_parse.h"
#include "ssh_agent_view.h"
#include "utils.h"

struct yw
{
  const char *file;
  yaml_document_t *doc;
  hv_error **err;
  const char *section;
  /* This document's network keys, for the checks across them. */
  yaml_node_t *net_mode_node, *net_allow_node;
  const char *net_mode_key;
};

static int
yw_fail (struct yw *w, const yaml_node_t *n, const char *key, const char *fmt, ...)
    __attribute__ ((format (printf, 4, 5)));

static int
yw_fail (struct yw *w, const yaml_node_t *n, const char *key, const char *fmt, ...)
{
  va_list ap;
  va_start (ap, fmt);
  char *msg = xvasprintf (fmt, ap);
  va_end (ap);
  size_t line = n ? n->start_mark.line + 1 : 0, col = n ? n->start_mark.column + 1 : 0;
  if (key && w->section)
    hv_error_set (w->err, 0, "%s:%zu:%zu: %s.%s: %s", w->file, line, col, w->section, key, msg);
  else if (key || w->section)
    hv_error_set (w->err, 0, "%s:%zu:%zu: %s: %s", w->file, line, col, key ? key : w->section, msg);
  else
    hv_error_set (w->err, 0, "%s:%zu:%zu: %s", w->file, line, col, msg);
  free (msg);
  return -1;
}

static const char *
scalar (const yaml_node_t *n)
{
  return n && n->type == YAML_SCALAR_NODE ? (const char *) n->data.scalar.value : NULL;
}

static bool
is_null (const yaml_node_t *n)
{
  const char *s = scalar (n);
  return s && n->data.scalar.style == YAML_PLAIN_SCALAR_STYLE
         && (strcmp (s, "") == 0 || strcmp (s, "~") == 0 || strcmp (s, "null") == 0);
}

static int
as_string (struct yw *w, yaml_node_t *n, const char *key, char **out)
{
  const char *s = scalar (n);
  if (s == NULL)
    return yw_fail (w, n, key, "expected a string");
  free (*out);
  *out = xstrdup (s);
  return 0;
}

static int
as_bool (struct yw *w, yaml_node_t *n, const char *key, oci_opt_bool *out)
{
  const char *s = scalar (n);
  static const char *const yes[] = { "true", "yes", "on" }, *const no[] = { "false", "no", "off" };
  for (size_t i = 0; s && i < 3; i++)
    {
      if (strcasecmp (s, yes[i]) == 0)
        {
          *out = (oci_opt_bool) { true, true };
          return 0;
        }
      if (strcasecmp (s, no[i]) == 0)
        {
          *out = (oci_opt_bool) { true, false };
          return 0;
        }
    }
  return yw_fail (w, n, key, "expected true or false");
}

/* Room for n items and `more` to come, taken once before a list's items
 * are added: parsing stays linear in long lists without a realloc per
 * item (or a look at the allocator's own sizes). */
static void *
reserve (void *v, size_t n, size_t more, size_t size)
{
  return more > 0 ? xrealloc (v, (n + more) * size) : v;
}

/* Paths are taken literally: nothing expands $HOME or ~user, and a
 * relative path means "in the project", so `$HOME/.ssh` used to block
 * <project>/$HOME/.ssh and leave the real ~/.ssh visible. */
static int
check_path (struct yw *w, yaml_node_t *n, const char *key, const char *s)
{
  if (s[0] == '~' && s[1] != '/' && s[1] != '\0')
    return yw_fail (w, n, key, "\"%s\": ~user is not supported (write ~/ for your home, or an absolute path)", s);
  for (const char *c = strchr (s, '$'); c; c = strchr (c + 1, '$'))
    if (c[1] == '{' || c[1] == '_' || isalpha ((unsigned char) c[1]))
      return yw_fail (w, n, key,
                      "\"%s\": environment variables are not expanded (write ~/ for your home, or an absolute path)", s);
  return 0;
}

static bool
in_filesystem_section (const struct yw *w)
{
  return w->section && strcmp (w->section, "filesystem") == 0;
}

static int
as_strv (struct yw *w, yaml_node_t *n, const char *key, oci_strv *out)
{
  if (is_null (n))
    return 0;
  if (n->type != YAML_SEQUENCE_NODE)
    return yw_fail (w, n, key, "expected a list");
  for (yaml_node_item_t *i = n->data.sequence.items.start; i < n->data.sequence.items.top; i++)
    {
      yaml_node_t *item = yaml_document_get_node (w->doc, *i);
      const char *s = scalar (item);
      if (s == NULL || s[0] == '\0')
        return yw_fail (w, item, key, "list items must be non-empty strings");
      /* Every list of the filesystem section is a list of paths. */
      if (in_filesystem_section (w) && check_path (w, item, key, s) < 0)
        return -1;
      oci_strv_push (out, s);
    }
  return 0;
}

/* "DIGITS[.DIGITS]" followed by a suffix, as an exact fraction
 * whole + frac / 10^frac_digits.  No sign, exponent, hex, inf or nan:
 * strtod accepts all of them, and each one silently turned a limit into
 * none (inf and nan cast to 0, 1e-9 rounded to 0). */
static int
parse_decimal (const char *s, uint64_t *whole, uint64_t *frac, uint64_t *frac_scale, const char **rest)
{
  const char *c = s;
  if (!isdigit ((unsigned char) *c))
    return -1;
  *whole = 0;
  for (; isdigit ((unsigned char) *c); c++)
    if (__builtin_mul_overflow (*whole, 10, whole) || __builtin_add_overflow (*whole, (uint64_t) (*c - '0'), whole))
      return -1;
  *frac = 0;
  *frac_scale = 1;
  if (*c == '.')
    {
      c++;
      if (!isdigit ((unsigned char) *c))
        return -1;
      for (; isdigit ((unsigned char) *c); c++)
        /* Digits past the 18th cannot change a value that is rounded to
         * whole bytes, seconds or thousandths of a CPU. */
        if (*frac_scale < 1000000000000000000ULL)
          {
            *frac = *frac * 10 + (uint64_t) (*c - '0');
            *frac_scale *= 10;
          }
    }
  *rest = c;
  return 0;
}

/* whole.frac * mult, rounded down (round_half: to nearest); -1 when it
 * does not fit in 63 bits. */
static int
scale_decimal (uint64_t whole, uint64_t frac, uint64_t frac_scale, uint64_t mult, bool round_half, uint64_t *out)
{
  unsigned __int128 v = (unsigned __int128) whole * mult;
  unsigned __int128 f = (unsigned __int128) frac * mult;
  v += f / frac_scale;
  if (round_half && (f % frac_scale) * 2 >= frac_scale)
    v++;
  if (v > (unsigned __int128) INT64_MAX)
    return -1;
  *out = (uint64_t) v;
  return 0;
}

int
hv_parse_size (const char *s, uint64_t *out)
{
  uint64_t whole, frac, scale, mult = 1, v;
  const char *end;
  if (parse_decimal (s, &whole, &frac, &scale, &end) < 0)
    return -1;
  switch (tolower ((unsigned char) *end))
    {
    case '\0':
      break;
    case 'k':
      mult = 1ULL << 10;
      break;
    case 'm':
      mult = 1ULL << 20;
      break;
    case 'g':
      mult = 1ULL << 30;
      break;
    case 't':
      mult = 1ULL << 40;
      break;
    default:
      return -1;
    }
  if (*end)
    {
      end++;
      if (tolower ((unsigned char) *end) == 'i')
        end++;
      if (tolower ((unsigned char) *end) == 'b')
        end++;
      if (*end)
        return -1;
    }
  /* Whole bytes, rounded down; 0 is never a size (a cgroup or tmpfs
   * limit of 0 means "none" or "default" to the layers below). */
  if (scale_decimal (whole, frac, scale, mult, false, &v) < 0 || v == 0)
    return -1;
  *out = v;
  return 0;
}

int
hv_parse_duration (const char *s, uint64_t *seconds)
{
  uint64_t whole, frac, scale, mult, v;
  const char *end;
  if (parse_decimal (s, &whole, &frac, &scale, &end) < 0)
    return -1;
  if (strcmp (end, "") == 0 || strcmp (end, "s") == 0)
    mult = 1;
  else if (strcmp (end, "m") == 0 || strcmp (end, "min") == 0)
    mult = 60;
  else if (strcmp (end, "h") == 0)
    mult = 3600;
  else
    return -1;
  /* Whole seconds, rounded to nearest.  0 would mean "no time limit" to
   * the runtime, and the runtime keeps the limit in an unsigned int:
   * both are refused rather than silently dropping the limit. */
  if (scale_decimal (whole, frac, scale, mult, true, &v) < 0 || v == 0 || v > HV_POLICY_MAX_TIMEOUT_S)
    return -1;
  *seconds = v;
  return 0;
}

/* CPUs as thousandths: 0.5 -> 500. */
int
hv_parse_cpus (const char *s, uint64_t *milli)
{
  uint64_t whole, frac, scale, v;
  const char *end;
  if (parse_decimal (s, &whole, &frac, &scale, &end) < 0 || *end)
    return -1;
  if (scale_decimal (whole, frac, scale, 1000, true, &v) < 0 || v == 0 || v > HV_POLICY_MAX_CPUS * 1000)
    return -1;
  *milli = v;
  return 0;
}

/* A whole number in [1, max]. */
int
hv_parse_count (const char *s, uint64_t max, uint64_t *out)
{
  uint64_t whole, frac, scale;
  const char *end;
  if (parse_decimal (s, &whole, &frac, &scale, &end) < 0 || *end || scale != 1 || whole == 0 || whole > max)
    return -1;
  *out = whole;
  return 0;
}

static int
as_size (struct yw *w, yaml_node_t *n, const char *key, oci_opt_u64 *out)
{
  const char *s = scalar (n);
  if (s == NULL || hv_parse_size (s, &out->value) < 0)
    return yw_fail (w, n, key, "expected a size such as 512m or 2g (at least 1 byte, below 8 EiB; "
                               "no inf, nan or exponents)");
  out->set = true;
  return 0;
}

static int
as_count (struct yw *w, yaml_node_t *n, const char *key, uint64_t max, oci_opt_u64 *out)
{
  const char *s = scalar (n);
  if (s == NULL || hv_parse_count (s, max, &out->value) < 0)
    return yw_fail (w, n, key, "expected a whole number from 1 to %llu", (unsigned long long) max);
  out->set = true;
  return 0;
}

/* A mapping's keys must all be known: `keys` lists them for the message. */
typedef int (*field_fn) (struct yw *w, yaml_node_t *value, const char *key, hv_policy *p);

struct field
{
  const char *key;
  field_fn fn;
};

static int
parse_mapping (struct yw *w, yaml_node_t *n, const struct field *fields, hv_policy *p)
{
  if (is_null (n))
    return 0;
  if (n->type != YAML_MAPPING_NODE)
    return yw_fail (w, n, NULL, "expected a mapping");
  for (yaml_node_pair_t *pair = n->data.mapping.pairs.start; pair < n->data.mapping.pairs.top; pair++)
    {
      yaml_node_t *k = yaml_document_get_node (w->doc, pair->key);
      yaml_node_t *v = yaml_document_get_node (w->doc, pair->value);
      const char *key = scalar (k);
      if (key == NULL)
        return yw_fail (w, k, NULL, "keys must be strings");
      const struct field *f = fields;
      while (f->key && strcmp (f->key, key) != 0)
        f++;
      if (f->key == NULL)
        {
          char known[512] = "";
          for (const struct field *g = fields; g->key; g++)
            {
              strncat (known, g->key, sizeof (known) - strlen (known) - 1);
              if (g[1].key)
                strncat (known, ", ", sizeof (known) - strlen (known) - 1);
            }
          return yw_fail (w, k, key, "unknown key (expected one of: %s)", known);
        }
      if (f->fn (w, v, key, p) < 0)
        return -1;
    }
  return 0;
}

#define STRV_FIELD(fname, member)                                                                  \
  static int fname (struct yw *w, yaml_node_t *v, const char *key, hv_policy *p)                   \
  {                                                                                                \
    return as_strv (w, v, key, &p->member);                                                        \
  }
#define BOOL_FIELD(fname, member)                                                                  \
  static int fname (struct yw *w, yaml_node_t *v, const char *key, hv_policy *p)                   \
  {                                                                                                \
    return as_bool (w, v, key, &p->member);                                                        \
  }
#define STRING_FIELD(fname, member)                                                                \
  static int fname (struct yw *w, yaml_node_t *v, const char *key, hv_policy *p)                   \
  {                                                                                                \
    return as_string (w, v, key, &p->member);                                                      \
  }

STRV_FIELD (f_read_only, read_only)
STRV_FIELD (f_read_write, read_write)
STRV_FIELD (f_block, block)
STRV_FIELD (f_protect, protect)
BOOL_FIELD (f_hide_home, hide_home)
BOOL_FIELD (f_project_writable, project_writable)
STRV_FIELD (f_allow_exec, allow_exec)

static int
f_project_links (struct yw *w, yaml_node_t *v, const char *key, hv_policy *p)
{
  const char *s = scalar (v);
  if (s && strcmp (s, "report") == 0)
    p->refuse_project_links = (oci_opt_bool) { true, false };
  else if (s && strcmp (s, "refuse") == 0)
    p->refuse_project_links = (oci_opt_bool) { true, true };
  else
    return yw_fail (w, v, key, "expected report or refuse");
  return 0;
}
BOOL_FIELD (f_block_shell, block_shell)
BOOL_FIELD (f_k8s_token, k8s_service_account_token)
STRV_FIELD (f_capabilities, capabilities)
STRING_FIELD (f_syscall_profile, syscall_profile)
STRV_FIELD (f_syscall_allow, syscall_allow)
STRV_FIELD (f_syscall_deny, syscall_deny)
STRV_FIELD (f_env_deny, env_deny)
STRV_FIELD (f_env_containers_pass, env_containers_pass)
STRING_FIELD (f_name, name)
STRING_FIELD (f_description, description)
/* best_effort: only the entries haven knows (hv_policy_best_effort): a
 * misspelt one would otherwise leave the run refused with no word on
 * why the entry did not count, or, worse, be read later as something. */
static int
f_best_effort (struct yw *w, yaml_node_t *v, const char *key, hv_policy *p)
{
  size_t before = p->best_effort.n;
  if (as_strv (w, v, key, &p->best_effort) < 0)
    return -1;
  for (size_t i = before; i < p->best_effort.n; i++)
    if (hv_policy_best_effort_what (p->best_effort.v[i]) == NULL)
      {
        yaml_node_t *item = yaml_document_get_node (w->doc, v->data.sequence.items.start[i - before]);
        cleanup_free char *known = hv_policy_best_effort_names ();
        return yw_fail (w, item, key, "unknown entry \"%s\" (known: %s)", p->best_effort.v[i], known);
      }
  return 0;
}

static void
push_home_allow (hv_policy *p, const char *path, hv_home_access *access)
{
  p->home_access = xrealloc (p->home_access, (p->home_allow.n + 1) * sizeof (hv_home_access));
  p->home_access[p->home_allow.n] = *access;
  *access = (hv_home_access) { 0 };
  oci_strv_push (&p->home_allow, path);
}

static void
home_access_clear (hv_home_access *a)
{
  oci_strv_free (&a->protect);
  oci_strv_free (&a->data);
  oci_strv_free (&a->own);
  oci_strv_free (&a->settings);
  oci_strv_free (&a->commands);
  oci_strv_free (&a->per_project);
}

/* A list of sub-paths of an entry: relative, without "..", non-empty. */
static int
sub_paths (struct yw *w, yaml_node_t *v, const char *key, const char *what, oci_strv *out)
{
  if (as_strv (w, v, key, out) < 0)
    return -1;
  for (size_t i = 0; i < out->n; i++)
    if (out->v[i][0] == '\0' || out->v[i][0] == '/' || strstr (out->v[i], ".."))
      return yw_fail (w, v, key, "%s: \"%s\" must be relative to the entry, without ..", what, out->v[i]);
  return 0;
}

/* What home_commands.c can read: JSON and TOML. */
static bool
settings_format_known (const char *name)
{
  size_t n = strlen (name);
  return (n > 5 && strcmp (name + n - 5, ".json") == 0) || (n > 5 && strcmp (name + n - 5, ".toml") == 0);
}

#define HOME_ALLOW_KEYS "path, write, protect, data, private, settings, commands, per_project"

/* home_allow items: "~/.cache" (copy-on-write), or
 * {path: ~/.claude, write: direct|copy|read-only|data, protect: [sub-paths],
 *  data: [sub-paths], private: [sub-paths], settings: [files], commands: [keys]}. */
static int
home_allow_item (struct yw *w, yaml_node_t *item, const char *key, hv_policy *p)
{
  const char *s = scalar (item);
  __attribute__ ((cleanup (home_access_clear))) hv_home_access a = { .write = HV_HOME_COPY };
  if (s)
    {
      if (s[0] == '\0')
        return yw_fail (w, item, key, "list items must be non-empty paths or {" HOME_ALLOW_KEYS "}");
      push_home_allow (p, s, &a);
      return 0;
    }
  if (item->type != YAML_MAPPING_NODE)
    return yw_fail (w, item, key, "expected a path or {" HOME_ALLOW_KEYS "}");
  const char *path = NULL;
  yaml_node_t *protect_node = NULL, *data_node = NULL, *settings_node = NULL, *per_project_node = NULL;
  for (yaml_node_pair_t *pair = item->data.mapping.pairs.start; pair < item->data.mapping.pairs.top; pair++)
    {
      yaml_node_t *k = yaml_document_get_node (w->doc, pair->key);
      yaml_node_t *v = yaml_document_get_node (w->doc, pair->value);
      const char *ks = scalar (k);
      if (ks && strcmp (ks, "path") == 0)
        {
          if (scalar (v) == NULL || scalar (v)[0] == '\0')
            return yw_fail (w, v, key, "path: expected a non-empty path");
          path = scalar (v);
        }
      else if (ks && strcmp (ks, "write") == 0)
        {
          const char *m = scalar (v);
          if (m && strcmp (m, "copy") == 0)
            a.write = HV_HOME_COPY;
          else if (m && strcmp (m, "direct") == 0)
            a.write = HV_HOME_DIRECT;
          else if (m && strcmp (m, "read-only") == 0)
            a.write = HV_HOME_READ_ONLY;
          else if (m && strcmp (m, "data") == 0)
            a.write = HV_HOME_DATA;
          else
            return yw_fail (w, v, key, "write: expected copy, data, direct or read-only");
        }
      else if (ks && strcmp (ks, "protect") == 0)
        {
          protect_node = v;
          if (sub_paths (w, v, key, "protect", &a.protect) < 0)
            return -1;
        }
      else if (ks && (strcmp (ks, "data") == 0 || strcmp (ks, "private") == 0))
        {
          data_node = v;
          if (sub_paths (w, v, key, ks, ks[0] == 'd' ? &a.data : &a.own) < 0)
            return -1;
          for (size_t i = 0; ks[0] == 'p' && i < a.own.n; i++)
            if (strchr (a.own.v[i], '/'))
              return yw_fail (w, v, key, "private: \"%s\": names or globs of names directly in the entry, no '/'",
                              a.own.v[i]);
        }
      else if (ks && strcmp (ks, "settings") == 0)
        {
          if (sub_paths (w, v, key, "settings", &a.settings) < 0)
            return -1;
          for (size_t i = 0; i < a.settings.n; i++)
            if (!settings_format_known (a.settings.v[i]))
              return yw_fail (w, v, key, "settings: \"%s\": only .json and .toml files can be read", a.settings.v[i]);
        }
      else if (ks && strcmp (ks, "per_project") == 0)
        {
          per_project_node = v;
          if (as_strv (w, v, key, &a.per_project) < 0)
            return -1;
        }
      else if (ks && strcmp (ks, "commands") == 0)
        {
          settings_node = v;
          if (as_strv (w, v, key, &a.commands) < 0)
            return -1;
        }
      else
        return yw_fail (w, k, key, "unknown key \"%s\" (expected " HOME_ALLOW_KEYS ")", ks ? ks : "?");
    }
  if (path == NULL)
    return yw_fail (w, item, key, "needs a path");
  if (a.protect.n && a.write != HV_HOME_DIRECT && a.write != HV_HOME_DATA)
    return yw_fail (w, protect_node, key, "protect only applies to write: direct or data");
  if ((a.data.n || a.own.n) && a.write != HV_HOME_DATA)
    return yw_fail (w, data_node, key, "data and private only apply to write: data");
  if (a.settings.n && a.commands.n == 0)
    return yw_fail (w, item, key, "settings without commands: name the keys whose values are commands");
  if (a.commands.n && a.settings.n == 0 && !settings_format_known (path))
    return yw_fail (w, settings_node, key,
                    "commands without settings: the entry itself must be a .json or .toml file");
  if (a.per_project.n && (a.write != HV_HOME_COPY || !settings_format_known (path) || strstr (path, ".toml")))
    return yw_fail (w, per_project_node, key, "per_project only applies to a copy-on-write .json file");
  push_home_allow (p, path, &a);
  return 0;
}

static int
f_home_allow (struct yw *w, yaml_node_t *v, const char *key, hv_policy *p)
{
  if (is_null (v))
    return 0;
  if (v->type != YAML_SEQUENCE_NODE)
    return yw_fail (w, v, key, "expected a list of paths or {" HOME_ALLOW_KEYS "}");
  for (yaml_node_item_t *i = v->data.sequence.items.start; i < v->data.sequence.items.top; i++)
    if (home_allow_item (w, yaml_document_get_node (w->doc, *i), key, p) < 0)
      return -1;
  return 0;
}

static int
f_tmpfs (struct yw *w, yaml_node_t *v, const char *key, hv_policy *p)
{
  if (is_null (v))
    return 0;
  if (v->type != YAML_SEQUENCE_NODE)
    return yw_fail (w, v, key, "expected a list of paths or {path, size}");
  p->tmpfs = reserve (p->tmpfs, p->n_tmpfs, (size_t) (v->data.sequence.items.top - v->data.sequence.items.start),
                      sizeof (hv_tmpfs));
  for (yaml_node_item_t *i = v->data.sequence.items.start; i < v->data.sequence.items.top; i++)
    {
      yaml_node_t *item = yaml_document_get_node (w->doc, *i);
      hv_tmpfs t = { 0 };
      if (scalar (item))
        t.path = xstrdup (scalar (item));
      else if (item->type == YAML_MAPPING_NODE)
        {
          for (yaml_node_pair_t *pair = item->data.mapping.pairs.start; pair < item->data.mapping.pairs.top; pair++)
            {
              yaml_node_t *k = yaml_document_get_node (w->doc, pair->key);
              yaml_node_t *val = yaml_document_get_node (w->doc, pair->value);
              const char *ks = scalar (k);
              if (ks && strcmp (ks, "path") == 0 && scalar (val))
                {
                  free (t.path);
                  t.path = xstrdup (scalar (val));
                }
              else if (ks && strcmp (ks, "size") == 0)
                {
                  oci_opt_u64 size = { 0 };
                  if (as_size (w, val, "tmpfs.size", &size) < 0)
                    {
                      free (t.path);
                      return -1;
                    }
                  t.size = size.value;
                }
              else
                {
                  free (t.path);
                  return yw_fail (w, k, key, "unknown key \"%s\" (expected path, size)", ks ? ks : "?");
                }
            }
        }
      if (t.path == NULL || t.path[0] != '/')
        {
          free (t.path);
          return yw_fail (w, item, key, "needs an absolute path");
        }
      if (check_path (w, item, key, t.path) < 0)
        {
          free (t.path);
          return -1;
        }
      p->tmpfs[p->n_tmpfs++] = t;
    }
  return 0;
}

static int
f_net_mode (struct yw *w, yaml_node_t *v, const char *key, hv_policy *p)
{
  const char *s = scalar (v);
  w->net_mode_node = v;
  w->net_mode_key = key;
  if (s && strcmp (s, "none") == 0)
    p->net_mode = HV_NET_NONE;
  else if (s && strcmp (s, "open") == 0)
    p->net_mode = HV_NET_OPEN;
  else if (s && strcmp (s, "allowlist") == 0)
    p->net_mode = HV_NET_ALLOWLIST;
  else if (s && strcmp (s, "host") == 0)
    return yw_fail (w, v, key, "expected none, open or allowlist (the host's network is `open`)");
  else
    return yw_fail (w, v, key, "expected none, open or allowlist");
  return 0;
}

/* LLM-safe-haven's `block_all: true`: nothing but the allow list. */
static int
f_block_all (struct yw *w, yaml_node_t *v, const char *key, hv_policy *p)
{
  oci_opt_bool b = { 0 };
  if (as_bool (w, v, key, &b) < 0)
    return -1;
  w->net_mode_node = v;
  w->net_mode_key = key;
  if (b.value)
    p->net_mode = HV_NET_ALLOWLIST;
  else if (p->net_mode == HV_NET_UNSET)
    p->net_mode = HV_NET_OPEN;
  return 0;
}

/* network.allow and network.deny entries (policy_network.h).  Each rule
 * remembers where it was written, so the layers that enforce it can
 * name it; cautions about allowed entries become warnings. */
static int
net_list (struct yw *w, yaml_node_t *v, const char *key, bool deny, hv_net_rules *rules, hv_policy *p)
{
  if (is_null (v))
    return 0;
  if (v->type != YAML_SEQUENCE_NODE)
    return yw_fail (w, v, key, "expected a list of names, *.zones, addresses or CIDRs, each with an optional :PORT");
  for (yaml_node_item_t *i = v->data.sequence.items.start; i < v->data.sequence.items.top; i++)
    {
      yaml_node_t *item = yaml_document_get_node (w->doc, *i);
      const char *s = scalar (item);
      if (s == NULL || s[0] == '\0')
        return yw_fail (w, item, key, "list items must be non-empty strings");
      cleanup_free char *where = xasprintf ("%s:%zu:%zu", w->file, item->start_mark.line + 1,
                                            item->start_mark.column + 1);
      cleanup_free char *problem = NULL;
      size_t first = rules->n;
      if (hv_net_entry_parse (s, deny, where, rules, &problem) < 0)
        return yw_fail (w, item, key, "\"%s\": %s", s, problem);
      cleanup_free char *caution = deny ? NULL : hv_net_rule_caution (&rules->v[first]);
      if (caution)
        {
          cleanup_free char *msg = xasprintf ("%s: %s.%s: \"%s\": %s", where, w->section, key, s, caution);
          oci_strv_push (&p->warnings, msg);
        }
    }
  return 0;
}

static int
f_net_allow (struct yw *w, yaml_node_t *v, const char *key, hv_policy *p)
{
  w->net_allow_node = v;
  return net_list (w, v, key, false, &p->net_allow, p);
}

static int
f_net_deny (struct yw *w, yaml_node_t *v, const char *key, hv_policy *p)
{
  return net_list (w, v, key, true, &p->net_deny, p);
}

/* One file's network section as a whole.  An `allow` list asks for an
 * allowlist: under an inherited `mode: none` (default's) it used to mean
 * no network at all, silently.  Written next to `mode: none` or `open`
 * in the same file it contradicts the mode, and is an error. */
static int
check_network_layer (struct yw *w, hv_policy *p)
{
  if (w->net_allow_node && p->net_mode == HV_NET_UNSET)
    p->net_mode = HV_NET_ALLOWLIST;
  if (p->net_allow.n && p->net_mode == HV_NET_NONE)
    return yw_fail (w, w->net_mode_node, w->net_mode_key,
                    "none, but network.allow lists \"%s\": the entries would be unused (write mode: allowlist, "
                    "or drop allow)",
                    p->net_allow.v[0].entry);
  if ((p->net_allow.n || p->net_deny.n) && p->net_mode == HV_NET_OPEN)
    {
      const char *list = p->net_allow.n ? "allow" : "deny";
      const char *first = p->net_allow.n ? p->net_allow.v[0].entry : p->net_deny.v[0].entry;
      return yw_fail (w, w->net_mode_node, w->net_mode_key,
                      "open, but network.%s lists \"%s\": the host's network filters nothing (write mode: "
                      "allowlist, or drop the list)",
                      list, first);
    }
  return 0;
}

static int
f_memory (struct yw *w, yaml_node_t *v, const char *key, hv_policy *p)
{
  return as_size (w, v, key, &p->memory);
}

static int
f_pids (struct yw *w, yaml_node_t *v, const char *key, hv_policy *p)
{
  return as_count (w, v, key, HV_POLICY_MAX_PIDS, &p->pids);
}

static int
f_nofile (struct yw *w, yaml_node_t *v, const char *key, hv_policy *p)
{
  return as_count (w, v, key, HV_POLICY_MAX_NOFILE, &p->nofile);
}

static int
f_timeout (struct yw *w, yaml_node_t *v, const char *key, hv_policy *p)
{
  const char *s = scalar (v);
  if (s == NULL || hv_parse_duration (s, &p->timeout_s.value) < 0)
    return yw_fail (w, v, key, "expected a duration such as 90s, 30m or 2h (at least 1s, at most %us = 30 days)",
                    (unsigned) HV_POLICY_MAX_TIMEOUT_S);
  p->timeout_s.set = true;
  return 0;
}

/* A number of CPUs ("2", "0.5"), in thousandths. */
static int
as_cpus (struct yw *w, yaml_node_t *v, const char *key, oci_opt_u64 *out)
{
  const char *s = scalar (v);
  if (s == NULL || hv_parse_cpus (s, &out->value) < 0)
    return yw_fail (w, v, key, "expected a number of CPUs such as 2 or 0.5 (from 0.001 to %d)", HV_POLICY_MAX_CPUS);
  out->set = true;
  return 0;
}

static int
f_cpus (struct yw *w, yaml_node_t *v, const char *key, hv_policy *p)
{
  return as_cpus (w, v, key, &p->cpus_milli);
}

/* "N%" with N a whole number from 1 to 100: a share of the host's
 * memory or CPUs (*pct true); anything else is left to parse (*pct false). */
static int
as_percent (struct yw *w, yaml_node_t *v, const char *key, oci_opt_u64 *out, bool *pct)
{
  const char *s = scalar (v);
  size_t n = s ? strlen (s) : 0;
  *pct = false;
  if (n == 0 || s[n - 1] != '%')
    return 1;
  cleanup_free char *num = xasprintf ("%.*s", (int) (n - 1), s);
  if (hv_parse_count (num, 100, &out->value) < 0)
    return yw_fail (w, v, key, "expected a share of the host such as 75%% (a whole number from 1 to 100)");
  out->set = true;
  *pct = true;
  return 0;
}

static int
f_container_memory (struct yw *w, yaml_node_t *v, const char *key, hv_policy *p)
{
  int r = as_percent (w, v, key, &p->container_memory, &p->container_memory_pct);
  return r <= 0 ? r : as_size (w, v, key, &p->container_memory);
}

static int
f_container_pids (struct yw *w, yaml_node_t *v, const char *key, hv_policy *p)
{
  return as_count (w, v, key, HV_POLICY_MAX_PIDS, &p->container_pids);
}

static int
f_container_cpus (struct yw *w, yaml_node_t *v, const char *key, hv_policy *p)
{
  int r = as_percent (w, v, key, &p->container_cpus_milli, &p->container_cpus_pct);
  return r <= 0 ? r : as_cpus (w, v, key, &p->container_cpus_milli);
}

static int
f_env_set (struct yw *w, yaml_node_t *v, const char *key, hv_policy *p)
{
  if (is_null (v))
    return 0;
  if (v->type != YAML_MAPPING_NODE)
    return yw_fail (w, v, key, "expected a mapping of NAME: value");
  p->env_set.v = reserve (p->env_set.v, p->env_set.n,
                          (size_t) (v->data.mapping.pairs.top - v->data.mapping.pairs.start), sizeof (oci_kv));
  for (yaml_node_pair_t *pair = v->data.mapping.pairs.start; pair < v->data.mapping.pairs.top; pair++)
    {
      yaml_node_t *k = yaml_document_get_node (w->doc, pair->key);
      yaml_node_t *val = yaml_document_get_node (w->doc, pair->value);
      if (!scalar (k) || !scalar (val) || strchr (scalar (k), '='))
        return yw_fail (w, k, key, "expected NAME: value with a string value");
      p->env_set.v[p->env_set.n].key = xstrdup (scalar (k));
      p->env_set.v[p->env_set.n].value = xstrdup (scalar (val));
      p->env_set.n++;
    }
  return 0;
}

static char *
where_of (const struct yw *w, const yaml_node_t *n)
{
  return xasprintf ("%s:%zu:%zu", w->file, n->start_mark.line + 1, n->start_mark.column + 1);
}

/* env.pass: names and globs.  SSH_AUTH_SOCK names a socket path on the
 * host, which the sandbox cannot reach (and should not: it is the key to
 * every host the agent holds keys for); credentials.ssh_agent forwards it
 * on purpose. */
static int
f_env_pass (struct yw *w, yaml_node_t *v, const char *key, hv_policy *p)
{
  for (yaml_node_item_t *i = v->type == YAML_SEQUENCE_NODE ? v->data.sequence.items.start : NULL;
       i && i < v->data.sequence.items.top; i++)
    {
      yaml_node_t *item = yaml_document_get_node (w->doc, *i);
      if (scalar (item) && strcmp (scalar (item), "SSH_AUTH_SOCK") == 0)
        return yw_fail (w, item, key, "SSH_AUTH_SOCK cannot be passed (its socket is not in the sandbox): "
                                      "write credentials: {ssh_agent: true} to forward the agent");
    }
  return as_strv (w, v, key, &p->env_pass);
}

/* The next of *n items, in room reserved before the list's items. */
static hv_secret_source *
push_secret (hv_secret_source **v, size_t *n)
{
  hv_secret_source *s = &(*v)[(*n)++];
  memset (s, 0, sizeof (*s));
  return s;
}

/* A token file: absolute or ~/..., never relative (it would be read
 * from wherever haven was started). */
static int
check_secret_path (struct yw *w, yaml_node_t *n, const char *key, const char *s)
{
  if (check_path (w, n, key, s) < 0)
    return -1;
  if (s[0] != '/' && !(s[0] == '~' && s[1] == '/' && s[2]))
    return yw_fail (w, n, key, "\"%s\": expected an absolute path or ~/...", s);
  return 0;
}

/* env.set_from_file {NAME: path} and env.set_from_env {NAME: HOST_NAME}. */
static int
env_from (struct yw *w, yaml_node_t *v, const char *key, hv_policy *p, bool from_file)
{
  if (is_null (v))
    return 0;
  if (v->type != YAML_MAPPING_NODE)
    return yw_fail (w, v, key, from_file ? "expected a mapping of NAME: path" : "expected a mapping of NAME: HOST_NAME");
  p->env_from = reserve (p->env_from, p->n_env_from, (size_t) (v->data.mapping.pairs.top - v->data.mapping.pairs.start),
                         sizeof (hv_secret_source));
  for (yaml_node_pair_t *pair = v->data.mapping.pairs.start; pair < v->data.mapping.pairs.top; pair++)
    {
      yaml_node_t *k = yaml_document_get_node (w->doc, pair->key);
      yaml_node_t *val = yaml_document_get_node (w->doc, pair->value);
      if (!hv_env_name_valid (scalar (k)))
        return yw_fail (w, k, key, "\"%s\" is not a variable name (letters, digits, _)", scalar (k) ? scalar (k) : "");
      const char *src = scalar (val);
      if (src == NULL || src[0] == '\0')
        return yw_fail (w, val, key, "%s: expected %s", scalar (k), from_file ? "a path" : "a host variable name");
      if (from_file && check_secret_path (w, val, key, src) < 0)
        return -1;
      if (!from_file && !hv_env_name_valid (src))
        return yw_fail (w, val, key, "\"%s\" is not a variable name (letters, digits, _)", src);
      hv_secret_source *s = push_secret (&p->env_from, &p->n_env_from);
      s->name = xstrdup (scalar (k));
      if (from_file)
        s->file = xstrdup (src);
      else
        s->host_var = xstrdup (src);
      s->where = where_of (w, k);
    }
  return 0;
}

static int
f_env_set_from_file (struct yw *w, yaml_node_t *v, const char *key, hv_policy *p)
{
  return env_from (w, v, key, p, true);
}

static int
f_env_set_from_env (struct yw *w, yaml_node_t *v, const char *key, hv_policy *p)
{
  return env_from (w, v, key, p, false);
}

/* A host name as git's credential protocol carries it: no port, no
 * glob, nothing a URL or the credentials file would read differently. */
static bool
is_host_name (const char *s)
{
  if (s == NULL || s[0] == '\0' || s[0] == '.' || s[0] == '-' || strlen (s) > 253)
    return false;
  for (const char *c = s; *c; c++)
    if (!islower ((unsigned char) *c) && !isdigit ((unsigned char) *c) && *c != '.' && *c != '-')
      return false;
  return true;
}

/* A repository path prefix as git sends it with credential.useHttpPath:
 * '/'-separated segments, none empty, "." or ".."; no leading or
 * trailing '/', no control character, no glob. */
static bool
is_repo_path (const char *s)
{
  return strlen (s) <= 1024 && hv_git_credential_path_valid (s) && !strpbrk (s, "*?[");
}

/* credentials.git items: {host: github.com, token_file: ~/..., username: x}
 * or token_env: HOST_VARIABLE instead of token_file, or from: host (the
 * host's own git credential fill answers); path: a repository prefix. */
static int
git_cred_item (struct yw *w, yaml_node_t *item, const char *key, hv_policy *p)
{
  if (item->type != YAML_MAPPING_NODE)
    return yw_fail (w, item, key, "expected {host, token_file or token_env or from: host, username, path}");
  const char *host = NULL, *file = NULL, *var = NULL, *user = NULL, *path = NULL;
  bool from_host = false;
  for (yaml_node_pair_t *pair = item->data.mapping.pairs.start; pair < item->data.mapping.pairs.top; pair++)
    {
      yaml_node_t *k = yaml_document_get_node (w->doc, pair->key);
      yaml_node_t *v = yaml_document_get_node (w->doc, pair->value);
      const char *ks = scalar (k), *vs = scalar (v);
      if (vs == NULL || vs[0] == '\0')
        return yw_fail (w, v, key, "%s: expected a non-empty string", ks ? ks : "?");
      if (ks && strcmp (ks, "host") == 0)
        {
          if (!is_host_name (vs))
            return yw_fail (w, v, key, "host: \"%s\" is not a host name (lower case, no port, no glob)", vs);
          host = vs;
        }
      else if (ks && strcmp (ks, "token_file") == 0)
        {
          if (check_secret_path (w, v, key, vs) < 0)
            return -1;
          file = vs;
        }
      else if (ks && strcmp (ks, "token_env") == 0)
        {
          if (!hv_env_name_valid (vs))
            return yw_fail (w, v, key, "token_env: \"%s\" is not a variable name", vs);
          var = vs;
        }
      else if (ks && strcmp (ks, "username") == 0)
        {
          for (const char *c = vs; *c; c++)
            if ((unsigned char) *c < 0x20 || *c == 0x7f)
              return yw_fail (w, v, key, "username: control characters are not allowed");
          user = vs;
        }
      else if (ks && strcmp (ks, "path") == 0)
        {
          if (!is_repo_path (vs))
            return yw_fail (w, v, key,
                            "path: \"%s\" is not a repository path (like org/repo.git: segments, none empty, "
                            "\".\" or \"..\", no leading '/', no glob)",
                            vs);
          path = vs;
        }
      else if (ks && strcmp (ks, "from") == 0)
        {
          if (strcmp (vs, "host") != 0)
            return yw_fail (w, v, key, "from: \"%s\": the only source to name is host (your own git credential fill); "
                                       "a token is named with token_file or token_env", vs);
          from_host = true;
        }
      else
        return yw_fail (w, k, key, "unknown key \"%s\" (expected host, token_file, token_env, from, username, path)",
                        ks ? ks : "?");
    }
  if (host == NULL)
    return yw_fail (w, item, key, "an entry needs host:");
  if (from_host && (file || var || user))
    return yw_fail (w, item, key, "%s: from: host takes the username and token your git credential fill gives: "
                                  "no token_file, token_env or username with it", host);
  if (!from_host && (file == NULL) == (var == NULL))
    return yw_fail (w, item, key, "%s: give exactly one of token_file, token_env and from: host", host);
  for (size_t i = 0; i < p->n_git_creds; i++)
    if (strcmp (p->git_creds[i].name, host) == 0)
      return yw_fail (w, item, key, "host %s is listed twice (also at %s)", host, p->git_creds[i].where);
  hv_secret_source *s = push_secret (&p->git_creds, &p->n_git_creds);
  s->name = xstrdup (host);
  s->file = file ? xstrdup (file) : NULL;
  s->host_var = var ? xstrdup (var) : NULL;
  s->username = from_host ? NULL : xstrdup (user ? user : "x-access-token");
  s->where = where_of (w, item);
  s->path = path ? xstrdup (path) : NULL;
  s->from_host = from_host;
  return 0;
}

static int
f_git_creds (struct yw *w, yaml_node_t *v, const char *key, hv_policy *p)
{
  if (is_null (v))
    return 0;
  if (v->type != YAML_SEQUENCE_NODE)
    return yw_fail (w, v, key, "expected a list of {host, token_file or token_env or from: host, username, path}");
  p->git_creds = reserve (p->git_creds, p->n_git_creds,
                          (size_t) (v->data.sequence.items.top - v->data.sequence.items.start), sizeof (hv_secret_source));
  for (yaml_node_item_t *i = v->data.sequence.items.start; i < v->data.sequence.items.top; i++)
    if (git_cred_item (w, yaml_document_get_node (w->doc, *i), key, p) < 0)
      return -1;
  return 0;
}

/* credentials.api items: {host: api.anthropic.com, header: x-api-key,
 * token_env: ANTHROPIC_API_KEY} or token_file: PATH instead of token_env.
 * The host names the provider, and the header must be one the provider
 * takes (policy_api.h): a key sent in a header the API ignores would
 * fail every request. */
static int
api_cred_item (struct yw *w, yaml_node_t *item, const char *key, hv_policy *p)
{
  if (item->type != YAML_MAPPING_NODE)
    return yw_fail (w, item, key, "expected {host, header, token_env or token_file}");
  const char *host = NULL, *header = NULL, *file = NULL, *var = NULL;
  yaml_node_t *host_node = NULL, *header_node = NULL;
  for (yaml_node_pair_t *pair = item->data.mapping.pairs.start; pair < item->data.mapping.pairs.top; pair++)
    {
      yaml_node_t *k = yaml_document_get_node (w->doc, pair->key);
      yaml_node_t *v = yaml_document_get_node (w->doc, pair->value);
      const char *ks = scalar (k), *vs = scalar (v);
      const char *known[] = { "host", "header", "token_file", "token_env" };
      size_t which = 0;
      while (which < 4 && !(ks && strcmp (ks, known[which]) == 0))
        which++;
      if (which == 4)
        return yw_fail (w, k, key, "unknown key \"%s\" (expected host, header, token_env, token_file)", ks ? ks : "?");
      if (vs == NULL || vs[0] == '\0')
        return yw_fail (w, v, key, "%s: expected a non-empty string", ks);
      /* A key given twice never gets here: the reader refuses it. */
      const char **slot = which == 0 ? &host : which == 1 ? &header : which == 2 ? &file : &var;
      if (which == 0)
        {
          if (hv_api_provider_of_host (vs) == NULL)
            return yw_fail (w, v, key,
                            "host: \"%s\" is not a model API haven's gateway serves (api.anthropic.com, api.openai.com, "
                            "generativelanguage.googleapis.com)",
                            vs);
          host_node = v;
        }
      else if (which == 1)
        header_node = v;
      else if (which == 2 && check_secret_path (w, v, key, vs) < 0)
        return -1;
      else if (which == 3 && !hv_env_name_valid (vs))
        return yw_fail (w, v, key, "token_env: \"%s\" is not a variable name", vs);
      *slot = vs;
    }
  if (host == NULL)
    return yw_fail (w, item, key, "an entry needs host:");
  const char *provider = hv_api_provider_of_host (host);
  if (header == NULL)
    return yw_fail (w, item, key, "%s: an entry needs header: (%s takes %s)", host, host, hv_api_headers_of (provider));
  const char *auth = hv_api_auth_of_header (header);
  if (auth == NULL || !hv_api_provider_takes (provider, auth))
    return yw_fail (w, header_node, key, "header: %s does not take its key in \"%s\" (it takes %s)", host, header,
                    hv_api_headers_of (provider));
  if ((file == NULL) == (var == NULL))
    return yw_fail (w, item, key, "%s: give exactly one of token_env and token_file", host);
  for (size_t i = 0; i < p->n_api_creds; i++)
    if (strcmp (p->api_creds[i].key.name, host) == 0)
      return yw_fail (w, host_node, key, "host %s is listed twice (also at %s)", host, p->api_creds[i].key.where);
  hv_api_credential *c = &p->api_creds[p->n_api_creds++];
  memset (c, 0, sizeof (*c));
  c->key.name = xstrdup (host);
  c->key.file = file ? xstrdup (file) : NULL;
  c->key.host_var = var ? xstrdup (var) : NULL;
  c->key.where = where_of (w, item);
  c->provider = xstrdup (provider);
  c->auth = xstrdup (auth);
  return 0;
}

static int
f_api_creds (struct yw *w, yaml_node_t *v, const char *key, hv_policy *p)
{
  if (is_null (v))
    return 0;
  if (v->type != YAML_SEQUENCE_NODE)
    return yw_fail (w, v, key, "expected a list of {host, header, token_env or token_file}");
  p->api_creds = reserve (p->api_creds, p->n_api_creds,
                          (size_t) (v->data.sequence.items.top - v->data.sequence.items.start), sizeof (hv_api_credential));
  for (yaml_node_item_t *i = v->data.sequence.items.start; i < v->data.sequence.items.top; i++)
    if (api_cred_item (w, yaml_document_get_node (w->doc, *i), key, p) < 0)
      return -1;
  return 0;
}

/* One item of credentials.ssh_agent.keys: a fingerprint as ssh-keygen -l
 * prints it (SHA-256 only: MD5 names a key no better than a guess), or
 * a public key file read at each run.  Anything else is refused here, so
 * that a typo never becomes a key that matches nothing silently. */
static int
ssh_key_item (struct yw *w, yaml_node_t *item, const char *key, hv_policy *p)
{
  const char *s = scalar (item);
  if (s == NULL || s[0] == '\0')
    return yw_fail (w, item, key, "keys: expected \"SHA256:...\" or the path of a public key file");
  if (str_has_prefix (s, "SHA256:"))
    {
      if (!hv_ssh_fingerprint_valid (s))
        return yw_fail (w, item, key, "keys: \"%s\" is not a SHA-256 fingerprint as ssh-keygen -l prints it "
                                      "(SHA256: and 43 base64 digits)", s);
    }
  else if (strncasecmp (s, "MD5:", 4) == 0 || strncasecmp (s, "SHA", 3) == 0)
    return yw_fail (w, item, key, "keys: \"%s\": only SHA256: fingerprints are taken (ssh-keygen -l -E sha256)", s);
  else
    {
      if (check_secret_path (w, item, key, s) < 0)
        return -1;
      size_t n = strlen (s);
      if (n < 4 || strcmp (s + n - 4, ".pub") != 0)
        return yw_fail (w, item, key, "keys: \"%s\": a key file must be a public key (*.pub): the private key "
                                      "stays in your agent", s);
    }
  for (size_t i = 0; i < p->ssh_agent_keys.n; i++)
    if (strcmp (p->ssh_agent_keys.v[i], s) == 0)
      return yw_fail (w, item, key, "keys: %s is listed twice (also at %s)", s, p->ssh_agent_keys_where.v[i]);
  cleanup_free char *where = where_of (w, item);
  oci_strv_push (&p->ssh_agent_keys, s);
  oci_strv_push (&p->ssh_agent_keys_where, where);
  return 0;
}

/* credentials.ssh_agent: true (the whole agent), false, or {keys: [...]}
 * (a view of the agent with only these keys, ssh_agent_view.h). */
static int
f_ssh_agent (struct yw *w, yaml_node_t *v, const char *key, hv_policy *p)
{
  free (p->ssh_agent_where);
  p->ssh_agent_where = where_of (w, v);
  oci_strv_free (&p->ssh_agent_keys);
  oci_strv_free (&p->ssh_agent_keys_where);
  if (v->type != YAML_MAPPING_NODE)
    return as_bool (w, v, key, &p->ssh_agent);
  yaml_node_t *keys = NULL;
  for (yaml_node_pair_t *pair = v->data.mapping.pairs.start; pair < v->data.mapping.pairs.top; pair++)
    {
      yaml_node_t *k = yaml_document_get_node (w->doc, pair->key);
      const char *ks = scalar (k);
      if (ks == NULL || strcmp (ks, "keys") != 0)
        return yw_fail (w, k, key, "unknown key \"%s\" (expected keys: a list of fingerprints or public key files)",
                        ks ? ks : "?");
      keys = yaml_document_get_node (w->doc, pair->value);
    }
  if (keys == NULL)
    return yw_fail (w, v, key, "expected true, false or {keys: [...]}");
  if (keys->type != YAML_SEQUENCE_NODE)
    return yw_fail (w, keys, key, "keys: expected a list of \"SHA256:...\" fingerprints or public key files");
  size_t n = (size_t) (keys->data.sequence.items.top - keys->data.sequence.items.start);
  /* An empty list would be an agent with no key: write false for that. */
  if (n == 0 || n > HV_SSH_AGENT_VIEW_MAX_KEYS)
    return yw_fail (w, keys, key, "keys: expected 1 to %d keys (false: no agent at all)", HV_SSH_AGENT_VIEW_MAX_KEYS);
  for (yaml_node_item_t *i = keys->data.sequence.items.start; i < keys->data.sequence.items.top; i++)
    if (ssh_key_item (w, yaml_document_get_node (w->doc, *i), key, p) < 0)
      return -1;
  p->ssh_agent = (oci_opt_bool){ true, true };
  return 0;
}

static const struct field filesystem_fields[] = {
  { "read_only", f_read_only }, { "read_write", f_read_write }, { "block", f_block },
  { "protect", f_protect },     { "hide_home", f_hide_home },   { "home_allow", f_home_allow },
  { "tmpfs", f_tmpfs },         { "project_writable", f_project_writable }, { "project_links", f_project_links },
  { NULL, NULL },
};
static const struct field network_fields[] = {
  { "mode", f_net_mode },           { "allow", f_net_allow }, { "deny", f_net_deny },
  { "block_all", f_block_all }, { NULL, NULL },
};
static const struct field process_fields[] = {
  { "allow_exec", f_allow_exec }, { "block_shell", f_block_shell }, { "capabilities", f_capabilities }, { NULL, NULL },
};
static const struct field syscall_fields[] = {
  { "profile", f_syscall_profile }, { "allow", f_syscall_allow }, { "deny", f_syscall_deny }, { NULL, NULL },
};
static const struct field container_resource_fields[] = {
  { "memory", f_container_memory }, { "cpus", f_container_cpus }, { "pids", f_container_pids }, { NULL, NULL },
};
static int s_container_resources (struct yw *w, yaml_node_t *v, const char *key, hv_policy *p);
static const struct field resource_fields[] = {
  { "memory", f_memory }, { "cpus", f_cpus }, { "pids", f_pids }, { "nofile", f_nofile }, { "timeout", f_timeout },
  { "containers", s_container_resources }, { NULL, NULL },
};
static const struct field container_env_fields[] = {
  { "pass", f_env_containers_pass }, { NULL, NULL },
};
static int s_container_env (struct yw *w, yaml_node_t *v, const char *key, hv_policy *p);
static const struct field env_fields[] = {
  { "pass", f_env_pass },
  { "containers", s_container_env },
  { "set", f_env_set },
  { "deny", f_env_deny },
  { "set_from_file", f_env_set_from_file },
  { "set_from_env", f_env_set_from_env },
  { NULL, NULL },
};
static const struct field credentials_fields[] = {
  { "ssh_agent", f_ssh_agent }, { "git", f_git_creds }, { "api", f_api_creds }, { NULL, NULL },
};
/* audit.log, and where it was written: the compiler refuses a trail the
 * sandbox could write, naming this place (policy_compile.c). */
static int
f_audit_log (struct yw *w, yaml_node_t *v, const char *key, hv_policy *p)
{
  if (as_string (w, v, key, &p->audit_log) < 0)
    return -1;
  free (p->audit_log_where);
  p->audit_log_where = where_of (w, v);
  return 0;
}

static const struct field audit_fields[] = { { "log", f_audit_log }, { NULL, NULL } };
static const struct field kubernetes_fields[] = { { "service_account_token", f_k8s_token }, { NULL, NULL } };

#define SECTION(fname, fields)                                                                     \
  static int fname (struct yw *w, yaml_node_t *v, const char *key, hv_policy *p)                   \
  {                                                                                                \
    const char *saved = w->section;                                                                \
    w->section = key;                                                                              \
    int r = parse_mapping (w, v, fields, p);                                                       \
    w->section = saved;                                                                            \
    return r;                                                                                      \
  }

SECTION (s_filesystem, filesystem_fields)

static int
s_network (struct yw *w, yaml_node_t *v, const char *key, hv_policy *p)
{
  const char *saved = w->section;
  w->section = key;
  int r = parse_mapping (w, v, network_fields, p);
  if (r == 0)
    r = check_network_layer (w, p);
  w->section = saved;
  return r;
}
SECTION (s_process, process_fields)
SECTION (s_syscalls, syscall_fields)
SECTION (s_resources, resource_fields)
SECTION (s_container_resources, container_resource_fields)
SECTION (s_container_env, container_env_fields)
SECTION (s_credentials, credentials_fields)

/* One variable, one source: a name in two of set, set_from_file and
 * set_from_env of one file would leave the winner to the reader's guess. */
static int
s_env (struct yw *w, yaml_node_t *v, const char *key, hv_policy *p)
{
  const char *saved = w->section;
  w->section = key;
  size_t set_before = p->env_set.n, from_before = p->n_env_from;
  int r = parse_mapping (w, v, env_fields, p);
  for (size_t i = from_before; r == 0 && i < p->n_env_from; i++)
    {
      for (size_t j = set_before; r == 0 && j < p->env_set.n; j++)
        if (strcmp (p->env_set.v[j].key, p->env_from[i].name) == 0)
          r = hv_error_set (w->err, 0, "%s: env: %s is in env.set too: give one source", p->env_from[i].where,
                            p->env_from[i].name);
      for (size_t j = from_before; r == 0 && j < i; j++)
        if (strcmp (p->env_from[j].name, p->env_from[i].name) == 0)
          r = hv_error_set (w->err, 0, "%s: env: %s is in set_from_file and set_from_env: give one source",
                            p->env_from[i].where, p->env_from[i].name);
    }
  w->section = saved;
  return r;
}
SECTION (s_audit, audit_fields)
SECTION (s_kubernetes, kubernetes_fields)

static char *pending_extends;

static int
f_extends (struct yw *w, yaml_node_t *v, const char *key, hv_policy *p)
{
  (void) p;
  return as_string (w, v, key, &pending_extends);
}

static const struct field top_fields[] = {
  { "name", f_name },         { "description", f_description }, { "extends", f_extends },
  { "filesystem", s_filesystem }, { "network", s_network },     { "process", s_process },
  { "syscalls", s_syscalls }, { "resources", s_resources },     { "env", s_env },
  { "audit", s_audit },       { "best_effort", f_best_effort }, { "credentials", s_credentials },
  { "kubernetes", s_kubernetes }, { NULL, NULL },
};

static int
yaml_syntax_error (yaml_parser_t *parser, const char *file, hv_error **err)
{
  return hv_error_set (err, 0, "%s:%zu:%zu: invalid YAML: %s%s%s", file, parser->problem_mark.line + 1,
                       parser->problem_mark.column + 1, parser->problem ? parser->problem : "syntax error",
                       parser->context ? " " : "", parser->context ? parser->context : "");
}

/* One pass over the event stream, in time linear in the input: at most
 * one document, nested at most HV_POLICY_MAX_DEPTH levels.  Stops at the
 * first offending event, so a 100k-deep document costs 64 levels. */
static int
scan_structure (const char *text, size_t len, const char *file, hv_error **err)
{
  yaml_parser_t parser;
  yaml_event_t ev;
  int depth = 0, documents = 0, r = -1;
  yaml_parser_initialize (&parser);
  yaml_parser_set_input_string (&parser, (const unsigned char *) text, len);
  for (;;)
    {
      if (!yaml_parser_parse (&parser, &ev))
        {
          yaml_syntax_error (&parser, file, err);
          break;
        }
      yaml_event_type_t type = ev.type;
      yaml_mark_t mark = ev.start_mark;
      yaml_event_delete (&ev);
      if (type == YAML_STREAM_END_EVENT)
        {
          r = 0;
          break;
        }
      if (type == YAML_DOCUMENT_START_EVENT && ++documents > 1)
        {
          /* Everything after the first document used to be ignored. */
          hv_error_set (err, 0, "%s:%zu:%zu: a second YAML document: a policy file holds exactly one", file,
                        mark.line + 1, mark.column + 1);
          break;
        }
      if ((type == YAML_SEQUENCE_START_EVENT || type == YAML_MAPPING_START_EVENT) && ++depth > HV_POLICY_MAX_DEPTH)
        {
          hv_error_set (err, 0, "%s:%zu:%zu: nested deeper than %d levels", file, mark.line + 1, mark.column + 1,
                        HV_POLICY_MAX_DEPTH);
          break;
        }
      if (type == YAML_SEQUENCE_END_EVENT || type == YAML_MAPPING_END_EVENT)
        depth--;
    }
  yaml_parser_delete (&parser);
  return r;
}

struct key_ref
{
  const char *key;
  size_t index;
  yaml_node_t *node;
};

static int
compare_key_ref (const void *a, const void *b)
{
  const struct key_ref *x = a, *y = b;
  int c = strcmp (x->key, y->key);
  return c ? c : (x->index > y->index) - (x->index < y->index);
}

/* A key given twice in any mapping is an error, wherever it is: YAML
 * loaders disagree on which one wins, and libyaml's order made the last
 * one silently replace the first (`memory: 1g` ... `memory: 64g`).
 * Sorting keeps this O(n log n) for a mapping of any width. */
static int
check_duplicate_keys (struct yw *w)
{
  for (yaml_node_t *n = w->doc->nodes.start; n < w->doc->nodes.top; n++)
    {
      if (n->type != YAML_MAPPING_NODE)
        continue;
      size_t count = (size_t) (n->data.mapping.pairs.top - n->data.mapping.pairs.start);
      if (count < 2)
        continue;
      cleanup_free struct key_ref *refs = xmalloc0 (count * sizeof (*refs));
      size_t m = 0;
      for (size_t i = 0; i < count; i++)
        {
          yaml_node_t *k = yaml_document_get_node (w->doc, n->data.mapping.pairs.start[i].key);
          if (scalar (k))
            refs[m++] = (struct key_ref) { scalar (k), i, k };
        }
      qsort (refs, m, sizeof (*refs), compare_key_ref);
      const struct key_ref *dup = NULL, *first = NULL;
      for (size_t i = 1; i < m; i++)
        if (strcmp (refs[i - 1].key, refs[i].key) == 0 && (dup == NULL || refs[i].index < dup->index))
          {
            dup = &refs[i];
            first = &refs[i - 1];
          }
      if (dup)
        return yw_fail (w, dup->node, NULL, "duplicate key \"%s\" (also at line %zu)", dup->key,
                        first->node->start_mark.line + 1);
    }
  return 0;
}

int
hv_policy_parse (const char *text, size_t len, const char *file, hv_policy *out, char **extends, hv_error **err)
{
  yaml_parser_t parser;
  yaml_document_t doc;
  int r = -1;
  if (scan_structure (text, len, file, err) < 0)
    return -1;
  yaml_parser_initialize (&parser);
  yaml_parser_set_input_string (&parser, (const unsigned char *) text, len);
  if (!yaml_parser_load (&parser, &doc))
    {
      yaml_syntax_error (&parser, file, err);
      yaml_parser_delete (&parser);
      return -1;
    }
  struct yw w = { .file = file, .doc = &doc, .err = err };
  yaml_node_t *root = yaml_document_get_root_node (&doc);
  pending_extends = NULL;
  if (root == NULL)
    r = 0; /* an empty file is an empty policy */
  else if (check_duplicate_keys (&w) < 0)
    r = -1;
  else
    r = parse_mapping (&w, root, top_fields, out);
  if (extends)
    *extends = pending_extends;
  else
    free (pending_extends);
  pending_extends = NULL;
  free (out->file);
  out->file = xstrdup (file);
  yaml_document_delete (&doc);
  yaml_parser_delete (&parser);
  return r;
}
