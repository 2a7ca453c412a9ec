/* The first refused name, said on haven run's stderr (egress_notice.h). */
#include "config.h"
#include "egress_notice.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "egress_decide.h"

/* s shown safely: [a-z0-9.-_] as is (a DNS name's usual bytes; the
 * resolver lowers case), and the backslash of the \DDD the resolver's
 * text already uses for odd bytes in a label (dns_message.h), every
 * other byte \xHH, at most max input bytes ("..." after a cut).  out
 * has room for 4 * max + 4. */
static void
safe_text (char *out, const char *s, size_t max)
{
  size_t o = 0, i = 0;
  for (; s[i] && i < max; i++)
    {
      unsigned char ch = (unsigned char) s[i];
      if ((ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '.' || ch == '-' || ch == '_'
          || ch == '\\')
        out[o++] = (char) ch;
      else
        o += (size_t) snprintf (out + o, 5, "\\x%02x", ch);
    }
  if (s[i])
    {
      memcpy (out + o, "...", 3);
      o += 3;
    }
  out[o] = '\0';
}

void
hv_egress_notice_format (char *buf, const char *policy, const char *qname, const char *why, bool audit, bool cr)
{
  char name[4 * HV_EGRESS_NOTICE_NAME_MAX + 4], pol[4 * 64 + 4];
  safe_text (name, qname, HV_EGRESS_NOTICE_NAME_MAX);
  /* The policy's name is the user's, not the sandbox's; shown the same
   * way all the same (it is what the resolver was given). */
  safe_text (pol, policy ? policy : "", 64);
  bool denied = strcmp (why, HV_EGRESS_WHY_DENIED) == 0;
  /* A name asked for and not approved says so (egress_resolver_ask.h). */
  const char *reason = denied                                     ? "network.deny"
                       : strcmp (why, HV_EGRESS_WHY_UNLISTED) == 0 ? "not in network.allow"
                                                                   : why;
  snprintf (buf, HV_EGRESS_NOTICE_MAX,
            "haven: name %s refused by policy %s (%s): its lookups fail as not found; "
            "%s%s%s%s",
            name, pol, reason,
            denied ? "network.deny wins in every policy that extends it" : "to allow it, add it to network.allow in a policy that extends ",
            denied ? "" : pol, audit ? "; more: haven audit -e dns-refused" : "", cr ? "\r\n" : "\n");
}

bool
hv_egress_notice_write (int fd, const char *policy, const char *qname, const char *why, bool audit)
{
  struct stat st;
  if (fd < 0 || fstat (fd, &st) < 0)
    return false;
  char line[HV_EGRESS_NOTICE_MAX];
  hv_egress_notice_format (line, policy, qname, why, audit, isatty (fd));
  size_t len = strlen (line);
  /* One write: the line is far below PIPE_BUF, so a pipe takes it whole
   * or not at all; SIGPIPE is ignored in the monitor. */
  ssize_t n = S_ISSOCK (st.st_mode) ? send (fd, line, len, MSG_DONTWAIT | MSG_NOSIGNAL) : write (fd, line, len);
  return n == (ssize_t) len;
}
