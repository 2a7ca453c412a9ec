/* The `run.haven.egress` annotation: egress_config.h. */
#include "config.h"
#include "egress_config.h"
#include "egress_resolver.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>
#include <yajl/yajl_gen.h>
#include <yajl/yajl_tree.h>

#include "haven_annotations.h"
#include "json_gen.h"
#include "json_walk.h"
#include "utils.h"

#define NAME_MAX_LEN 253
#define LABEL_MAX_LEN 63

const char *
hv_egress_connect_name (hv_egress_connect c)
{
  return c == HV_EGRESS_CONNECT_PASTA ? "pasta" : "engine";
}

void
hv_egress_config_add_cidr (hv_egress_cidr **v, size_t *n, const hv_egress_cidr *c)
{
  *v = xrealloc (*v, (*n + 1) * sizeof (**v));
  (*v)[(*n)++] = *c;
}

void
hv_egress_config_add_name (hv_egress_name_rule **v, size_t *n, const char *name, bool subdomains, uint16_t port_min,
                           uint16_t port_max)
{
  *v = xrealloc (*v, (*n + 1) * sizeof (**v));
  (*v)[(*n)++] = (hv_egress_name_rule){ .name = xstrdup (name), .subdomains = subdomains, .port_min = port_min,
                                        .port_max = port_max };
}

static void
free_names (hv_egress_name_rule *v, size_t n)
{
  for (size_t i = 0; i < n; i++)
    free ((char *) v[i].name);
  free (v);
}

void
hv_egress_config_free (hv_egress_config *c)
{
  if (c == NULL)
    return;
  free (c->policy);
  free (c->allow);
  free (c->deny);
  free_names (c->names, c->n_names);
  free_names (c->deny_names, c->n_deny_names);
  free_names (c->ask_names, c->n_ask_names);
  free (c);
}

/* ------------------------------------------------------------------ */
/* Parsing                                                             */
/* ------------------------------------------------------------------ */

static int
parse_ports (json_walk *w, yajl_val obj, uint16_t *min, uint16_t *max)
{
  const char *text;
  if (jw_member_string (w, obj, "ports", true, &text) < 0)
    return -1;
  hv_error *e = NULL;
  if (hv_egress_ports_parse (text, min, max, &e) < 0)
    {
      jw_fail_key (w, "ports", "%s", e->msg);
      hv_error_free (&e);
      return -1;
    }
  return 0;
}

/* A list of the config being filled, for the walk that fills it. */
typedef struct cidr_list
{
  hv_egress_cidr **v;
  size_t *n;
} cidr_list;

typedef struct name_list
{
  hv_egress_name_rule **v;
  size_t *n;
} name_list;

/* One CIDR entry, added to list (a cidr_list). */
static int
take_cidr (json_walk *w, yajl_val v, void *list)
{
  static const char *const known[] = { "cidr", "ports", NULL };
  cidr_list *l = list;
  const char *text;
  if (jw_expect_object (w, v) < 0 || jw_only_keys (w, v, known) < 0 || jw_member_string (w, v, "cidr", true, &text) < 0)
    return -1;
  hv_egress_cidr c;
  hv_error *e = NULL;
  if (hv_egress_cidr_parse (text, &c, &e) < 0)
    {
      jw_fail_key (w, "cidr", "%s", e->msg);
      hv_error_free (&e);
      return -1;
    }
  if (parse_ports (w, v, &c.port_min, &c.port_max) < 0)
    return -1;
  hv_egress_config_add_cidr (l->v, l->n, &c);
  return 0;
}

/* What the resolver compares names with: lower case, no trailing dot,
 * host-name characters (and '_', which service names use). */
static const char *
name_problem (const char *name)
{
  size_t len = strlen (name), label = 0;
  if (len == 0)
    return "a name is not empty";
  if (len > NAME_MAX_LEN)
    return "a name is at most 253 characters";
  if (name[len - 1] == '.' || name[0] == '.')
    return "a name has no leading or trailing dot";
  for (const char *p = name; *p; p++)
    {
      if (*p == '.')
        {
          if (label == 0)
            return "a name has no empty label";
          label = 0;
          continue;
        }
      if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '-' || *p == '_'))
        return "a name has only lower-case letters, digits, '-', '_' and dots";
      if (++label > LABEL_MAX_LEN)
        return "a label of a name is at most 63 characters";
    }
  return NULL;
}

