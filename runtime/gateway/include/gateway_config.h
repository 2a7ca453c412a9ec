/* The run.haven.gateway annotation (oci/haven_annotations.h): which
 * providers' APIs the sandbox reaches through the gateway, on which port
 * of its own loopback, how each key travels, and (engine containers)
 * which host file holds the key.  Never the key itself.
 *
 * Parsed strictly: an unknown member, a provider named twice, a port
 * outside 1..65535 or used twice, an auth the provider does not take, a
 * key_file that is not an absolute path: an error naming the annotation
 * and the JSON path.  A gateway that was asked for and is not understood
 * must not start as something else. */
#ifndef HAVEN_GATEWAY_CONFIG_H
#define HAVEN_GATEWAY_CONFIG_H

#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "gateway_route.h"

typedef struct hv_gw_api_cfg
{
  const hv_gw_api *api; /* gateway_route.c's provider */
  uint16_t port;        /* on 127.0.0.1 in the sandbox's network namespace */
  hv_gw_auth auth;
  char *key_file; /* absolute host path, or NULL: the key comes from create's service_secrets */
} hv_gw_api_cfg;

typedef struct hv_gw_config
{
  hv_gw_api_cfg apis[HV_GW_N_PROVIDERS];
  size_t n;
} hv_gw_config;

/* doc names the config in errors ("config.json"). */
int hv_gw_config_parse (const char *text, const char *doc, hv_gw_config **out, hv_error **err);
void hv_gw_config_free (hv_gw_config *c);

/* The name of an auth in the annotation ("x-api-key", ...). */
const char *hv_gw_auth_name (hv_gw_auth a);

/* The secret service name of an api ("api:anthropic"), as
 * hv_create_opts.service_secrets names it (a new string). */
char *hv_gw_service_name (const hv_gw_api *api);

/* Read a key file as create does: opened without following a link at
 * its last component, a regular file owned by us or root, not writable
 * by group or others, at most HV_GW_KEY_FILE_MAX bytes; the key is its
 * text without the trailing line break(s), and must be one a header can
 * carry (printable ASCII, no space).  Errors name the file, never the
 * key. */
#define HV_GW_KEY_FILE_MAX 8192
int hv_gw_read_key_file (const char *path, char **key, hv_error **err);
/* Whether a key can travel in a header (printable ASCII, no space, not empty). */
int hv_gw_key_check (const char *key, hv_error **err);
#endif
