#include "config.h"
#include "engine_install.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <yajl/yajl_gen.h>
#include <yajl/yajl_parse.h>
#include <yajl/yajl_tree.h>

#include "cli.h"
#include "engine_api_key.h"
#include "file_read.h"
#include "haven_annotations.h"
#include "json_gen.h"
#include "policy.h"
#include "policy_load.h"
#include "container_check.h"
#include "utils.h"

/* Podman's own default runtime_supports_json (containers.conf).  A drop-in
 * replaces the whole list, so the defaults are repeated in ours. */
static const char *const podman_json_runtimes[] = { "crun", "runc", "kata", "runsc", "krun" };

#define DROP_IN_MARKER "# Written by `haven install podman`"

/* Where `line` and `col` (1-based) of byte offset `off` are. */
static void
line_col (const char *text, size_t off, unsigned *line, unsigned *col)
{
  *line = 1;
  *col = 1;
  for (size_t i = 0; i < off && text[i]; i++)
    {
      if (text[i] == '\n')
        {
          (*line)++;
          *col = 1;
        }
      else
        (*col)++;
    }
}

/* Strict validation first: yajl_tree_parse accepts comments, dockerd does
 * not, and a file dockerd refuses must not look fine after our rewrite. */
static int
validate_json (const char *text, const char *path, hv_error **err)
{
  size_t len = strlen (text);
  yajl_handle h = yajl_alloc (NULL, NULL, NULL);
  yajl_config (h, yajl_allow_comments, 0);
  yajl_status s = yajl_parse (h, (const unsigned char *) text, len);
  size_t consumed = yajl_get_bytes_consumed (h);
  if (s == yajl_status_ok)
    {
      s = yajl_complete_parse (h);
      consumed = len;
    }
  if (s != yajl_status_ok)
    {
      unsigned char *msg = yajl_get_error (h, 0, (const unsigned char *) text, len);
      char *m = (char *) msg;
      size_t l = strlen (m);
      while (l > 0 && (m[l - 1] == '\n' || m[l - 1] == ' '))
        m[--l] = '\0';
      /* yajl stops at a bad token's first byte (lexical errors), just
       * after an unexpected one (parse errors), or at the end. */
      unsigned line, col;
      size_t at = consumed > 0 && !strstr (m, "premature EOF") && !str_has_prefix (m, "lexical error") ? consumed - 1
                                                                                                     : consumed;
      line_col (text, at, &line, &col);
      hv_error_set (err, 0, "%s:%u:%u: invalid JSON: %s", path, line, col, m);
      yajl_free_error (h, msg);
      yajl_free (h);
      return -1;
    }
  yajl_free (h);
  return 0;
}

static bool
has_api_keys (const struct hv_install_opts *o)
{
  for (size_t i = 0; i < HV_GW_N_PROVIDERS; i++)
    if (o->api_keys[i])
      return true;
  return false;
}

static void
emit_entry (yajl_gen g, const struct hv_install_opts *o)
{
  yajl_gen_map_open (g);
  jg_kv (g, "path", o->runtime);
  if (o->policy || o->policy_lock || has_api_keys (o))
    {
      jg_str (g, "runtimeArgs");
      yajl_gen_array_open (g);
      if (o->policy)
        {
          jg_str (g, "--policy");
          jg_str (g, o->policy);
        }
      if (o->policy_lock)
        jg_str (g, "--policy-lock");
      for (size_t i = 0; i < HV_GW_N_PROVIDERS; i++)
        if (o->api_keys[i])
          {
            cleanup_free char *arg = xasprintf ("%s=%s", hv_gw_api_get ((hv_gw_provider) i)->name, o->api_keys[i]);
            jg_str (g, "--" HV_API_KEY_OPTION);
            jg_str (g, arg);
          }
      yajl_gen_array_close (g);
    }
  yajl_gen_map_close (g);
}

/* Index of the last member named key (Docker, like Go's encoding/json,
 * uses the last of duplicate keys), or -1. */
static ssize_t
last_index (yajl_val obj, const char *key)
{
  for (size_t i = obj->u.object.len; i-- > 0;)
    if (strcmp (obj->u.object.keys[i], key) == 0)
      return (ssize_t) i;
  return -1;
}

