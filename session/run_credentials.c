/* Credentials a policy gives the sandbox on purpose (run_credentials.h).
 *
 * Token files are secrets the sandbox is meant to get, but their path
 * must not become a way to read others: the last component is opened
 * with O_NOFOLLOW, only a regular file of at most HV_SECRET_MAX_SIZE
 * bytes, owned by the caller and writable by no one else, is read (a
 * link to ~/.ssh/id_ed25519 planted where the token was, or a FIFO, is
 * refused), and hv_check_secret_files refuses a token file the sandbox
 * could rewrite or re-point (run_trust.c). */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "file_read.h"
#include "policy_api.h"
#include "run_credentials.h"
#include "utils.h"

static const char *
host_var (const struct hv_run_ctx *ctx, const char *name)
{
  size_t len = strlen (name);
  for (char **e = ctx->host_env; e && *e; e++)
    if (strncmp (*e, name, len) == 0 && (*e)[len] == '=')
      return *e + len + 1;
  return NULL;
}

/* ~/x is the caller's $HOME/x. */
static char *
expand_home (const struct hv_run_ctx *ctx, const char *path)
{
  if (path[0] == '~' && path[1] == '/')
    return ctx->home && ctx->home[0] == '/' ? xasprintf ("%s%s", ctx->home, path + 1) : NULL;
  return xstrdup (path);
}

static int
read_secret_fd (int fd, const char *path, const char *where, char **value, hv_error **err)
{
  struct stat st;
  if (fstat (fd, &st) < 0)
    return hv_error_set (err, errno, "%s: %s", where, path);
  if (!S_ISREG (st.st_mode))
    return hv_error_set (err, 0, "%s: %s is not a regular file", where, path);
  if (st.st_uid != geteuid ())
    return hv_error_set (err, 0, "%s: %s is owned by uid %u, not by you (uid %u): refusing to read it as a token",
                         where, path, (unsigned) st.st_uid, (unsigned) geteuid ());
  if (st.st_mode & (S_IWGRP | S_IWOTH))
    return hv_error_set (err, 0, "%s: %s is writable by others (mode %04o): chmod go-w it", where, path,
                         (unsigned) (st.st_mode & 07777));
  if (st.st_size > HV_SECRET_MAX_SIZE)
    return hv_error_set (err, 0, "%s: %s is larger than %u bytes", where, path, HV_SECRET_MAX_SIZE);
  cleanup_free char *buf = NULL;
  size_t n = 0;
  /* Never past the bound, whatever the file grew to since fstat. */
  if (hv_read_fd_max (fd, (size_t) st.st_size, HV_SECRET_MAX_SIZE, &buf, &n, NULL) < 0)
    return errno == EFBIG ? hv_error_set (err, 0, "%s: %s is larger than %u bytes", where, path, HV_SECRET_MAX_SIZE)
                          : hv_error_set (err, errno, "%s: read %s", where, path);
  if (memchr (buf, '\0', n))
    return hv_error_set (err, 0, "%s: %s holds a NUL byte: not a token", where, path);
  /* `echo TOKEN > file` ends it with a newline that is no part of it. */
  while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == '\r'))
    buf[--n] = '\0';
  if (n == 0)
    return hv_error_set (err, 0, "%s: %s is empty", where, path);
  *value = steal_pointer (&buf);
  return 0;
}

static int
read_secret_file (const struct hv_run_ctx *ctx, const char *spec, const char *where, oci_strv *files, char **value,
                  hv_error **err)
{
  cleanup_free char *path = expand_home (ctx, spec);
  if (path == NULL)
    return hv_error_set (err, 0, "%s: %s: HOME is not set to an absolute path", where, spec);
  struct stat st;
  /* The type before opening: opening a device or FIFO can have effects
   * of its own (and O_NONBLOCK keeps a FIFO swapped in from blocking). */
  if (lstat (path, &st) < 0)
    return hv_error_set (err, errno, "%s: token file %s", where, path);
  if (S_ISLNK (st.st_mode))
    return hv_error_set (err, 0, "%s: %s is a symbolic link: name the file itself", where, path);
  if (!S_ISREG (st.st_mode))
    return hv_error_set (err, 0, "%s: %s is not a regular file", where, path);
  cleanup_close int fd = open (path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd < 0)
    return hv_error_set (err, errno, "%s: token file %s", where, path);
  if (read_secret_fd (fd, path, where, value, err) < 0)
    return -1;
  oci_strv_push (files, path);
  return 0;
}

/* what: "env.set_from_file: GITHUB_TOKEN", "credentials.git: github.com". */
static int
read_secret (const struct hv_run_ctx *ctx, const hv_secret_source *s, const char *what, oci_strv *files, char **value,
             hv_error **err)
{
  if (s->file)
    {
      cleanup_free char *where = xasprintf ("%s: %s", s->where, what);
      return read_secret_file (ctx, s->file, where, files, value, err);
    }
  const char *v = host_var (ctx, s->host_var);
  if (v == NULL || v[0] == '\0')
    return hv_error_set (err, 0, "%s: %s: the host variable %s is not set", s->where, what, s->host_var);
  *value = xstrdup (v);
  return 0;
}

