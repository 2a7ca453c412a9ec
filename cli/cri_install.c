#include "config.h"
#include "cri_install.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "haven_annotations.h"
#include "toml_scan.h"
#include "utils.h"

/* Where containerd 1.x (config version 2) keeps the CRI plugin's runtime
 * handlers; the handler's own name follows. */
static const char *const runtimes_path[] = { "plugins", "io.containerd.grpc.v1.cri", "containerd", "runtimes" };
#define RUNTIMES_DEPTH (sizeof (runtimes_path) / sizeof (runtimes_path[0]))

#define BLOCK_BEGIN "# >>> haven runtime handler \""
#define BLOCK_END "# <<< haven runtime handler \""
#define PREAMBLE                                                                                                   \
  "# Written by `haven install containerd` (there was no configuration): containerd's\n"                         \
  "# defaults apply to everything not set here.\n"                                                               \
  "version = 2\n"

/* Does path (depth n) start with the handler's table (runtimes_path, then
 * name) up to m components? */
static bool
on_handler_path (char *const *path, size_t n, const char *name, size_t m)
{
  if (n < m)
    return false;
  for (size_t i = 0; i < m; i++)
    {
      const char *want = i < RUNTIMES_DEPTH ? runtimes_path[i] : i == RUNTIMES_DEPTH ? name : NULL;
      if (want == NULL || strcmp (path[i], want) != 0)
        return false;
    }
  return true;
}

/* A comment line, without its indentation, is the marker of name's block
 * (prefix BLOCK_BEGIN or BLOCK_END). */
static bool
is_marker (const char *comment, const char *prefix, const char *name)
{
  while (*comment == ' ' || *comment == '\t')
    comment++;
  if (!str_has_prefix (comment, prefix))
    return false;
  comment += strlen (prefix);
  size_t n = strlen (name);
  return strncmp (comment, name, n) == 0 && comment[n] == '"';
}

static char *
dotted (char *const *path, size_t n)
{
  char *out = xstrdup ("");
  for (size_t i = 0; i < n; i++)
    {
      char *k = hv_toml_key (path[i]);
      char *next = xasprintf ("%s%s%s", out, i ? "." : "", k);
      free (k);
      free (out);
      out = next;
    }
  return out;
}

/* A one-line string value's text (quotes off; escapes make it NULL: the
 * values read here never need them). */
static char *
plain_string (const char *value)
{
  size_t n = value ? strlen (value) : 0;
  if (n < 2 || (value[0] != '"' && value[0] != '\'') || value[n - 1] != value[0] || strchr (value, '\\'))
    return NULL;
  return strndup (value + 1, n - 2);
}

/* What the edit found in the file. */
struct containerd_file
{
  ssize_t begin, end;   /* items of our block's markers, or -1 */
  bool has_statements;  /* tables or keys outside our block */
  bool version_2;       /* version = 2 outside our block */
  bool systemd_cgroup;  /* the default handler's SystemdCgroup = true */
  char *default_name;   /* default_runtime_name, when set */
  char *note;
};

/* Our block's markers, checked: one begin, its end after it, and no key
 * after the end that would fall into the block's last table. */