static bool
blank (const char *s)
{
  for (; s && *s; s++)
    if (*s != ' ' && *s != '\t' && *s != '\n' && *s != '\r')
      return false;
  return true;
}

/* The members of daemon.json the edit looks at. */
struct docker_config
{
  yajl_val root;        /* the top-level object; NULL for a blank file */
  ssize_t runtimes_at;  /* index of the last "runtimes", or -1 */
  ssize_t default_at;   /* index of the last "default-runtime", or -1 */
  yajl_val runtimes;    /* its object; NULL when absent or null */
  bool default_is_ours; /* "default-runtime" names our runtime */
};

/* OLD_TEXT parsed: nothing for a blank file, else a JSON object. */
static int
parse_daemon_json (const char *old_text, const char *path, yajl_val *root, hv_error **err)
{
  *root = NULL;
  if (blank (old_text))
    return 0;
  if (validate_json (old_text, path, err) < 0)
    return -1;
  char ebuf[256];
  *root = yajl_tree_parse (old_text, ebuf, sizeof (ebuf));
  if (*root == NULL)
    return hv_error_set (err, 0, "%s: invalid JSON: %s", path, ebuf);
  if (!YAJL_IS_OBJECT (*root))
    {
      yajl_tree_free (*root);
      *root = NULL;
      return hv_error_set (err, 0, "%s: expected a JSON object at the top level", path);
    }
  return 0;
}

static int
find_members (struct docker_config *dc, const char *path, const struct hv_install_opts *o, hv_error **err)
{
  yajl_val root = dc->root;
  dc->runtimes_at = root ? last_index (root, "runtimes") : -1;
  dc->default_at = root ? last_index (root, "default-runtime") : -1;
  yajl_val runtimes = dc->runtimes_at >= 0 ? root->u.object.values[dc->runtimes_at] : NULL;
  if (runtimes && !YAJL_IS_NULL (runtimes) && !YAJL_IS_OBJECT (runtimes))
    return hv_error_set (err, 0, "%s: .runtimes: expected an object", path);
  if (runtimes && YAJL_IS_NULL (runtimes))
    runtimes = NULL;
  dc->runtimes = runtimes;
  yajl_val dflt = dc->default_at >= 0 ? root->u.object.values[dc->default_at] : NULL;
  dc->default_is_ours = dflt && YAJL_IS_STRING (dflt) && strcmp (dflt->u.string, o->name) == 0;
  return 0;
}

/* The "runtimes" member, ours replaced, added or removed. */
static void
emit_runtimes (yajl_gen g, const char *key, yajl_val runtimes, const struct hv_install_opts *o, bool remove)
{
  ssize_t ours = runtimes ? last_index (runtimes, o->name) : -1;
  size_t others = runtimes ? runtimes->u.object.len : 0;
  for (size_t j = 0; runtimes && j < runtimes->u.object.len; j++)
    if (strcmp (runtimes->u.object.keys[j], o->name) == 0)
      others--;
  /* Uninstalling the only runtime: the key goes as it came. */
  if (remove && others == 0)
    return;
  jg_str (g, key);
  yajl_gen_map_open (g);
  for (size_t j = 0; runtimes && j < runtimes->u.object.len; j++)
    {
      if (strcmp (runtimes->u.object.keys[j], o->name) != 0)
        {
          jg_str (g, runtimes->u.object.keys[j]);
          jg_value (g, runtimes->u.object.values[j]);
        }
      else if ((ssize_t) j == ours && !remove)
        {
          /* Replaced where it was: a re-run changes nothing else. */
          jg_str (g, o->name);
          emit_entry (g, o);
        }
    }
  if (ours < 0 && !remove)
    {
      jg_str (g, o->name);
      emit_entry (g, o);
    }
  yajl_gen_map_close (g);
}

/* The file's members in their order, "runtimes" and "default-runtime"
 * edited. */
