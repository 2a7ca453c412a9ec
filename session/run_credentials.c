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
#include "ssh_agent_view.h"
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

/* One secret for the monitor's services, owned by c from here on
 * (release wipes it), so that a check failing after it cannot leak it. */
static void
add_service_secret (struct hv_run_credentials *c, char *service, char *username, char *secret)
{
  c->service_secrets = xrealloc (c->service_secrets, (c->n_service_secrets + 1) * sizeof (*c->service_secrets));
  c->service_secrets[c->n_service_secrets++]
      = (struct hv_service_secret){ .service = service, .username = username, .secret = secret };
}

/* credentials.ssh_agent {keys: [...]}: each key's fingerprint (a public
 * key file read now, as a token file is: the sandbox must not be able to
 * re-point or rewrite it, or it would choose which key the next run's
 * view lets it use), and the run's own directory, where create binds the
 * view's socket.  The agent itself was checked by find_ssh_agent. */
static int
prepare_ssh_agent_view (const hv_policy *p, const struct hv_run_ctx *ctx, const char *bundle,
                        struct hv_run_credentials *c, hv_error **err)
{
  for (size_t i = 0; i < p->ssh_agent_keys.n; i++)
    {
      const char *k = p->ssh_agent_keys.v[i];
      if (str_has_prefix (k, "SHA256:"))
        {
          oci_strv_push_unique (&c->ssh_agent_view_keys, k);
          continue;
        }
      cleanup_free char *where = xasprintf ("%s: credentials.ssh_agent.keys", p->ssh_agent_keys_where.v[i]);
      cleanup_free char *text = NULL;
      if (read_secret_file (ctx, k, where, &c->files, &text, err) < 0)
        return -1;
      hv_ssh_fingerprint fp;
      if (hv_ssh_pubkey_fingerprint (text, strlen (text), fp, err) < 0)
        return hv_error_wrap (err, "%s: %s", where, k);
      oci_strv_push_unique (&c->ssh_agent_view_keys, fp);
    }
  /* The bundle's real path: create reaches the directory through no
   * link, and the bundle is this run's own. */
  cleanup_free char *real = realpath (bundle, NULL);
  if (real == NULL)
    return hv_error_set (err, errno, "credentials.ssh_agent: bundle %s", bundle);
  cleanup_free char *dir = xasprintf ("%s/ssh-agent", real);
  if (mkdir (dir, 0700) < 0)
    return hv_error_set (err, errno, "credentials.ssh_agent: mkdir %s", dir);
  c->ssh_agent_view_dir = steal_pointer (&dir);
  return 0;
}

/* credentials.git: each token read now (a missing file or variable
 * fails the run here, naming the entry), kept in memory for create,
 * which hands it to the monitor's broker; and the run's own directory,
 * where create binds the broker's socket.  No token is written anywhere. */
static int
read_git_credentials (const hv_policy *p, const struct hv_run_ctx *ctx, const char *bundle,
                      struct hv_run_credentials *c, hv_error **err)
{
  if (p->n_git_creds == 0)
    return 0;
  for (size_t i = 0; i < p->n_git_creds; i++)
    {
      const hv_secret_source *s = &p->git_creds[i];
      if (s->from_host)
        continue; /* the monitor asks the host's git when the sandbox's asks */
      char *token = NULL;
      cleanup_free char *what = xasprintf ("credentials.git: %s", s->name);
      if (read_secret (ctx, s, what, &c->files, &token, err) < 0)
        return -1;
      /* Stored before it is checked: release wipes it either way. */
      add_service_secret (c, xasprintf ("git:%s", s->name), xstrdup (s->username), token);
      for (const char *t = token; *t; t++)
        if ((unsigned char) *t < 0x20 || *t == 0x7f)
          return hv_error_set (err, 0, "%s: the token for %s holds a control character (a second line?)", s->where,
                               s->name);
    }
  /* The bundle's real path: create reaches the directory through no
   * link, and the bundle is ours (made by this run), so resolving it
   * here is safe where resolving it there would not be. */
  cleanup_free char *real = realpath (bundle, NULL);
  if (real == NULL)
    return hv_error_set (err, errno, "credentials.git: bundle %s", bundle);
  char *dir = xasprintf ("%s/git", real);
  if (mkdir (dir, 0700) < 0)
    {
      int e = errno;
      free (dir);
      return hv_error_set (err, e, "credentials.git: mkdir %s/git", real);
    }
  c->git_credentials = dir;
  return 0;
}