static int
find_block (const struct hv_toml_doc *doc, const char *path, const char *name, struct containerd_file *f,
            hv_error **err)
{
  f->begin = f->end = -1;
  for (size_t i = 0; i < doc->n; i++)
    {
      const struct hv_toml_item *it = &doc->items[i];
      if (it->kind != HV_TOML_COMMENT)
        continue;
      if (is_marker (it->comment, BLOCK_BEGIN, name))
        {
          if (f->begin >= 0)
            return hv_error_set (err, 0, "%s:%u: a second block of runtime handler \"%s\" (the first is at line %u)",
                                 path, it->line, name, doc->items[f->begin].line);
          f->begin = (ssize_t) i;
        }
      else if (is_marker (it->comment, BLOCK_END, name) && f->begin >= 0 && f->end < 0)
        f->end = (ssize_t) i;
    }
  if (f->begin >= 0 && f->end < 0)
    return hv_error_set (err, 0, "%s:%u: the block of runtime handler \"%s\" has no end line (\"%s%s\"): not edited",
                         path, doc->items[f->begin].line, name, BLOCK_END, name);
  /* Between the markers, our lines only: the begin marker must be
   * followed by tables, or nothing of someone else's is inside. */
  for (ssize_t i = f->begin + 1; f->begin >= 0 && i < f->end; i++)
    {
      const struct hv_toml_item *it = &doc->items[i];
      if (it->kind == HV_TOML_COMMENT)
        continue;
      if (!on_handler_path (it->path, it->depth, name, RUNTIMES_DEPTH + 1))
        return hv_error_set (err, 0,
                             "%s:%u: inside the block of runtime handler \"%s\", a line that is not its own: not "
                             "edited (move it out of the block)",
                             path, it->line, name);
    }
  size_t after = f->end >= 0 ? (size_t) f->end + 1 : doc->n;
  while (after < doc->n && doc->items[after].kind == HV_TOML_COMMENT)
    after++;
  if (after < doc->n)
    {
      const struct hv_toml_item *next = &doc->items[after];
      if (next->kind == HV_TOML_KEYVAL)
        return hv_error_set (err, 0,
                             "%s:%u: this key follows the block of runtime handler \"%s\" without a table of its "
                             "own, so it belongs to the block's last table: not edited (give it its [table])",
                             path, next->line, name);
    }
  return 0;
}

/* A statement outside our block that defines the handler, or that makes
 * its table impossible to add as [table] lines. */
static int
check_statement (const struct hv_toml_item *it, const char *path, const char *name, hv_error **err)
{
  size_t p = RUNTIMES_DEPTH + 1;
  cleanup_free char *key = dotted (it->path, it->depth);
  if (on_handler_path (it->path, it->depth, name, p))
    return hv_error_set (err, 0,
                         "%s:%u: runtime handler \"%s\" is already configured here, not by haven install "
                         "containerd: not changed (choose another --name, or remove it first)",
                         path, it->line, name);
  bool above = on_handler_path ((char *const *) it->path, it->depth, name, it->depth) && it->depth < p;
  if (it->kind == HV_TOML_ARRAY_TABLE && above)
    return hv_error_set (err, 0, "%s:%u: [[%s]] is an array of tables where containerd keeps its runtime handlers: "
                                 "not edited",
                         path, it->line, key);
  if (it->kind != HV_TOML_KEYVAL)
    return 0;
  if (above)
    return hv_error_set (err, 0,
                         "%s:%u: %s is set as a value (an inline table) where the handler's table goes: not "
                         "edited (write it as [%s] tables)",
                         path, it->line, key, key);
  /* Tables that dotted keys define (containerd.runtimes.runc.x = ...)
   * may get sub-tables from [table] lines (TOML 1.0; containerd 1.6 reads
   * them so): nothing to refuse there. */
  return 0;
}

/* Item i is one of our block's lines, markers included. */
static bool
in_block (const struct containerd_file *f, size_t i)
{
  return f->begin >= 0 && (ssize_t) i >= f->begin && (ssize_t) i <= f->end;
}

/* Notes, one a line. */
static void
add_note (struct containerd_file *f, char *note)
{
  char *all = f->note ? xasprintf ("%s\n%s", f->note, note) : xstrdup (note);
  free (note);
  free (f->note);
  f->note = all;
}

static bool
is_key (const struct hv_toml_item *it, const char *const *want, size_t n)
{
  if (it->kind != HV_TOML_KEYVAL || it->depth != n)
    return false;
  for (size_t i = 0; i < n; i++)
    if (strcmp (it->path[i], want[i]) != 0)
      return false;
  return true;
}