static void
emit_members (yajl_gen g, const struct docker_config *dc, const struct hv_install_opts *o, bool remove)
{
  yajl_val root = dc->root;
  for (size_t i = 0; root && i < root->u.object.len; i++)
    {
      const char *key = root->u.object.keys[i];
      yajl_val v = root->u.object.values[i];
      if (strcmp (key, "runtimes") == 0)
        {
          /* Earlier duplicates are dead for dockerd: drop them. */
          if ((ssize_t) i == dc->runtimes_at)
            emit_runtimes (g, key, dc->runtimes, o, remove);
          continue;
        }
      if (strcmp (key, "default-runtime") == 0 && (o->make_default || (remove && dc->default_is_ours)))
        {
          /* Uninstalling the default runtime would leave dockerd unable to
           * start: it goes back to its own default (runc). */
          if ((ssize_t) i != dc->default_at || remove)
            continue;
          jg_kv (g, key, o->name);
          continue;
        }
      jg_str (g, key);
      jg_value (g, v);
    }
}

/* What installing adds when the file had no such member. */
static void
emit_missing_members (yajl_gen g, const struct docker_config *dc, const struct hv_install_opts *o, bool remove)
{
  if (dc->runtimes_at < 0 && !remove)
    {
      jg_str (g, "runtimes");
      yajl_gen_map_open (g);
      jg_str (g, o->name);
      emit_entry (g, o);
      yajl_gen_map_close (g);
    }
  if (dc->default_at < 0 && o->make_default && !remove)
    jg_kv (g, "default-runtime", o->name);
}

int
hv_docker_config_edit (const char *old_text, const char *path, const struct hv_install_opts *o, bool remove,
                       char **out, hv_error **err)
{
  struct docker_config dc = { 0 };
  *out = NULL;
  if (parse_daemon_json (old_text, path, &dc.root, err) < 0)
    return -1;
  if (find_members (&dc, path, o, err) < 0)
    {
      yajl_tree_free (dc.root);
      return -1;
    }
  if (remove && !dc.default_is_ours && (dc.runtimes == NULL || last_index (dc.runtimes, o->name) < 0))
    {
      /* Nothing of ours in there: leave the file as it is. */
      yajl_tree_free (dc.root);
      *out = xstrdup (old_text ? old_text : "");
      return 0;
    }

  yajl_gen g = yajl_gen_alloc (NULL);
  yajl_gen_config (g, yajl_gen_beautify, 1);
  yajl_gen_config (g, yajl_gen_indent_string, "  ");
  yajl_gen_map_open (g);
  emit_members (g, &dc, o, remove);
  emit_missing_members (g, &dc, o, remove);
  yajl_gen_map_close (g);
  cleanup_free char *text = jg_finish (g);
  size_t len = strlen (text);
  /* yajl's beautified output already ends with a newline. */
  *out = xasprintf ("%s%s", text, len && text[len - 1] == '\n' ? "" : "\n");
  yajl_tree_free (dc.root);
  return 0;
}

/* A TOML basic string. */
static char *
toml_string (const char *s)
{
  size_t n = strlen (s);
  char *out = xmalloc0 (n * 6 + 3), *p = out;
  *p++ = '"';
  for (; *s; s++)
    {
      unsigned char c = (unsigned char) *s;
      if (c == '"' || c == '\\')
        {
          *p++ = '\\';
          *p++ = (char) c;
        }
      else if (c < 0x20 || c == 0x7f)
        p += sprintf (p, "\\u%04x", c);
      else
        *p++ = (char) c;
    }
  *p++ = '"';
  return out;
}

char *
hv_podman_conf_text (const struct hv_install_opts *o)
{
  cleanup_free char *name = toml_string (o->name);
  cleanup_free char *path = toml_string (o->runtime);
  cleanup_free char *base_copy = xstrdup (o->runtime);
  cleanup_free char *base = toml_string (basename (base_copy));
  cleanup_free char *list = xstrdup ("");
  for (size_t i = 0; i < N_ELEMENTS (podman_json_runtimes); i++)
    {
      char *next = xasprintf ("%s\"%s\", ", list, podman_json_runtimes[i]);
      free (list);
      list = next;
    }
  /* The key of [engine.runtimes] must be a bare or quoted TOML key. */
  return xasprintf ("%s; `haven uninstall podman` removes it.\n"
                    "# haven-runc as Podman's OCI runtime %s: podman run --runtime %s ...\n"
                    "[engine]\n"
                    "# Podman passes --log-format=json --log FILE only to the runtimes listed\n"
                    "# here (by name, or by file name when --runtime is a path), and only then\n"
                    "# shows the runtime's own error message.  Podman's defaults stay listed.\n"
                    "runtime_supports_json = [%s%s, %s]\n"
                    "%s%s%s"
                    "\n[engine.runtimes]\n"
                    "%s = [%s]\n",
                    DROP_IN_MARKER, name, o->name, list, name, base, o->make_default ? "runtime = " : "",
                    o->make_default ? name : "", o->make_default ? "\n" : "", name, path);
}