/* The run's git directory (the broker's socket; read-only in the
 * sandbox, yet nothing is followed and depth is bounded all the same). */
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
  for (size_t i = 0; i < p->n_api_creds; i++)
    {
      const hv_api_credential *a = &p->api_creds[i];
      if (!hv_api_active (a, ctx->host_env))
        continue;
      cleanup_free char *what = xasprintf ("credentials.api: %s", a->key.name);
      char *key = NULL;
      if (read_secret (ctx, &a->key, what, &c->files, &key, err) < 0)
        return -1;
      add_service_secret (c, xasprintf ("api:%s", a->provider), NULL, key);
      for (const char *k = key; *k; k++)
        if ((unsigned char) *k <= 0x20 || (unsigned char) *k >= 0x7f)
          return hv_error_set (err, 0, "%s: the key for %s holds a space, a control or a non-ASCII character: "
                               "not one an HTTP header can carry",
                               a->key.where, a->key.name);
    }
  return 0;
}

/* A key as long as real ones are (an Anthropic key has over 100
 * characters, Gemini's 39) anywhere in the config; a shorter one (a test's)
 * only as a whole variable's value, NAME=KEY, where a short string cannot
 * be there by chance. */
#define KEY_SEARCHED_ANYWHERE 20

static bool
config_holds (const char *config_json, const char *key)
{
  if (strlen (key) >= KEY_SEARCHED_ANYWHERE)
    return strstr (config_json, key) != NULL;
  cleanup_free char *entry = xasprintf ("=%s\"", key);
  return strstr (config_json, entry) != NULL;
}

int
hv_run_credentials_check_config (const hv_policy *p, const struct hv_run_credentials *c, const char *config_json,
                                 hv_error **err)
{
  for (size_t i = 0; i < c->n_service_secrets; i++)
    if (config_holds (config_json, c->service_secrets[i].secret))
      for (size_t j = 0; j < p->n_api_creds; j++)
        if (strncmp (c->service_secrets[i].service, "api:", 4) == 0
            && strcmp (c->service_secrets[i].service + 4, p->api_creds[j].provider) == 0)
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
  /* With keys, the sandbox gets the view, never the agent's own socket
   * (the monitor asks the agent at $SSH_AUTH_SOCK, checked just now). */
  if (p->ssh_agent.value && p->ssh_agent_keys.n)
    {
      free (steal_pointer (&out->ssh_agent_socket));
      if (prepare_ssh_agent_view (p, ctx, bundle, out, err) < 0)
        return -1;
      ctx->ssh_agent_view_dir = out->ssh_agent_view_dir;
      ctx->ssh_agent_view_keys = &out->ssh_agent_view_keys;
    }
  if (read_git_credentials (p, ctx, bundle, out, err) < 0)
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
  if (c->ssh_agent_view_dir)
    remove_tree_at (AT_FDCWD, c->ssh_agent_view_dir, 0);
  free (c->ssh_agent_view_dir);
  oci_strv_free (&c->ssh_agent_view_keys);
  for (size_t i = 0; i < c->n_service_secrets; i++)
    {
      struct hv_service_secret *s = &c->service_secrets[i];
      explicit_bzero ((char *) s->secret, strlen (s->secret));
      free ((char *) s->secret);
      free ((char *) s->username);
      free ((char *) s->service);
    }
  free (c->service_secrets);
  if (c->git_credentials)
    remove_tree_at (AT_FDCWD, c->git_credentials, 0);
  free (c->git_credentials);
  oci_strv_free (&c->files);
  memset (c, 0, sizeof (*c));
}
