/* The image user's git identity (image_git_identity.h). */
#include "config.h"

#include <ctype.h>
#include <stdint.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "file_read.h"
#include "image_git_identity.h"
#include "oci_spec.h"
#include "safe_path.h"
#include "utils.h"

#define CONFIG_MAX (1u << 20)

/* A config file of the image, resolved inside its root. */
static char *
read_in_root (int rootfd, const char *path, size_t *len)
{
  /* Looked at before it is opened for reading: an image can hold a
   * device node or a FIFO there, and opening one on the host is not
   * harmless. */
  cleanup_close int pfd = hv_openat2 (rootfd, path, O_PATH | O_CLOEXEC, 0,
                                      RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV);
  struct stat st;
  if (pfd < 0 || fstat (pfd, &st) < 0 || !S_ISREG (st.st_mode) || (uint64_t) st.st_size > CONFIG_MAX)
    return NULL;
  cleanup_free char *self = xasprintf ("/proc/self/fd/%d", pfd);
  cleanup_close int fd = open (self, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0)
    return NULL;
  char *text = NULL;
  cleanup_error hv_error *ignored = NULL;
  if (hv_read_fd (fd, path, (size_t) st.st_size, &text, len, &ignored) < 0)
    return NULL;
  return text;
}

/* One value as git reads it: white space around it dropped, "..."
 * quoting, \" \\ \n \t escapes, a ; or # outside quotes ends it. */
static char *
value_of (const char *s, const char *end)
{
  char *out = xmalloc0 ((size_t) (end - s) + 1), *o = out;
  bool quoted = false;
  while (s < end && (*s == ' ' || *s == '\t'))
    s++;
  char *last_kept = out; /* trailing white space outside quotes is dropped */
  for (; s < end; s++)
    {
      if (*s == '"')
        {
          quoted = !quoted;
          last_kept = o;
          continue;
        }
      if (!quoted && (*s == ';' || *s == '#'))
        break;
      if (*s == '\\' && s + 1 < end)
        {
          s++;
          *o++ = *s == 'n' ? '\n' : *s == 't' ? '\t' : *s;
          last_kept = o;
          continue;
        }
      *o++ = *s;
      if (quoted || (*s != ' ' && *s != '\t'))
        last_kept = o;
    }
  *last_kept = '\0';
  return out;
}

void
hv_git_identity_parse (const char *text, size_t len, char **name, char **email)
{
  bool in_user = false;
  for (const char *line = text, *stop = text + len; line < stop;)
    {
      const char *nl = memchr (line, '\n', (size_t) (stop - line));
      const char *end = nl ? nl : stop;
      const char *s = line;
      line = nl ? nl + 1 : stop;
      while (s < end && isspace ((unsigned char) *s))
        s++;
      if (s < end && *s == '[')
        {
          /* [user] only: [user "x"] is another section. */
          const char *close = memchr (s, ']', (size_t) (end - s));
          in_user = close && close - s == 5 && strncasecmp (s + 1, "user", 4) == 0;
          if (close)
            s = close + 1;
          while (s < end && isspace ((unsigned char) *s))
            s++;
          if (s >= end || *s == '#' || *s == ';')
            continue;
        }
      if (!in_user)
        continue;
      const char *k = s;
      while (s < end && (isalnum ((unsigned char) *s) || *s == '-'))
        s++;
      size_t klen = (size_t) (s - k);
      while (s < end && (*s == ' ' || *s == '\t'))
        s++;
      if (s >= end || *s != '=')
        continue;
      char **slot = klen == 4 && strncasecmp (k, "name", 4) == 0    ? name
                    : klen == 5 && strncasecmp (k, "email", 5) == 0 ? email
                                                                   : NULL;
      if (slot == NULL)
        continue;
      free (*slot);
      *slot = value_of (s + 1, end);
    }
}

/* A value as a quoted git config string (nothing in it ends the quote,
 * the line or the section). */
static char *
quoted (const char *value)
{
  char *q = xmalloc0 (2 * strlen (value) + 1), *w = q;
  for (const char *c = value; *c; c++)
    {
      if (*c == '\\' || *c == '"')
        *w++ = '\\', *w++ = *c;
      else if ((unsigned char) *c >= 0x20 && *c != 0x7f)
        *w++ = *c;
    }
  return q;
}

char *
hv_image_git_identity (const char *rootfs, const char *home)
{
  cleanup_close int rootfd = open (rootfs, O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (rootfd < 0 || home == NULL || home[0] != '/')
    return NULL;
  cleanup_free char *xdg = xasprintf ("%s/.config/git/config", home);
  cleanup_free char *dot = xasprintf ("%s/" HV_IMAGE_GITCONFIG, home);
  const char *files[] = { xdg, dot };
  cleanup_free char *name = NULL, *email = NULL;
  for (size_t i = 0; i < 2; i++)
    {
      size_t len = 0;
      cleanup_free char *text = read_in_root (rootfd, files[i], &len);
      if (text)
        hv_git_identity_parse (text, len, &name, &email);
    }
  if (name == NULL && email == NULL)
    return NULL;
  cleanup_free char *qn = name ? quoted (name) : NULL, *qe = email ? quoted (email) : NULL;
  return xasprintf ("# haven: your home is hidden; this is the git identity of the image's %s/.gitconfig\n"
                    "# (nothing else of it: policies/README.md, \"Git in engine containers\").\n"
                    "[user]\n%s%s%s%s%s%s",
                    home, qn ? "\tname = \"" : "", qn ? qn : "", qn ? "\"\n" : "", qe ? "\temail = \"" : "",
                    qe ? qe : "", qe ? "\"\n" : "");
}