int
hv_install_write (const char *path, const char *text, hv_error **err)
{
  struct stat st;
  cleanup_free char *target = NULL;
  bool exists = false;
  if (lstat (path, &st) == 0)
    {
      /* A symlinked config (managed elsewhere) keeps its link. */
      target = realpath (path, NULL);
      if (target == NULL)
        return hv_error_set (err, errno, "resolve %s", path);
      if (stat (target, &st) < 0)
        return hv_error_set (err, errno, "stat %s", target);
      if (!S_ISREG (st.st_mode))
        return hv_error_set (err, 0, "%s is not a regular file", target);
      exists = true;
    }
  else if (errno != ENOENT)
    return hv_error_set (err, errno, "stat %s", path);
  else
    target = xstrdup (path);
  if (exists)
    {
      cleanup_free char *cur = NULL;
      if (read_file_at (AT_FDCWD, target, &cur, err) < 0)
        return -1;
      if (strcmp (cur, text) == 0)
        return 0;
    }
  cleanup_free char *dir_copy = xstrdup (target);
  cleanup_free char *base_copy = xstrdup (target);
  const char *dir = dirname (dir_copy);
  const char *base = basename (base_copy);
  if (mkdir_p (dir, 0755, err) < 0)
    return -1;
  /* A configuration file outlives reboots: durable, and with the mode
   * and owner it had. */
  struct hv_replace_opts o = { .mode = exists ? (st.st_mode & 07777) : 0644,
                               .set_owner = exists && (st.st_uid != geteuid () || st.st_gid != getegid ()),
                               .uid = exists ? st.st_uid : 0,
                               .gid = exists ? st.st_gid : 0,
                               .durable = true };
  if (write_file_replace (dir, base, text, strlen (text), &o, err) < 0)
    return -1;
  return 1;
}

enum
{
  OPT_DAEMON_JSON = 1,
  OPT_CONF,
  OPT_NAME,
  OPT_RUNTIME,
  OPT_POLICY,
  OPT_POLICY_LOCK,
  OPT_DEFAULT,
  OPT_API_KEY,
};

static bool
valid_name (const char *s)
{
  if (s[0] == '\0')
    return false;
  for (; *s; s++)
    if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') || *s == '-'
          || *s == '_' || *s == '.'))
      return false;
  return true;
}

static const struct hv_opt install_opts[] = {
  { "daemon-json", 0, true, OPT_DAEMON_JSON }, { "conf", 0, true, OPT_CONF },
  { "name", 0, true, OPT_NAME },               { "runtime", 0, true, OPT_RUNTIME },
  { "policy", 0, true, OPT_POLICY },           { "policy-lock", 0, false, OPT_POLICY_LOCK },
  { "default", 0, false, OPT_DEFAULT },        { HV_API_KEY_OPTION, 0, true, OPT_API_KEY },
  { NULL, 0, false, 0 },
};

/* The options after "install ENGINE" into O and *FILE (the engine's
 * configuration file, its default when not given; *owned holds a default
 * made for the name). */
