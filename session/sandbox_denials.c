/* What a sandbox was refused, read back from its policy's trail
 * (sandbox.h, hv_sandbox_denials_json): the denial records that name it
 * ("sandbox": its id), each with the kind of thing refused, what it was,
 * the policy's rule behind it and, where the record says it, the policy
 * line that would allow it ("allow"; or "never" and "why_not").
 *
 * The trail is shared by every run of the policy, and its records' text
 * comes partly from sandboxed processes (a process's name, a path, a DNS
 * name): it is read as data.  The file read is the one the sandbox's
 * records go to (reopened through the fd the sandbox holds, never by its
 * path, which may since name another file), at most its last
 * DENIALS_READ_MAX bytes; a record is taken only whole, as JSON, naming
 * this sandbox. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <yajl/yajl_tree.h>

#include "json_gen.h"
#include "json_walk.h"
#include "sandbox_priv.h"
#include "utils.h"

/* The trail's last bytes read: its writers cap a run's records at
 * HV_AUDIT_MAX_BYTES, so a sandbox's recent denials are within this. */
#define DENIALS_READ_MAX HV_AUDIT_MAX_BYTES
/* A record nested deeper is none of haven's. */
#define RECORD_DEPTH_MAX 8

bool
hv_sandbox_shell (const hv_sandbox *sb)
{
  return sb->r.shell;
}

static bool
in_strv (const oci_strv *l, const char *s)
{
  for (size_t i = 0; i < l->n; i++)
    if (strcmp (l->v[i], s) == 0)
      return true;
  return false;
}

/* A denial record's kind, what was refused and the rule; false for a
 * record that is no denial (start, command, exit...). */
static bool
describe (const hv_sandbox *sb, yajl_val rec, const char **kind, char **what, char **rule)
{
  const char *event = jw_string_at (rec, "event");
  if (event == NULL)
    return false;
  if (strcmp (event, "denied") == 0)
    {
      const char *sc = jw_string_at (rec, "syscall");
      const char *comm = jw_string_at (rec, "comm");
      *kind = "syscall";
      *what = xasprintf ("system call %s%s%s", sc ? sc : "?", comm && *comm ? " by " : "", comm && *comm ? comm : "");
      *rule = sc && in_strv (&sb->r.syscall_deny, sc) ? xasprintf ("syscalls.deny: %s", sc)
                                                      : xasprintf ("syscalls.profile: %s", sb->r.syscall_profile);
      return true;
    }
  if (strcmp (event, "dropped") == 0)
    {
      const char *reason = jw_string_at (rec, "reason");
      *kind = "syscall";
      *what = xasprintf ("%lld more denied system calls, not recorded one by one (%s)", jw_integer_at (rec, "count", -1),
                         reason ? reason : "the trail's limits");
      *rule = xasprintf ("syscalls.profile: %s", sb->r.syscall_profile);
      return true;
    }
  if (strcmp (event, "landlock-denied") == 0)
    {
      const char *access = jw_string_at (rec, "access"), *path = jw_string_at (rec, "path"), *r = jw_string_at (rec, "rule");
      *kind = access && strstr (access, "execute") ? "exec" : "file";
      *what = xasprintf ("%s %s", access ? access : "access", path ? path : "?");
      *rule = xstrdup (r ? r : "filesystem (Landlock)");
      return true;
    }
  if (strcmp (event, "net-denied") == 0)
    {
      const char *dst = jw_string_at (rec, "destination"), *proto = jw_string_at (rec, "protocol");
      *kind = "net";
      *what = xasprintf ("connect to %s%s%s:%lld (%s)", dst && strchr (dst, ':') ? "[" : "", dst ? dst : "?",
                         dst && strchr (dst, ':') ? "]" : "", jw_integer_at (rec, "port", -1), proto ? proto : "?");
      *rule = xstrdup ("network.allow: not an allowed destination");
      return true;
    }
  if (strcmp (event, "dns-refused") == 0)
    {
      const char *name = jw_string_at (rec, "name"), *type = jw_string_at (rec, "type"), *why = jw_string_at (rec, "why");
      *kind = "dns";
      *what = xasprintf ("resolve %s (%s)", name ? name : "?", type ? type : "?");
      *rule = xasprintf ("network.allow: %s", why ? why : "not an allowed name");
      return true;
    }
  if (strcmp (event, "denials-suppressed") == 0)
    {
      const char *k = jw_string_at (rec, "kind"), *msg = jw_string_at (rec, "message");
      *kind = "suppressed";
      *what = xasprintf ("%lld more %s denials, not recorded one by one%s%s", jw_integer_at (rec, "count", -1), k ? k : "",
                         msg ? ": " : "", msg ? msg : "");
      *rule = xstrdup ("the trail's rate limit");
      return true;
    }
  return false;
}

/* The record in line[0..len) (no newline), if it is whole JSON naming
 * this sandbox; NULL otherwise. */
static yajl_val
record_of (const hv_sandbox *sb, char *line, size_t len, const char *needle)
{
  /* Most records are other runs': the id's member as haven writes it
   * (no spaces) is looked for before anything is parsed. */
  if (memmem (line, len, needle, strlen (needle)) == NULL)
    return NULL;
  char saved = line[len];
  line[len] = '\0';
  yajl_val rec = NULL;
  char errbuf[64];
  if (!jw_too_deep (line, RECORD_DEPTH_MAX))
    rec = yajl_tree_parse (line, errbuf, sizeof (errbuf));
  line[len] = saved;
  if (rec == NULL)
    return NULL;
  const char *id = YAJL_IS_OBJECT (rec) ? jw_string_at (rec, "sandbox") : NULL;
  if (id == NULL || strcmp (id, sb->r.id) != 0)
    {
      yajl_tree_free (rec);
      return NULL;
    }
  return rec;
}

