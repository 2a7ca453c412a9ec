/* The nameservers of a resolv.conf: resolv_conf.h. */
#include "config.h"
#include "file_read.h"
#include "resolv_conf.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "utils.h"

static bool
blank (char c)
{
  return c == ' ' || c == '\t' || c == '\r';
}

/* One address, or false: inet_pton only, so "1.2.3" or "010.0.0.1"
 * (which inet_aton would read as something else) are not addresses. */
static bool
parse_address (const char *word, struct sockaddr_storage *ss)
{
  memset (ss, 0, sizeof (*ss));
  struct sockaddr_in *s4 = (struct sockaddr_in *) ss;
  struct sockaddr_in6 *s6 = (struct sockaddr_in6 *) ss;
  if (inet_pton (AF_INET, word, &s4->sin_addr) == 1)
    {
      s4->sin_family = AF_INET;
      s4->sin_port = htons (53);
      return true;
    }
  if (inet_pton (AF_INET6, word, &s6->sin6_addr) == 1)
    {
      s6->sin6_family = AF_INET6;
      s6->sin6_port = htons (53);
      return true;
    }
  return false;
}

static void
parse_line (const char *line, size_t len, hv_resolv_conf *out)
{
  static const char key[] = "nameserver";
  size_t i = 0;
  while (i < len && blank (line[i]))
    i++;
  if (len - i < sizeof (key) || memcmp (line + i, key, sizeof (key) - 1) != 0 || !blank (line[i + sizeof (key) - 1]))
    return;
  i += sizeof (key) - 1;
  while (i < len && blank (line[i]))
    i++;
  size_t start = i;
  while (i < len && !blank (line[i]))
    i++;
  size_t end = i;
  while (i < len && blank (line[i]))
    i++;
  /* One word, then nothing or a comment. */
  char word[INET6_ADDRSTRLEN];
  bool rest_ok = i == len || line[i] == '#' || line[i] == ';';
  if (!rest_ok || end == start || end - start >= sizeof (word) || out->n_ns == HV_RESOLV_CONF_MAX_NS)
    {
      out->skipped++;
      return;
    }
  memcpy (word, line + start, end - start);
  word[end - start] = '\0';
  if (!parse_address (word, &out->ns[out->n_ns]))
    out->skipped++;
  else
    out->n_ns++;
}

void
hv_resolv_conf_parse (const char *text, size_t len, hv_resolv_conf *out)
{
  memset (out, 0, sizeof (*out));
  size_t pos = 0;
  while (pos < len)
    {
      const char *nl = memchr (text + pos, '\n', len - pos);
      size_t end = nl ? (size_t) (nl - text) : len;
      /* A NUL inside a line makes it no line of ours. */
      if (memchr (text + pos, '\0', end - pos) == NULL)
        parse_line (text + pos, end - pos, out);
      pos = end + 1;
    }
}

int
hv_resolv_conf_read (const char *path, bool follow_final_link, hv_resolv_conf *out, hv_error **err)
{
  memset (out, 0, sizeof (*out));
  /* O_NONBLOCK: a FIFO in its place cannot hold the caller. */
  int flags = O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC | (follow_final_link ? 0 : O_NOFOLLOW);
  cleanup_close int fd = open (path, flags);
  if (fd < 0)
    return hv_error_set (err, errno, "open %s", path);
  cleanup_free char *buf = NULL;
  size_t len = 0;
  if (hv_read_regular_fd (fd, path, HV_RESOLV_CONF_MAX, &buf, &len, err) < 0)
    return -1;
  hv_resolv_conf_parse (buf, len, out);
  return 0;
}