static int
parse_install_opts (int argc, char **argv, bool uninstall, bool docker, const char *cmd, struct hv_install_opts *o,
                    const char **file, char **owned, hv_error **err)
{
  struct hv_opt_iter it = { argc, argv, 2, cmd };
  const char *arg;
  int id;
  while ((id = hv_opt_next (&it, install_opts, &arg, err)) > 0)
    {
      bool install_only = id == OPT_RUNTIME || id == OPT_POLICY || id == OPT_POLICY_LOCK || id == OPT_DEFAULT
                          || id == OPT_API_KEY;
      if ((id == OPT_DAEMON_JSON && !docker) || (id == OPT_CONF && docker) || (install_only && uninstall))
        {
          const struct hv_opt *opt = install_opts;
          while (opt->id != id)
            opt++;
          return hv_error_set (err, 0, "%s: option --%s does not apply here (see haven --help)", cmd, opt->name);
        }
      switch (id)
        {
        case OPT_DAEMON_JSON:
        case OPT_CONF:
          *file = arg;
          break;
        case OPT_NAME:
          o->name = arg;
          break;
        case OPT_RUNTIME:
          o->runtime = arg;
          break;
        case OPT_POLICY:
          o->policy = arg;
          break;
        case OPT_POLICY_LOCK:
          o->policy_lock = true;
          break;
        case OPT_DEFAULT:
          o->make_default = true;
          break;
        case OPT_API_KEY:
          if (hv_api_key_arg ("--" HV_API_KEY_OPTION, arg, o->api_keys, err) < 0)
            return hv_error_wrap (err, "%s", cmd);
          break;
        default:
          break;
        }
    }
  if (id < 0)
    return -1;
  if (it.index < argc)
    return hv_error_set (err, 0, "%s: unexpected argument \"%s\"", cmd, argv[it.index]);
  if (!valid_name (o->name))
    return hv_error_set (err, 0, "%s: invalid runtime name \"%s\" (letters, digits, '-', '_', '.')", cmd, o->name);
  if (*file == NULL && docker)
    *file = HV_DOCKER_DAEMON_JSON;
  else if (*file == NULL && strcmp (o->name, "haven") == 0)
    *file = HV_PODMAN_DROP_IN;
  else if (*file == NULL)
    *file = *owned = xasprintf ("%s/%s.conf", HV_PODMAN_DROP_IN_DIR, o->name);
  return 0;
}

/* haven uninstall podman: the drop-in goes whole. */
static int
remove_podman_drop_in (const char *cmd, const char *file, hv_error **err)
{
  cleanup_free char *cur = NULL;
  cleanup_error hv_error *rerr = NULL;
  if (read_file_at (AT_FDCWD, file, &cur, &rerr) < 0)
    {
      if (rerr->errno_code != ENOENT)
        return hv_error_set (err, 0, "%s: %s", cmd, rerr->msg);
      printf ("%s: nothing to remove (no %s)\n", cmd, file);
      return 0;
    }
  /* Only our own drop-in: never someone else's file at that name. */
  if (!str_has_prefix (cur, DROP_IN_MARKER))
    return hv_error_set (err, 0, "%s: %s was not written by haven install podman; not removing it", cmd, file);
  if (unlink (file) < 0)
    return hv_error_set (err, errno, "%s: remove %s", cmd, file);
  printf ("removed %s\n", file);
  return 0;
}

/* A misspelt policy, or one that cannot apply to a container, would
 * fail every container dockerd starts: both are refused here, and what
 * a container cannot have of it is said now, once. */
int
hv_install_check_policy (const char *cmd, const char *name, const char *const *key_files, hv_error **err)
{
  cleanup_policy hv_policy *p = NULL;
  if (hv_policy_load (name, &p, err) < 0)
    return hv_error_wrap (err, "%s: --policy", cmd);
  char project[] = "/tmp/haven-install-XXXXXX";
  if (mkdtemp (project) == NULL)
    return hv_error_set (err, errno, "%s: --policy %s: a directory for a sample workspace", cmd, name);
  cleanup_strv oci_strv notes = { 0 };
  int r = hv_policy_check_for_containers (p, project, key_files, &notes, err);
  rmdir (project);
  if (r < 0)
    return hv_error_wrap (err, "%s: --policy", cmd);
  for (size_t i = 0; i < notes.n; i++)
    fprintf (stderr, "haven: %s: note: %s\n", cmd, notes.v[i]);
  return 0;
}

/* The runtime to register, by its real path (this binary unless
 * --runtime), and the runtime arguments checked. */
