/* Warnings about allowed destinations that are legal but leak: hosts
 * where anyone can write (an agent that reaches them can carry the
 * project out), public DNS-over-HTTPS/TLS resolvers (names asked of them
 * skip haven's resolver, and can carry data), every address.  Warnings,
 * not errors: devcontainer needs the package registries. */
#include "config.h"

#include <arpa/inet.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "policy_network.h"
#include "utils.h"

struct zone
{
  const char *zone;
  const char *what;
  bool writable; /* an exfiltration channel, not only a source of anyone's files */
};

/* A name is the zone or below it. */
static const struct zone user_content[] = {
  { "github.com", "a code host anyone can push, open issues or post gists to", true },
  { "githubusercontent.com", "GitHub's user content (raw files, gists, release assets)", true },
  { "gitlab.com", "a code host anyone can push to", true },
  { "bitbucket.org", "a code host anyone can push to", true },
  { "registry.npmjs.org", "a package registry anyone can publish to", true },
  { "registry.yarnpkg.com", "a package registry anyone can publish to", true },
  { "pypi.org", "a package registry anyone can publish to", true },
  { "pythonhosted.org", "PyPI's file storage: what the sandbox fetches there is whatever anyone published on "
                        "pypi.org, which it can write to if it can reach pypi.org",
    false },
  { "crates.io", "a package registry anyone can publish to", true },
  { "rubygems.org", "a package registry anyone can publish to", true },
  { "s3.amazonaws.com", "object storage anyone can write to (their own bucket)", true },
  { "storage.googleapis.com", "object storage anyone can write to (their own bucket)", true },
  { "blob.core.windows.net", "object storage anyone can write to (their own container)", true },
  { "pastebin.com", "a paste service", true },
  { "paste.ee", "a paste service", true },
  { "hastebin.com", "a paste service", true },
  { "dpaste.org", "a paste service", true },
  { "termbin.com", "a paste service", true },
  { "transfer.sh", "a file-drop service", true },
  { "0x0.st", "a file-drop service", true },
  { "file.io", "a file-drop service", true },
  { "webhook.site", "a request logger anyone can read", true },
  { "ngrok.io", "a tunnel to anyone's machine", true },
  { "ngrok-free.app", "a tunnel to anyone's machine", true },
  { "discord.com", "a chat service with webhooks", true },
  { "hooks.slack.com", "a chat webhook", true },
  { "api.telegram.org", "a chat bot API", true },
};

static const char *const doh_names[] = {
  "dns.google", "dns.google.com", "cloudflare-dns.com", "one.one.one.one", "quad9.net", "doh.opendns.com",
  "dns.adguard.com", "dns.adguard-dns.com", "dns.nextdns.io", "doh.cleanbrowsing.org", "dns.mullvad.net",
};

static const char *const doh_addresses[] = {
  "1.1.1.1",           "1.0.0.1",         "8.8.8.8",         "8.8.4.4",          "9.9.9.9",
  "149.112.112.112",   "208.67.222.222",  "208.67.220.220",  "94.140.14.14",     "2606:4700:4700::1111",
  "2606:4700:4700::1001", "2001:4860:4860::8888", "2001:4860:4860::8844", "2620:fe::fe", "2620:fe::9",
};

#define DOH_WHAT                                                                                   \
  "a public DNS resolver (DNS over HTTPS/TLS): names asked of it skip haven's resolver and its "  \
  "refusals, and can carry data out"

/* Does rule r reach (part of) zone: a name at or below it, or a wildcard
 * that covers it or lies inside it? */
static bool
reaches_zone (const hv_net_rule *r, const char *zone)
{
  if (r->kind == HV_NET_RULE_NAME)
    return hv_net_name_under (r->name, zone, true);
  return hv_net_name_under (r->name, zone, true) || hv_net_name_under (zone, r->name, false);
}

char *
hv_net_rule_caution (const hv_net_rule *r)
{
  if (r->kind == HV_NET_RULE_CIDR)
    {
      if (r->prefix == 0)
        return xstrdup ("every address: TCP to anywhere on these ports, as good as an open network for them");
      for (size_t i = 0; i < N_ELEMENTS (doh_addresses); i++)
        {
          uint8_t a[16];
          int family = strchr (doh_addresses[i], ':') ? AF_INET6 : AF_INET;
          if (inet_pton (family, doh_addresses[i], a) == 1 && hv_net_rule_matches_addr (r, family, a))
            return xasprintf ("%s is %s", doh_addresses[i], DOH_WHAT);
        }
      return NULL;
    }
  if (r->kind == HV_NET_RULE_WILDCARD && strchr (r->name, '.') == NULL)
    return xasprintf ("every name under the top-level domain .%s", r->name);
  for (size_t i = 0; i < N_ELEMENTS (doh_names); i++)
    if (reaches_zone (r, doh_names[i]))
      return xasprintf ("%s is %s", doh_names[i], DOH_WHAT);
  for (size_t i = 0; i < N_ELEMENTS (user_content); i++)
    if (reaches_zone (r, user_content[i].zone))
      return xasprintf ("%s is %s%s", user_content[i].zone, user_content[i].what,
                        user_content[i].writable ? ": an exfiltration channel for whatever the sandbox can read" : "");
  /* Regional S3 endpoints: bucket.s3.eu-west-1.amazonaws.com. */
  if (hv_net_name_under (r->name, "amazonaws.com", false)
      && (strstr (r->name, ".s3.") || strstr (r->name, ".s3-") || str_has_prefix (r->name, "s3.")
          || str_has_prefix (r->name, "s3-")))
    return xstrdup ("S3 is object storage anyone can write to (their own bucket): an exfiltration channel for "
                    "whatever the sandbox can read");
  return NULL;
}