/* One name entry, added to list (a name_list). */
static int
take_name (json_walk *w, yajl_val v, void *list)
{
  static const char *const known[] = { "name", "subdomains", "ports", NULL };
  name_list *l = list;
  const char *name;
  if (jw_expect_object (w, v) < 0 || jw_only_keys (w, v, known) < 0 || jw_member_string (w, v, "name", true, &name) < 0)
    return -1;
  const char *problem = name_problem (name);
  if (problem)
    return jw_fail_key (w, "name", "\"%s\": %s", name, problem);
  bool sub = false;
  yajl_val s = jw_lookup (v, "subdomains");
  if (!jw_absent (s))
    {
      size_t saved = jw_push_key (w, "subdomains");
      int r = jw_as_bool (w, s, &sub);
      jw_pop (w, saved);
      if (r < 0)
        return -1;
    }
  uint16_t port_min, port_max;
  if (parse_ports (w, v, &port_min, &port_max) < 0)
    return -1;
  hv_egress_config_add_name (l->v, l->n, name, sub, port_min, port_max);
  return 0;
}

/* Each entry of array root[key] (absent: none) to take, with the walk's
 * path at the entry for its errors; the first failure ends the walk. */
static int
walk_list (json_walk *w, yajl_val root, const char *key, int (*take) (json_walk *, yajl_val, void *), void *list)
{
  yajl_val array = jw_lookup (root, key);
  if (jw_absent (array))
    return 0;
  size_t saved = jw_push_key (w, key);
  int r = jw_expect_array (w, array);
  for (size_t i = 0; r == 0 && i < array->u.array.len; i++)
    {
      size_t at = jw_push_index (w, i);
      r = take (w, array->u.array.values[i], list);
      jw_pop (w, at);
    }
  jw_pop (w, saved);
  return r;
}

static int
parse_connect (json_walk *w, yajl_val root, hv_egress_connect *out)
{
  const char *text;
  if (jw_member_string (w, root, "connect", true, &text) < 0)
    return -1;
  if (strcmp (text, "engine") == 0)
    *out = HV_EGRESS_CONNECT_ENGINE;
  else if (strcmp (text, "pasta") == 0)
    *out = HV_EGRESS_CONNECT_PASTA;
  else
    return jw_fail_key (w, "connect", "\"%s\" is neither \"engine\" nor \"pasta\"", text);
  return 0;
}

/* ask_all and ask_timeout_ms: the timeout is there exactly when
 * something asks. */
static int
parse_ask (json_walk *w, yajl_val root, hv_egress_config *c)
{
  yajl_val all = jw_lookup (root, "ask_all"), t = jw_lookup (root, "ask_timeout_ms");
  if (!jw_absent (all))
    {
      size_t saved = jw_push_key (w, "ask_all");
      int r = jw_as_bool (w, all, &c->ask_all);
      jw_pop (w, saved);
      if (r < 0)
        return -1;
    }
  bool asks = c->ask_all || c->n_ask_names;
  if (jw_absent (t))
    return asks ? jw_fail_key (w, "ask_timeout_ms", "missing (the config asks)") : 0;
  size_t saved = jw_push_key (w, "ask_timeout_ms");
  uint32_t ms = 0;
  int r = jw_as_u32 (w, t, &ms);
  if (r == 0 && (ms < 1000 || ms > 600000))
    r = jw_fail (w, "%u: not 1000-600000", ms);
  if (r == 0 && !asks)
    r = jw_fail (w, "without ask_names or ask_all");
  jw_pop (w, saved);
  c->ask_timeout_ms = ms;
  return r;
}