static int
check_runtime (const char *cmd, bool docker, struct hv_install_opts *o, char **runtime, hv_error **err)
{
  *runtime = o->runtime ? realpath (o->runtime, NULL) : realpath ("/proc/self/exe", NULL);
  if (*runtime == NULL)
    return hv_error_set (err, errno, "%s: runtime %s", cmd, o->runtime ? o->runtime : "/proc/self/exe");
  if (access (*runtime, X_OK) < 0)
    return hv_error_set (err, errno, "%s: runtime %s", cmd, *runtime);
  o->runtime = *runtime;
  if (!docker && (o->policy || o->policy_lock))
    return hv_error_set (err, 0,
                         "%s: Podman cannot pass runtime arguments (--policy, --policy-lock); ask per "
                         "container with --annotation " HV_POLICY_ANNOTATION "=NAME",
                         cmd);
  /* Podman hands a runtime no argument of its own, and an annotation
   * naming the file would be the container author's to set or leave
   * out: no gateway key for Podman rather than one that some containers
   * quietly go without. */
  if (!docker && has_api_keys (o))
    return hv_error_set (err, 0,
                         "%s: --" HV_API_KEY_OPTION " is for Docker only: Podman cannot pass runtime arguments, so "
                         "its containers cannot have the model API gateway's key from the registration",
                         cmd);
  for (size_t i = 0; i < HV_GW_N_PROVIDERS; i++)
    if (o->api_keys[i] && hv_api_key_file_check (o->api_keys[i], getuid (), err) < 0)
      return hv_error_wrap (err, "%s: --" HV_API_KEY_OPTION " %s", cmd, hv_gw_api_get ((hv_gw_provider) i)->name);
  return o->policy ? hv_install_check_policy (cmd, o->policy, o->api_keys, err) : 0;
}

/* The drop-in's text, when FILE is free or our own drop-in: a
 * containers.conf someone else wrote (the system's, the user's) is never
 * replaced (it would be lost, and `uninstall` would then remove ours). */
static int
podman_conf_text (const char *cmd, const char *file, const struct hv_install_opts *o, char **text, hv_error **err)
{
  cleanup_free char *cur = NULL;
  cleanup_error hv_error *rerr = NULL;
  if (read_file_at (AT_FDCWD, file, &cur, &rerr) < 0 && rerr->errno_code != ENOENT)
    return hv_error_set (err, 0, "%s: %s", cmd, rerr->msg);
  if (cur && !str_has_prefix (cur, DROP_IN_MARKER))
    return hv_error_set (err, 0,
                         "%s: %s exists and was not written by haven install podman; not replacing it (give "
                         "--conf a file of its own in a containers.conf.d directory, e.g. %s/%s.conf)",
                         cmd, file, HV_PODMAN_DROP_IN_DIR, o->name);
  *text = hv_podman_conf_text (o);
  return 0;
}

/* The configuration file's new text in *TEXT; 1 when there is nothing
 * to remove (said so). */
static int
new_config_text (const char *cmd, const char *file, bool docker, bool uninstall, const struct hv_install_opts *o,
                 char **text, hv_error **err)
{
  if (!docker)
    return podman_conf_text (cmd, file, o, text, err);
  cleanup_free char *old = NULL;
  cleanup_error hv_error *rerr = NULL;
  if (read_file_at (AT_FDCWD, file, &old, &rerr) < 0 && rerr->errno_code != ENOENT)
    return hv_error_set (err, 0, "%s: %s", cmd, rerr->msg);
  if (uninstall && old == NULL)
    {
      printf ("%s: nothing to remove (no %s)\n", cmd, file);
      return 1;
    }
  if (hv_docker_config_edit (old, file, o, uninstall, text, err) < 0)
    return hv_error_wrap (err, "%s", cmd);
  return 0;
}

/* The config file a dockerd reads (--config-file, else the default), or
 * NULL when pid is not a dockerd. */
static char *
dockerd_config_of (const char *pid)
{
  cleanup_free char *path = xasprintf ("/proc/%s/cmdline", pid);
  cleanup_free char *cmdline = NULL;
  size_t len = 0;
  cleanup_error hv_error *ignored = NULL;
  if (hv_read_file (path, &cmdline, &len, &ignored) < 0 || len == 0)
    return NULL;
  const char *arg0 = strrchr (cmdline, '/') ? strrchr (cmdline, '/') + 1 : cmdline;
  if (strcmp (arg0, "dockerd") != 0)
    return NULL;
  const char *config = HV_DOCKER_DAEMON_JSON;
  /* The arguments are NUL-separated: walk them by their lengths. */
  for (const char *a = cmdline; a < cmdline + len; a += strlen (a) + 1)
    if (strcmp (a, "--config-file") == 0 && a + strlen (a) + 1 < cmdline + len)
      config = a + strlen (a) + 1;
    else if (str_has_prefix (a, "--config-file="))
      config = a + strlen ("--config-file=");
  /* A relative path is the daemon's: resolve it from its cwd. */
  cleanup_free char *full = config[0] == '/' ? xstrdup (config) : xasprintf ("/proc/%s/cwd/%s", pid, config);
  return realpath (full, NULL);
}