/* The trail's last bytes: the file behind the sandbox's fd, reopened for
 * reading (a new open file description: the writers' offsets are not
 * touched), from the first whole line. */
static int
trail_tail (int log_fd, char **out, size_t *out_len, hv_error **err)
{
  char proc[64];
  snprintf (proc, sizeof (proc), "/proc/self/fd/%d", log_fd);
  cleanup_close int fd = open (proc, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  if (fd < 0)
    return hv_error_set (err, errno, "open the trail for reading");
  struct stat st;
  if (fstat (fd, &st) < 0)
    return hv_error_set (err, errno, "stat the trail");
  if (!S_ISREG (st.st_mode))
    return hv_error_set (err, 0, "the trail is not a regular file");
  off_t from = st.st_size > DENIALS_READ_MAX ? st.st_size - DENIALS_READ_MAX : 0;
  size_t want = (size_t) (st.st_size - from);
  cleanup_free char *buf = xmalloc0 (want + 1);
  size_t got = 0;
  while (got < want)
    {
      ssize_t n = pread (fd, buf + got, want - got, from + (off_t) got);
      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0)
        return hv_error_set (err, errno, "read the trail");
      if (n == 0)
        break;
      got += (size_t) n;
    }
  /* Read from the middle of a line: that line is not whole. */
  size_t start = 0;
  if (from > 0)
    {
      char *nl = memchr (buf, '\n', got);
      start = nl ? (size_t) (nl - buf) + 1 : got;
    }
  memmove (buf, buf + start, got - start);
  buf[got - start] = '\0';
  *out_len = got - start;
  *out = steal_pointer (&buf);
  return 0;
}

char *
hv_sandbox_denials_json (const hv_sandbox *sb, unsigned limit, hv_error **err)
{
  yajl_gen g = yajl_gen_alloc (NULL);
  yajl_gen_map_open (g);
  if (sb->audit.log_fd < 0)
    {
      jg_str (g, "trail");
      yajl_gen_null (g);
      jg_str (g, "denials");
      yajl_gen_array_open (g);
      yajl_gen_array_close (g);
      jg_kv (g, "note", "the policy keeps no audit trail (audit: log: FILE), so its denials are not recorded; "
                        "a refused operation fails in the sandbox all the same (EPERM, EACCES, a refused "
                        "connection or name)");
      yajl_gen_map_close (g);
      return jg_finish (g);
    }
  cleanup_free char *text = NULL;
  size_t len = 0;
  if (trail_tail (sb->audit.log_fd, &text, &len, err) < 0)
    {
      yajl_gen_free (g);
      return NULL;
    }
  cleanup_free char *needle = xasprintf ("\"sandbox\":\"%s\"", sb->r.id);
  /* The last `limit` denials: their lines' places in a ring. */
  struct span
  {
    size_t at, len;
  };
  cleanup_free struct span *ring = xmalloc0 (sizeof (*ring) * limit);
  size_t n = 0;
  for (size_t at = 0; at < len;)
    {
      char *nl = memchr (text + at, '\n', len - at);
      if (nl == NULL)
        break; /* a record being written: not whole yet */
      size_t l = (size_t) (nl - (text + at));
      yajl_val rec = record_of (sb, text + at, l, needle);
      if (rec)
        {
          const char *kind;
          char *what = NULL, *rule = NULL;
          if (describe (sb, rec, &kind, &what, &rule))
            ring[n++ % limit] = (struct span) { at, l };
          free (what);
          free (rule);
          yajl_tree_free (rec);
        }
      at += l + 1;
    }
  jg_kv_utf8 (g, "trail", sb->r.audit_log);
  jg_str (g, "denials");
  yajl_gen_array_open (g);
  size_t first = n > limit ? n - limit : 0;
  for (size_t i = first; i < n; i++)
    {
      struct span sp = ring[i % limit];
      yajl_val rec = record_of (sb, text + sp.at, sp.len, needle);
      const char *kind;
      char *what = NULL, *rule = NULL;
      if (rec == NULL || !describe (sb, rec, &kind, &what, &rule))
        continue;
      yajl_gen_map_open (g);
      jg_kv_utf8 (g, "time", jw_string_at (rec, "time"));
      jg_kv (g, "kind", kind);
      jg_kv_utf8 (g, "what", what);
      /* The record's own explanation where it has one (its writer had
       * the policy's table: runtime/audit/include/denial_explain.h);
       * the guess above for older records and summaries. */
      const char *rec_rule = jw_string_at (rec, "rule"), *allow = jw_string_at (rec, "allow");
      jg_kv_utf8 (g, "rule", rec_rule && rec_rule[0] ? rec_rule : rule);
      if (allow)
        jg_kv_utf8 (g, "allow", allow);
      const char *never_path[] = { "never", NULL };
      yajl_val never = yajl_tree_get (rec, never_path, yajl_t_any);
      if (never && YAJL_IS_TRUE (never))
        {
          jg_str (g, "never");
          yajl_gen_bool (g, true);
          jg_kv_utf8 (g, "why_not", jw_string_at (rec, "why_not"));
        }
      jg_str (g, "record");
      jg_value (g, rec);
      yajl_gen_map_close (g);
      free (what);
      free (rule);
      yajl_tree_free (rec);
    }
  yajl_gen_array_close (g);
  yajl_gen_map_close (g);
  return jg_finish (g);
}