int
hv_egress_config_parse (const char *json, const char *doc, hv_egress_config **out, hv_error **err)
{
  static const char *const known[] = { "policy",    "connect", "allow",          "deny", "names", "deny_names",
                                       "ask_names", "ask_all", "ask_timeout_ms", NULL };
  json_walk w;
  jw_init (&w, doc, err);
  jw_push_key (&w, "annotations[\"" HV_EGRESS_ANNOTATION "\"]");
  yajl_val root = NULL;
  if (jw_parse (&w, json, &root) < 0)
    return -1;
  hv_egress_config *c = xmalloc0 (sizeof (*c));
  const char *policy = NULL;
  int r = jw_expect_object (&w, root);
  if (r == 0)
    r = jw_only_keys (&w, root, known);
  if (r == 0)
    r = jw_member_string (&w, root, "policy", true, &policy);
  if (r == 0)
    {
      c->policy = xstrdup (policy);
      r = parse_connect (&w, root, &c->connect);
    }
  if (r == 0)
    r = walk_list (&w, root, "allow", take_cidr, &(cidr_list){ &c->allow, &c->n_allow });
  if (r == 0)
    r = walk_list (&w, root, "deny", take_cidr, &(cidr_list){ &c->deny, &c->n_deny });
  if (r == 0)
    r = walk_list (&w, root, "names", take_name, &(name_list){ &c->names, &c->n_names });
  if (r == 0)
    r = walk_list (&w, root, "deny_names", take_name, &(name_list){ &c->deny_names, &c->n_deny_names });
  if (r == 0)
    r = walk_list (&w, root, "ask_names", take_name, &(name_list){ &c->ask_names, &c->n_ask_names });
  if (r == 0)
    r = parse_ask (&w, root, c);
  yajl_tree_free (root);
  if (r < 0)
    {
      hv_egress_config_free (c);
      return -1;
    }
  *out = c;
  return 0;
}

/* ------------------------------------------------------------------ */
/* Generating                                                          */
/* ------------------------------------------------------------------ */

static void
put_ports (yajl_gen g, uint16_t min, uint16_t max)
{
  char text[16];
  if (min <= 1 && max == 65535)
    snprintf (text, sizeof (text), "any");
  else if (min == max)
    snprintf (text, sizeof (text), "%u", min);
  else
    snprintf (text, sizeof (text), "%u-%u", min, max);
  jg_kv (g, "ports", text);
}

static void
put_cidrs (yajl_gen g, const char *key, const hv_egress_cidr *v, size_t n)
{
  jg_str (g, key);
  yajl_gen_array_open (g);
  for (size_t i = 0; i < n; i++)
    {
      char addr[INET6_ADDRSTRLEN], text[INET6_ADDRSTRLEN + 8];
      inet_ntop (v[i].family, v[i].addr, addr, sizeof (addr));
      snprintf (text, sizeof (text), "%s/%u", addr, v[i].prefix_len);
      yajl_gen_map_open (g);
      jg_kv (g, "cidr", text);
      put_ports (g, v[i].port_min, v[i].port_max);
      yajl_gen_map_close (g);
    }
  yajl_gen_array_close (g);
}

static void
put_names (yajl_gen g, const char *key, const hv_egress_name_rule *v, size_t n)
{
  jg_str (g, key);
  yajl_gen_array_open (g);
  for (size_t i = 0; i < n; i++)
    {
      yajl_gen_map_open (g);
      jg_kv (g, "name", v[i].name);
      jg_str (g, "subdomains");
      yajl_gen_bool (g, v[i].subdomains);
      put_ports (g, v[i].port_min, v[i].port_max);
      yajl_gen_map_close (g);
    }
  yajl_gen_array_close (g);
}

char *
hv_egress_config_generate (const hv_egress_config *c)
{
  yajl_gen g = yajl_gen_alloc (NULL);
  yajl_gen_map_open (g);
  jg_kv (g, "policy", c->policy);
  jg_kv (g, "connect", hv_egress_connect_name (c->connect));
  put_cidrs (g, "allow", c->allow, c->n_allow);
  put_cidrs (g, "deny", c->deny, c->n_deny);
  put_names (g, "names", c->names, c->n_names);
  put_names (g, "deny_names", c->deny_names, c->n_deny_names);
  if (c->n_ask_names || c->ask_all)
    {
      put_names (g, "ask_names", c->ask_names, c->n_ask_names);
      jg_str (g, "ask_all");
      yajl_gen_bool (g, c->ask_all);
      jg_str (g, "ask_timeout_ms");
      yajl_gen_integer (g, c->ask_timeout_ms);
    }
  yajl_gen_map_close (g);
  return jg_finish (g);
}