/* How to make dockerd read FILE again: the pid of each running dockerd
 * that reads it (there may be others on the machine, reading other
 * files: `kill -HUP $(pidof dockerd)` would reach them all). */
static char *
docker_reload_advice (const char *file)
{
  cleanup_free char *want = realpath (file, NULL);
  cleanup_free char *pids = xstrdup ("");
  DIR *d = want ? opendir ("/proc") : NULL;
  struct dirent *de;
  while (d && (de = readdir (d)) != NULL)
    {
      if (de->d_name[0] < '1' || de->d_name[0] > '9')
        continue;
      cleanup_free char *config = dockerd_config_of (de->d_name);
      if (config && strcmp (config, want) == 0)
        {
          char *more = xasprintf ("%s%s%s", pids, pids[0] ? " " : "", de->d_name);
          free (pids);
          pids = more;
        }
    }
  if (d)
    closedir (d);
  if (pids[0])
    return xasprintf ("reload dockerd (kill -HUP %s)", pids);
  return xasprintf ("no running dockerd reads %s: start or restart the one that should (systemctl restart docker)",
                    file);
}

/* What was done, and what to do next; CHANGED: the file was written. */
static void
report_install (const char *file, bool docker, bool uninstall, const struct hv_install_opts *o, int changed)
{
  cleanup_free char *reload = docker && changed ? docker_reload_advice (file) : NULL;
  if (uninstall)
    {
      /* Once dockerd reloads without a runtime that has arguments
       * (--policy), it has deleted the wrapper it runs it through: the
       * task of a container still running with it cannot be deleted (its
       * shim cannot run kill or delete), and Docker leaves the shim
       * behind for good, registered again or not (engine test
       * docker_uninstall_with_running_container). */
      if (changed)
        printf ("removed runtime \"%s\" from %s; remove the containers that run with it first (once dockerd "
                "reloads without a runtime registered with --policy, docker cannot delete them and leaves their "
                "containerd shims behind), then %s\n",
                o->name, file, reload);
      else
        printf ("runtime \"%s\" is not in %s: unchanged\n", o->name, file);
    }
  else if (docker && changed)
    printf ("registered runtime \"%s\" (%s) in %s; %s, then: docker run --runtime %s ...\n", o->name, o->runtime,
            file, reload, o->name);
  else if (docker)
    printf ("already registered: runtime \"%s\" (%s) in %s, unchanged\n", o->name, o->runtime, file);
  else
    printf ("%s %s: podman run --runtime %s ...\n", changed ? "wrote" : "unchanged:", file, o->name);
}

int
hv_cmd_install_engine (int argc, char **argv, bool uninstall, hv_error **err)
{
  const char *verb = uninstall ? "uninstall" : "install";
  if (argc < 2 || (strcmp (argv[1], "docker") != 0 && strcmp (argv[1], "podman") != 0))
    return hv_error_set (err, 0, "%s: which engine? (haven %s docker|podman|containerd|crio [options])", verb, verb);
  bool docker = strcmp (argv[1], "docker") == 0;
  cleanup_free char *cmd = xasprintf ("%s %s", verb, argv[1]);
  struct hv_install_opts o = { .name = "haven" };
  const char *file = NULL;
  cleanup_free char *default_file = NULL;
  if (parse_install_opts (argc, argv, uninstall, docker, cmd, &o, &file, &default_file, err) < 0)
    return -1;
  if (!docker && uninstall)
    return remove_podman_drop_in (cmd, file, err);
  cleanup_free char *runtime = NULL;
  if (!uninstall && check_runtime (cmd, docker, &o, &runtime, err) < 0)
    return -1;
  cleanup_free char *text = NULL;
  int r = new_config_text (cmd, file, docker, uninstall, &o, &text, err);
  if (r != 0)
    return r < 0 ? -1 : 0;
  r = hv_install_write (file, text, err);
  if (r < 0)
    return hv_error_wrap (err, "%s", cmd);
  report_install (file, docker, uninstall, &o, r);
  return 0;
}