/* What containerd will make of the file, as far as the handler goes. */
static int
read_facts (const struct hv_toml_doc *doc, const char *path, const struct hv_cri_opts *o, struct containerd_file *f,
            hv_error **err)
{
  static const char *const version[] = { "version" };
  static const char *const disabled[] = { "disabled_plugins" };
  static const char *const imports[] = { "imports" };
  static const char *const dflt[] = { "plugins", "io.containerd.grpc.v1.cri", "containerd", "default_runtime_name" };
  /* First the default handler's name, then its options. */
  for (size_t i = 0; i < doc->n; i++)
    if (is_key (&doc->items[i], dflt, 4) && !in_block (f, i))
      {
        free (f->default_name);
        f->default_name = plain_string (doc->items[i].value);
      }
  for (size_t i = 0; i < doc->n; i++)
    {
      const struct hv_toml_item *it = &doc->items[i];
      if (in_block (f, i))
        continue;
      if (it->kind == HV_TOML_COMMENT)
        continue;
      f->has_statements = true;
      if (check_statement (it, path, o->name, err) < 0)
        return -1;
      if (is_key (it, version, 1))
        {
          if (strcmp (it->value, "2") != 0)
            return hv_error_set (err, 0,
                                 "%s:%u: version = %s: haven install containerd edits version 2 configurations "
                                 "(containerd 1.x): not edited",
                                 path, it->line, it->value);
          f->version_2 = true;
        }
      if (is_key (it, disabled, 1)
          && (strstr (it->value, "\"cri\"") || strstr (it->value, "'cri'") || strstr (it->value, "io.containerd.grpc.v1.cri")))
        add_note (f, xasprintf ("%s:%u: disabled_plugins turns containerd's CRI plugin off: no runtime handler is "
                                "used until it is taken out of that list",
                                path, it->line));
      if (is_key (it, imports, 1) && strcmp (it->value, "[]") != 0)
        add_note (f, xasprintf ("%s:%u: the files in imports are not looked at: a handler \"%s\" defined there "
                                "would conflict with this one",
                                path, it->line, o->name));
      const char *handler = f->default_name ? f->default_name : "runc";
      if (it->kind == HV_TOML_KEYVAL && it->depth == RUNTIMES_DEPTH + 3
          && on_handler_path (it->path, RUNTIMES_DEPTH + 1, handler, RUNTIMES_DEPTH + 1)
          && strcmp (it->path[RUNTIMES_DEPTH + 1], "options") == 0
          && strcmp (it->path[RUNTIMES_DEPTH + 2], "SystemdCgroup") == 0)
        f->systemd_cgroup = strcmp (it->value, "true") == 0;
    }
  if (f->has_statements && !f->version_2)
    return hv_error_set (err, 0,
                         "%s: no \"version = 2\" line: containerd reads it as a version 1 configuration, whose "
                         "plugin names differ: not edited (add version = 2 and use the version 2 names)",
                         path);
  return 0;
}

static char *
block_text (const struct hv_cri_opts *o, bool systemd_cgroup)
{
  cleanup_free char *key = hv_toml_key (o->name);
  cleanup_free char *binary = hv_toml_string (o->binary);
  const char *table = "plugins.\"io.containerd.grpc.v1.cri\".containerd.runtimes";
  return xasprintf (BLOCK_BEGIN "%s\": written by `haven install containerd`; `haven uninstall containerd --name "
                                "%s` takes this block out\n"
                                "[%s.%s]\n"
                                "  runtime_type = \"io.containerd.runc.v2\"\n"
                                "%s"
                                "[%s.%s.options]\n"
                                "  BinaryName = %s\n"
                                "%s" BLOCK_END "%s\"\n",
                    o->name, o->name, table, key,
                    o->annotations ? "  # A pod may ask for a stricter haven policy (never a weaker one).\n"
                                     "  pod_annotations = [\"" HV_POLICY_ANNOTATION "\"]\n"
                                   : "",
                    table, key, binary,
                    systemd_cgroup ? "  # As the default handler's: the kubelet's cgroup driver is systemd.\n"
                                     "  SystemdCgroup = true\n"
                                   : "",
                    o->name);
}

static bool
blank (const char *s)
{
  for (; s && *s; s++)
    if (*s != ' ' && *s != '\t' && *s != '\n' && *s != '\r')
      return false;
  return true;
}

/* text with [from, to) replaced by insert; a removal also takes the blank
 * line that installing put before the block. */
