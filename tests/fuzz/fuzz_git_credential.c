/* Fuzz target of the git credential broker's reader (runtime/guard/
 * git_credential.c): what the sandbox's git cache client sends.
 *
 * The input is a whole message (hv_git_credential_parse_cache).  A
 * refusal leaves the request empty and no action; what is read has an
 * action of lower-case letters, a protocol that is a URL scheme, a host
 * and path without a line break, a control character or a NUL, a path
 * with no empty, "." or ".." segment.  Written back as protocol, host and
 * path lines, it reads again to the same fields.  The decision over a
 * fixed table never allows other than a get over https for a listed host
 * (name without case, port 443 or none) and, for the entry with a prefix,
 * a path under it by whole segments; the answer writer refuses a line
 * break in a username or password the request carried, and writes one
 * line each otherwise.  Built with libFuzzer by build.sh, and with gcc by
 * make check as a replay of the committed corpus (fuzz_corpus_driver.c). */
#include "config.h"

#include <ctype.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "fuzz_util.h"
#include "git_credential.h"

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

static bool
clean (const char *s)
{
  for (; *s; s++)
    if ((unsigned char) *s < ' ' || *s == 0x7f)
      return false;
  return true;
}

static void
check_path (const char *p)
{
  if (!clean (p))
    fuzz_fail ("path with a control character: %s", p);
  if (p[0] == '\0')
    fuzz_fail ("empty path");
  for (const char *seg = p;;)
    {
      const char *end = strchrnul (seg, '/');
      size_t n = (size_t) (end - seg);
      if (n == 0 || (n == 1 && seg[0] == '.') || (n == 2 && seg[0] == '.' && seg[1] == '.'))
        fuzz_fail ("path with an empty, . or .. segment: %s", p);
      if (!*end)
        break;
      seg = end + 1;
    }
}

static bool
same (const char *a, const char *b)
{
  return (a == NULL && b == NULL) || (a && b && strcmp (a, b) == 0);
}

/* protocol, host, path written back as lines read again to the same. */
static void
round_trip (const hv_git_credential *c)
{
  char *text = NULL;
  size_t len = 0;
  FILE *f = open_memstream (&text, &len);
  if (c->protocol)
    fprintf (f, "protocol=%s\n", c->protocol);
  if (c->host)
    fprintf (f, "host=%s\n", c->host);
  if (c->path)
    fprintf (f, "path=%s\n", c->path);
  fputc ('\n', f);
  fclose (f);
  hv_git_credential back = { 0 };
  hv_error *err = NULL;
  if (hv_git_credential_parse (text, len, &back, &err) < 0)
    fuzz_fail ("written back, refused: %s", err->msg);
  if (!same (back.protocol, c->protocol) || !same (back.host, c->host) || !same (back.path, c->path))
    fuzz_fail ("written back, read to other fields");
  hv_git_credential_clear (&back);
  free (text);
}

static const hv_git_credential_host hosts[] = {
  { .host = "github.com", .port = 0, .path_prefix = "org/repo.git" },
  { .host = "example.com", .port = 8443, .path_prefix = NULL },
};

static void
check_decision (const char *action, const hv_git_credential *c)
{
  const char *why = NULL;
  int i = hv_git_credential_decide (action, c, hosts, sizeof hosts / sizeof hosts[0], &why);
  if (i < 0)
    {
      if (why == NULL)
        fuzz_fail ("refused without a reason");
      return;
    }
  if (i >= (int) (sizeof hosts / sizeof hosts[0]))
    fuzz_fail ("an entry out of the table");
  if (strcmp (action, "get") != 0 || strcmp (c->protocol, "https") != 0)
    fuzz_fail ("allowed %s over %s", action, c->protocol);
  const hv_git_credential_host *h = &hosts[i];
  size_t n = strlen (h->host);
  if (strncasecmp (c->host, h->host, n) != 0)
    fuzz_fail ("allowed host %s for %s", c->host, h->host);
  const char *port = c->host + n;
  unsigned want = h->port ? h->port : 443;
  if (*port == '\0' ? want != 443 : *port != ':' || (unsigned) atoi (port + 1) != want)
    fuzz_fail ("allowed host %s for %s port %u", c->host, h->host, want);
  if (h->path_prefix)
    {
      size_t pn = strlen (h->path_prefix);
      if (c->path == NULL || strncmp (c->path, h->path_prefix, pn) != 0 || (c->path[pn] && c->path[pn] != '/'))
        fuzz_fail ("allowed path %s for prefix %s", c->path ? c->path : "(none)", h->path_prefix);
    }
}

static void
check_answer (const hv_git_credential *c)
{
  if (!c->username || !c->password)
    return;
  char *answer = NULL;
  hv_error *err = NULL;
  bool breaks = strpbrk (c->username, "\r\n") || strpbrk (c->password, "\r\n");
  int r = hv_git_credential_answer (c->username, c->password, &answer, &err);
  if (breaks != (r < 0))
    fuzz_fail ("answer %s a line break", breaks ? "took" : "refused without");
  if (r == 0)
    {
      size_t lines = 0;
      for (const char *p = answer; (p = strchr (p, '\n')); p++)
        lines++;
      if (lines != 3)
        fuzz_fail ("answer of %zu lines", lines);
      free (answer);
    }
  else
    hv_error_free (&err);
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  hv_git_credential c = { 0 };
  char *action = NULL;
  hv_error *err = NULL;
  if (hv_git_credential_parse_cache ((const char *) data, size, &action, &c, &err) < 0)
    {
      if (action || c.protocol || c.host || c.path || c.username || c.password || c.n_capability || c.n_wwwauth)
        fuzz_fail ("refused, yet something kept");
      hv_error_free (&err);
      return 0;
    }
  if (action == NULL || action[0] == '\0')
    fuzz_fail ("no action");
  for (const char *a = action; *a; a++)
    if (!islower ((unsigned char) *a))
      fuzz_fail ("action not lower-case letters: %s", action);
  if (c.protocol && (!isalpha ((unsigned char) c.protocol[0]) || !clean (c.protocol)))
    fuzz_fail ("protocol: %s", c.protocol);
  if (c.host && (!clean (c.host) || strpbrk (c.host, " /@")))
    fuzz_fail ("host: %s", c.host);
  if (c.path)
    check_path (c.path);
  round_trip (&c);
  check_decision (action, &c);
  check_answer (&c);
  free (action);
  hv_git_credential_clear (&c);
  return 0;
}
