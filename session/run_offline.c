/* A run without network (run_offline.h). */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "file_read.h"
#include "run_offline.h"
#include "utils.h"

#define NSSWITCH "/etc/nsswitch.conf"
#define NSSWITCH_MAX (64u << 10)

/* The word w in s, between white space (or the line's ends). */
static bool
has_word (const char *s, size_t len, const char *w)
{
  size_t n = strlen (w);
  for (size_t i = 0; i + n <= len; i++)
    if (memcmp (s + i, w, n) == 0 && (i == 0 || s[i - 1] == ' ' || s[i - 1] == '\t')
        && (i + n == len || s[i + n] == ' ' || s[i + n] == '\t' || s[i + n] == '\n'))
      return true;
  return false;
}

/* The host's file with every `hosts:` line replaced. */
static char *
offline_nsswitch (const char *text, size_t len, const char *policy)
{
  char *out = xasprintf ("# haven: policy \"%s\" has no network (network.mode: none): names resolve from "
                         "/etc/hosts only.\n",
                         policy);
  for (size_t at = 0; at < len;)
    {
      const char *line = text + at;
      const char *nl = memchr (line, '\n', len - at);
      size_t n = nl ? (size_t) (nl - line) + 1 : len - at;
      size_t lead = strspn (line, " \t");
      char *next;
      if (lead + 6 <= n && strncmp (line + lead, "hosts:", 6) == 0)
        next = xasprintf ("%shosts: files%s\n", out, has_word (line, n, "myhostname") ? " myhostname" : "");
      else
        next = xasprintf ("%s%.*s%s", out, (int) n, line, nl ? "" : "\n");
      free (out);
      out = next;
      at += n;
    }
  return out;
}

int
hv_run_offline_prepare (const hv_policy *p, const char *bundle, char **path, oci_strv *notes, hv_error **err)
{
  *path = NULL;
  if (p->net_mode != HV_NET_NONE)
    return 0;
  /* The host's own file (root's /etc; a distribution's link is followed). */
  cleanup_close int fd = open (NSSWITCH, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0 && errno == ENOENT)
    return 0; /* nothing to cover: glibc's default asks the (unreachable) name servers */
  /* Only a convenience (the network is off either way): a file haven
   * cannot read is left as it is, with a word. */
  cleanup_free char *text = NULL;
  size_t len = 0;
  cleanup_error hv_error *rerr = NULL;
  if (fd < 0 || hv_read_regular_fd (fd, NSSWITCH, NSSWITCH_MAX, &text, &len, &rerr) < 0)
    {
      oci_strv_pushf (notes, "cannot read %s (%s): name lookups in the sandbox may be retried before they fail",
                      NSSWITCH, fd < 0 ? strerror (errno) : rerr->msg);
      return 0;
    }
  cleanup_free char *out = offline_nsswitch (text, len, p->name);
  /* Readable by the sandbox's user through the bind. */
  static const struct hv_replace_opts mode = { .mode = 0644 };
  if (write_file_replace (bundle, "nsswitch.conf", out, strlen (out), &mode, err) < 0)
    return hv_error_wrap (err, "name service config for a run without network");
  /* Flat in the bundle, whose removal does not descend (run_leftovers.c). */
  *path = xasprintf ("%s/nsswitch.conf", bundle);
  return 0;
}

void
hv_run_offline_note (const hv_policy *p, oci_strv *notes)
{
  if (p->net_mode != HV_NET_NONE || !isatty (STDERR_FILENO))
    return;
  oci_strv_pushf (notes,
                  "no network under policy \"%s\" (network.mode: none): downloads and name lookups fail at "
                  "once; network.allow in a policy of your own lets named hosts through (haven policy explain %s)",
                  p->name, p->name);
}