static char *
splice (const char *text, size_t from, size_t to, const char *insert, bool remove)
{
  if (remove && from >= 2 && text[from - 1] == '\n' && text[from - 2] == '\n')
    from--;
  return xasprintf ("%.*s%s%s", (int) from, text, insert, text + to);
}

int
hv_containerd_config_edit (const char *old_text, const char *path, const struct hv_cri_opts *o, bool remove,
                           char **out, char **note, hv_error **err)
{
  const char *text = old_text ? old_text : "";
  cleanup_toml_doc struct hv_toml_doc doc = { 0 };
  struct containerd_file f = { 0 };
  *out = NULL;
  *note = NULL;
  if (hv_toml_scan (text, path, &doc, err) < 0)
    return -1;
  int r = find_block (&doc, path, o->name, &f, err);
  if (r == 0)
    r = read_facts (&doc, path, o, &f, err);
  free (f.default_name);
  if (r < 0)
    {
      free (f.note);
      return -1;
    }
  cleanup_free char *block = remove ? xstrdup ("") : block_text (o, f.systemd_cgroup);
  if (f.begin >= 0)
    *out = splice (text, doc.items[f.begin].start, doc.items[f.end].end, block, remove);
  else if (remove)
    *out = xstrdup (text);
  else if (blank (text))
    *out = xasprintf ("%s\n%s", PREAMBLE, block);
  else
    {
      size_t n = strlen (text);
      /* A blank line between the file's last line and the block. */
      *out = xasprintf ("%s%s%s%s", text, text[n - 1] == '\n' ? "" : "\n", "\n", f.has_statements ? "" : PREAMBLE);
      char *full = xasprintf ("%s%s%s", *out, f.has_statements ? "" : "\n", block);
      free (*out);
      *out = full;
    }
  *note = remove ? NULL : f.note;
  if (remove)
    free (f.note);
  return 0;
}

char *
hv_crio_conf_text (const struct hv_cri_opts *o)
{
  cleanup_free char *key = hv_toml_key (o->name);
  cleanup_free char *binary = hv_toml_string (o->binary);
  return xasprintf ("# Written by `haven install crio`; `haven uninstall crio` removes it.\n"
                    "# haven-runc as CRI-O's runtime handler \"%s\" (a RuntimeClass with handler: %s).\n"
                    "[crio.runtime.runtimes.%s]\n"
                    "runtime_path = %s\n"
                    "runtime_type = \"oci\"\n"
                    "# haven-runc's own state directory, as when it runs under Docker or Podman.\n"
                    "runtime_root = \"/run/haven\"\n"
                    "# conmon in the pod's cgroup: right for both of CRI-O's cgroup managers.\n"
                    "monitor_cgroup = \"pod\"\n"
                    "monitor_env = [\"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin\"]\n"
                    "%s",
                    o->name, o->name, key, binary,
                    o->annotations ? "# A pod may ask for a stricter haven policy (never a weaker one).\n"
                                     "allowed_annotations = [\"" HV_POLICY_ANNOTATION "\"]\n"
                                   : "");
}

/* s as one word of sh: single quotes, a quote inside as '\''. */
static char *
sh_quote (const char *s)
{
  char *out = xmalloc0 (strlen (s) * 4 + 3), *p = out;
  *p++ = '\'';
  for (; *s; s++)
    if (*s == '\'')
      {
        memcpy (p, "'\\''", 4);
        p += 4;
      }
    else
      *p++ = *s;
  *p++ = '\'';
  return out;
}

char *
hv_cri_wrapper_text (const char *engine, const char *name, const char *runtime, const char *policy, bool lock)
{
  cleanup_free char *rt = sh_quote (runtime);
  cleanup_free char *pol = sh_quote (policy);
  return xasprintf ("#!/bin/sh\n"
                    "# Written by `haven install %s`; `haven uninstall %s --name %s` removes it.\n"
                    "# Runtime handler \"%s\" is haven-runc under policy %s: the engine passes a runtime\n"
                    "# no arguments of its own, so the handler's binary is this script.\n"
                    "exec %s --policy %s%s \"$@\"\n",
                    engine, engine, name, name, pol, rt, pol, lock ? " --policy-lock" : "");
}