/* The agent socket named by $SSH_AUTH_SOCK: a socket of the caller's on
 * which an agent answers.  Refused when there is none, rather than a
 * sandbox whose `git push` fails later with a vaguer message. */
static int
find_ssh_agent (const hv_policy *p, const struct hv_run_ctx *ctx, char **out, hv_error **err)
{
  const char *where = p->ssh_agent_where ? p->ssh_agent_where : p->file;
  const char *sock = host_var (ctx, "SSH_AUTH_SOCK");
  if (sock == NULL || sock[0] == '\0')
    return hv_error_set (err, 0,
                         "%s: credentials.ssh_agent is true, but SSH_AUTH_SOCK is not set: no ssh-agent is running "
                         "(start one: eval \"$(ssh-agent)\"; ssh-add)",
                         where);
  cleanup_free char *real = realpath (sock, NULL);
  struct stat st;
  if (real == NULL || lstat (real, &st) < 0)
    return hv_error_set (err, errno, "%s: credentials.ssh_agent: SSH_AUTH_SOCK=%s", where, sock);
  if (!S_ISSOCK (st.st_mode))
    return hv_error_set (err, 0, "%s: credentials.ssh_agent: SSH_AUTH_SOCK=%s is not a socket", where, sock);
  if (st.st_uid != geteuid ())
    return hv_error_set (err, 0, "%s: credentials.ssh_agent: SSH_AUTH_SOCK=%s is owned by uid %u, not by you", where,
                         sock, (unsigned) st.st_uid);
  struct sockaddr_un sa = { .sun_family = AF_UNIX };
  if (strlen (real) >= sizeof (sa.sun_path))
    return hv_error_set (err, 0, "%s: credentials.ssh_agent: SSH_AUTH_SOCK=%s: path too long", where, sock);
  strcpy (sa.sun_path, real);
  cleanup_close int fd = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0 || connect (fd, (struct sockaddr *) &sa, sizeof (sa)) < 0)
    return hv_error_set (err, errno, "%s: credentials.ssh_agent: no ssh-agent answers at SSH_AUTH_SOCK=%s", where,
                         sock);
  *out = steal_pointer (&real);
  return 0;
}

/* Percent-encoding of everything but RFC 3986's unreserved characters,
 * as git's credential-store reads user and password from a URL. */
