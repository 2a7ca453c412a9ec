/* The model API gateway at create: gateway_sandbox.h. */
#include "config.h"
#include "gateway_sandbox.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <sched.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "haven_annotations.h"
#include "netns_sockets.h"
#include "network.h"
#include "utils.h"

#define LISTEN_BACKLOG 64

static const char *
find_secret (const struct hv_create_opts *opts, const hv_gw_api *api)
{
  cleanup_free char *service = hv_gw_service_name (api);
  for (size_t i = 0; opts && i < opts->n_service_secrets; i++)
    if (opts->service_secrets[i].service && strcmp (opts->service_secrets[i].service, service) == 0)
      return opts->service_secrets[i].secret;
  return NULL;
}

int
hv_gateway_sandbox_prepare (const oci_spec *spec, const struct hv_create_opts *opts, const char *name,
                            struct hv_gateway_sandbox *s, hv_error **err)
{
  const char *text = oci_kv_get (&spec->annotations, HV_GATEWAY_ANNOTATION);
  if (text == NULL)
    return 0;
  if (hv_gw_config_parse (text, name, &s->config, err) < 0)
    return -1;
  /* The listener is on the sandbox's loopback: without a namespace of
   * its own that would be the host's, reachable by every local process. */
  if (oci_spec_find_namespace (spec, CLONE_NEWNET) == NULL)
    return hv_error_set (err, 0,
                         "%s: .annotations[\"%s\"]: the model API gateway needs a network namespace of the "
                         "sandbox's own (.linux.namespaces has no network namespace)",
                         name, HV_GATEWAY_ANNOTATION);
  for (size_t i = 0; i < s->config->n; i++)
    {
      const hv_gw_api_cfg *a = &s->config->apis[i];
      if (a->key_file)
        {
          if (hv_gw_read_key_file (a->key_file, &s->keys[i], err) < 0)
            return hv_error_wrap (err, "%s: .annotations[\"%s\"]: .apis[%zu].key_file", name, HV_GATEWAY_ANNOTATION,
                                  i);
          continue;
        }
      const char *secret = find_secret (opts, a->api);
      if (secret == NULL)
        return hv_error_set (err, 0,
                             "%s: .annotations[\"%s\"]: .apis[%zu]: no key for %s (neither a key_file nor the "
                             "caller's secret api:%s)",
                             name, HV_GATEWAY_ANNOTATION, i, a->api->name, a->api->name);
      if (hv_gw_key_check (secret, err) < 0)
        return hv_error_wrap (err, "%s: .annotations[\"%s\"]: .apis[%zu]: the key for %s", name, HV_GATEWAY_ANNOTATION,
                              i, a->api->name);
      s->keys[i] = xstrdup (secret);
    }
  return 0;
}

/* In the child, inside the sandbox's namespace: one listener per api. */
static int
make_listeners (void *data, int *fds, hv_error **err)
{
  const hv_gw_config *c = data;
  if (hv_net_loopback_up (err) < 0)
    return hv_error_wrap (err, "bring loopback up");
  for (size_t i = 0; i < c->n; i++)
    {
      int fd = socket (AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
      if (fd < 0)
        return hv_error_set (err, errno, "socket for %s", c->apis[i].api->name);
      int one = 1;
      setsockopt (fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof (one));
      struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons (c->apis[i].port),
                               .sin_addr.s_addr = htonl (INADDR_LOOPBACK) };
      if (bind (fd, (struct sockaddr *) &a, sizeof (a)) < 0)
        return hv_error_set (err, errno, "bind 127.0.0.1:%u for %s in the container's network namespace",
                             c->apis[i].port, c->apis[i].api->name);
      if (listen (fd, LISTEN_BACKLOG) < 0)
        return hv_error_set (err, errno, "listen on 127.0.0.1:%u for %s", c->apis[i].port, c->apis[i].api->name);
      fds[i] = fd;
    }
  return 0;
}

/* The namespace is not ours: a config that names the runtime's own
 * namespace by path would put the listener on the host's loopback. */
static int
check_not_ours (int netns, hv_error **err)
{
  struct stat theirs, ours;
  if (fstat (netns, &theirs) < 0 || stat ("/proc/self/ns/net", &ours) < 0)
    return hv_error_set (err, errno, "compare network namespaces");
  if (theirs.st_dev == ours.st_dev && theirs.st_ino == ours.st_ino)
    return hv_error_set (err, 0, "the container's network namespace is the runtime's own: the model API gateway "
                                 "needs a network namespace of the sandbox's own");
  return 0;
}

int
hv_gateway_sandbox_listen (struct hv_gateway_sandbox *s, pid_t pid, struct hv_monitor *m, hv_error **err)
{
  if (s->config == NULL)
    return 0;
  const char *names[HV_GW_N_PROVIDERS];
  for (size_t i = 0; i < s->config->n; i++)
    names[i] = s->config->apis[i].api->name;
  cleanup_close int netns = hv_netns_open_of_pid (pid, err);
  if (netns < 0 || check_not_ours (netns, err) < 0
      || hv_netns_sockets (netns, names, (unsigned) s->config->n, make_listeners, s->config, s->fds, err) < 0)
    return hv_error_wrap (err, "model API gateway (%s)", HV_GATEWAY_ANNOTATION);
  for (size_t i = 0; i < s->config->n; i++)
    {
      if (s->fds[i] < 0)
        return hv_error_set (err, 0, "model API gateway: no listener for %s from the container's network namespace",
                             names[i]);
      if (hv_monitor_pass_gateway (m, names[i], &s->fds[i], err) < 0)
        return -1;
    }
  return 0;
}

void
hv_gateway_sandbox_wipe_keys (struct hv_gateway_sandbox *s)
{
  for (size_t i = 0; i < HV_GW_N_PROVIDERS; i++)
    if (s->keys[i])
      {
        explicit_bzero (s->keys[i], strlen (s->keys[i]));
        free (s->keys[i]);
        s->keys[i] = NULL;
      }
}

void
hv_gateway_sandbox_release (struct hv_gateway_sandbox *s)
{
  hv_gateway_sandbox_wipe_keys (s);
  for (size_t i = 0; i < HV_GW_N_PROVIDERS; i++)
    if (s->fds[i] >= 0)
      {
        close (s->fds[i]);
        s->fds[i] = -1;
      }
  hv_gw_config_free (s->config);
  s->config = NULL;
}
