#include "config.h"
#include "audit_verify.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <yajl/yajl_gen.h>

#include "json_gen.h"
#include "trail_chain.h"
#include "utils.h"

static void
say_json (const char *path, const struct hv_trail_verdict *v)
{
  yajl_gen g = yajl_gen_alloc (NULL);
  yajl_gen_map_open (g);
  jg_str (g, "file");
  jg_str (g, path);
  jg_str (g, "ok");
  yajl_gen_bool (g, v->ok);
  if (v->ok)
    {
      jg_str (g, "records");
      yajl_gen_integer (g, (long long) v->chained);
      jg_str (g, "before_chaining");
      yajl_gen_integer (g, (long long) v->before_chain);
      if (v->chained)
        {
          jg_str (g, "first_seq");
          yajl_gen_integer (g, (long long) v->first_seq);
          jg_str (g, "last_seq");
          yajl_gen_integer (g, (long long) v->last_seq);
          jg_str (g, "first_time");
          jg_str (g, v->first_time);
          jg_str (g, "last_time");
          jg_str (g, v->last_time);
        }
      if (v->lines)
        {
          jg_str (g, "head");
          jg_str (g, v->head);
        }
    }
  else
    {
      jg_str (g, "line");
      yajl_gen_integer (g, (long long) v->line);
      jg_str (g, "problem");
      jg_str (g, v->problem);
    }
  yajl_gen_map_close (g);
  cleanup_free char *text = jg_finish (g);
  puts (text);
}

static void
say_text (const char *path, const struct hv_trail_verdict *v)
{
  if (!v->ok)
    {
      printf ("%s:%" PRIu64 ": %s\n", path, v->line, v->problem);
      return;
    }
  if (v->chained)
    printf ("%s: OK: %" PRIu64 " record%s chained (seq %" PRIu64 " to %" PRIu64 ", %s to %s)", path, v->chained,
            v->chained == 1 ? "" : "s", v->first_seq, v->last_seq, v->first_time[0] ? v->first_time : "?",
            v->last_time[0] ? v->last_time : "?");
  else
    printf ("%s: OK: no chained record", path);
  if (v->before_chain)
    printf ("; %" PRIu64 " record%s written before chaining (not checked)", v->before_chain,
            v->before_chain == 1 ? "" : "s");
  putchar ('\n');
  /* The last line is covered by no later one: whoever keeps its hash
   * elsewhere can tell later that it (and the chain up to it) stayed. */
  if (v->lines)
    printf ("%s: last line's SHA-256: %s\n", path, v->head);
}

/* 0 ok, 1 a problem, 2 unreadable. */
static int
verify_one (const char *path, bool json)
{
  /* Never a FIFO or a device (O_NONBLOCK, then the type): only read, but
   * a planted FIFO must not hang the verifier. */
  cleanup_close int fd = open (path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY);
  struct stat st;
  if (fd < 0)
    {
      fprintf (stderr, "haven audit: %s: %s\n", path, errno == ENOENT ? "no trail there" : strerror (errno));
      return 2;
    }
  if (fstat (fd, &st) < 0 || !S_ISREG (st.st_mode))
    {
      fprintf (stderr, "haven audit: %s: not a regular file\n", path);
      return 2;
    }
  struct hv_trail_verdict v;
  if (hv_trail_verify (fd, &v) < 0)
    {
      fprintf (stderr, "haven audit: %s: read: %s\n", path, strerror (errno));
      return 2;
    }
  if (json)
    say_json (path, &v);
  else
    say_text (path, &v);
  return v.ok ? 0 : 1;
}

int
hv_audit_verify_files (char *const *files, int n, bool json)
{
  int worst = 0;
  if (n == 0)
    {
      const char *home = getenv ("HOME");
      if (home == NULL || home[0] != '/')
        {
          fprintf (stderr, "haven audit: --verify: no FILE and no HOME for ~/.local/state/haven/audit.log\n");
          return 2;
        }
      cleanup_free char *log = xasprintf ("%s/.local/state/haven/audit.log", home);
      return verify_one (log, json);
    }
  for (int i = 0; i < n; i++)
    {
      int r = verify_one (files[i], json);
      if (r > worst)
        worst = r;
    }
  return worst;
}