static char *
url_encode (const char *s)
{
  static const char hex[] = "0123456789ABCDEF";
  char *out = xmalloc0 (strlen (s) * 3 + 1), *o = out;
  for (const unsigned char *c = (const unsigned char *) s; *c; c++)
    if ((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') || strchr ("-._~", *c))
      *o++ = (char) *c;
    else
      {
        *o++ = '%';
        *o++ = hex[*c >> 4];
        *o++ = hex[*c & 15];
      }
  return out;
}

/* One https://user:token@host line per credentials.git entry: git's
 * credential-store answers only for a request whose protocol and host
 * equal one of them, so git inside gets a token for these hosts only. */
static int
write_git_credentials (const hv_policy *p, const struct hv_run_ctx *ctx, const char *bundle,
                       struct hv_run_credentials *c, hv_error **err)
{
  if (p->n_git_creds == 0)
    return 0;
  size_t len = 0;
  cleanup_free char *text = xstrdup ("");
  for (size_t i = 0; i < p->n_git_creds; i++)
    {
      const hv_secret_source *s = &p->git_creds[i];
      cleanup_free char *token = NULL;
      cleanup_free char *what = xasprintf ("credentials.git: %s", s->name);
      if (read_secret (ctx, s, what, &c->files, &token, err) < 0)
        return -1;
      for (const char *t = token; *t; t++)
        if ((unsigned char) *t < 0x20 || *t == 0x7f)
          return hv_error_set (err, 0, "%s: the token for %s holds a control character (a second line?)", s->where,
                               s->name);
      cleanup_free char *user = url_encode (s->username);
      cleanup_free char *pass = url_encode (token);
      char *more = xasprintf ("%shttps://%s:%s@%s\n", text, user, pass, s->name);
      explicit_bzero (token, strlen (token));
      explicit_bzero (text, strlen (text));
      free (text);
      text = more;
    }
  len = strlen (text);
  c->git_credentials = xasprintf ("%s/git", bundle);
  if (mkdir (c->git_credentials, 0700) < 0)
    return hv_error_set (err, errno, "credentials.git: mkdir %s", c->git_credentials);
  int r = write_file_atomic (c->git_credentials, "credentials", text, len, err);
  explicit_bzero (text, len);
  if (r < 0)
    return hv_error_wrap (err, "credentials.git");
  return 0;
}

/* The run's git directory, whatever the sandbox left in it (it is
 * writable there): nothing is followed, depth is bounded. */
static void
remove_tree_at (int parent, const char *name, int depth)
{
  if (unlinkat (parent, name, 0) == 0 || (errno != EISDIR && errno != EPERM) || depth > 32)
    return;
  int fd = openat (parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  DIR *d = fd < 0 ? NULL : fdopendir (fd);
  if (d == NULL)
    {
      if (fd >= 0)
        close (fd);
      return;
    }
  struct dirent *de;
  while ((de = readdir (d)))
    if (strcmp (de->d_name, ".") != 0 && strcmp (de->d_name, "..") != 0)
      remove_tree_at (dirfd (d), de->d_name, depth + 1);
  closedir (d);
  unlinkat (parent, name, AT_REMOVEDIR);
}

/* credentials.api: the key of each item this run serves (policy_api.h:
 * token_env set, or a token_file, which must then be readable), for the
 * monitor's gateway.  A key travels in a header: printable ASCII without
 * space only, checked here so that a bad one stops the run before the
 * sandbox exists (the error never holds it). */
static int
read_api_keys (const hv_policy *p, const struct hv_run_ctx *ctx, struct hv_run_credentials *c, hv_error **err)
{
  c->services = p->n_api_creds ? xmalloc0 (p->n_api_creds * sizeof (*c->services)) : NULL;
  for (size_t i = 0; i < p->n_api_creds; i++)
    {
      const hv_api_credential *a = &p->api_creds[i];
      if (!hv_api_active (a, ctx->host_env))
        continue;
      cleanup_free char *what = xasprintf ("credentials.api: %s", a->key.name);
      char *key = NULL;
      if (read_secret (ctx, &a->key, what, &c->files, &key, err) < 0)
        return -1;
      c->services[c->n_services++] = (struct hv_service_secret) { xasprintf ("api:%s", a->provider), NULL, key };
      for (const char *k = key; *k; k++)
        if ((unsigned char) *k <= 0x20 || (unsigned char) *k >= 0x7f)
          return hv_error_set (err, 0, "%s: the key for %s holds a space, a control or a non-ASCII character: "
                               "not one an HTTP header can carry",
                               a->key.where, a->key.name);
    }
  return 0;
}

int
hv_run_credentials_check_config (const hv_policy *p, const struct hv_run_credentials *c, const char *config_json,
                                 hv_error **err)
{
  for (size_t i = 0; i < c->n_services; i++)
    if (strstr (config_json, c->services[i].secret))
      for (size_t j = 0; j < p->n_api_creds; j++)
        if (strcmp (c->services[i].service + 4, p->api_creds[j].provider) == 0)
          return hv_error_set (err, 0,
                               "%s: credentials.api: the key for %s would reach the sandbox: its value is in the "
                               "compiled config (another variable or file the policy passes holds it too); not "
                               "starting",
                               p->api_creds[j].key.where, p->api_creds[j].key.name);
  return 0;
}

int
hv_run_credentials_prepare (const hv_policy *p, struct hv_run_ctx *ctx, const char *bundle,
                            struct hv_run_credentials *out, hv_error **err)
{
  for (size_t i = 0; i < p->n_env_from; i++)
    {
      char *value = NULL;
      const hv_secret_source *s = &p->env_from[i];
      cleanup_free char *what = xasprintf ("env.%s: %s", s->file ? "set_from_file" : "set_from_env", s->name);
      if (read_secret (ctx, s, what, &out->files, &value, err) < 0)
        return -1;
      out->env.v = xrealloc (out->env.v, (out->env.n + 1) * sizeof (oci_kv));
      out->env.v[out->env.n++] = (oci_kv) { xstrdup (p->env_from[i].name), value };
    }
  if (p->ssh_agent.value && find_ssh_agent (p, ctx, &out->ssh_agent_socket, err) < 0)
    return -1;
  if (write_git_credentials (p, ctx, bundle, out, err) < 0)
    return -1;
  if (read_api_keys (p, ctx, out, err) < 0)
    return -1;
  ctx->secret_env = out->env.n ? &out->env : NULL;
  ctx->ssh_agent_socket = out->ssh_agent_socket;
  ctx->git_credentials = out->git_credentials;
  return 0;
}

void
hv_run_credentials_release (struct hv_run_credentials *c)
{
  for (size_t i = 0; i < c->env.n; i++)
    explicit_bzero (c->env.v[i].value, strlen (c->env.v[i].value));
  oci_kv_list_free (&c->env);
  free (c->ssh_agent_socket);
  if (c->git_credentials)
    remove_tree_at (AT_FDCWD, c->git_credentials, 0);
  free (c->git_credentials);
  oci_strv_free (&c->files);
  for (size_t i = 0; i < c->n_services; i++)
    {
      explicit_bzero ((char *) c->services[i].secret, strlen (c->services[i].secret));
      free ((char *) c->services[i].secret);
      free ((char *) c->services[i].service);
    }
  free (c->services);
  memset (c, 0, sizeof (*c));
}
