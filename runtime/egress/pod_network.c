/* One network policy per pod: pod_network.h. */
#include "config.h"
#include "pod_network.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "file_read.h"
#include "haven_annotations.h"
#include "netns_sockets.h"
#include "safe_path.h"
#include "utils.h"

/* The record is small: four short lines and the rules. */
#define RECORD_MAX (256 * 1024)
#define RECORD_MAGIC "haven pod network 1"

void
hv_pod_network_clear (struct hv_pod_network *p)
{
  free (p->sandbox_id);
  free (p->pod);
  free (p->container);
  free (p->policy);
  free (p->rules);
  *p = (struct hv_pod_network) HV_POD_NETWORK_INIT;
}

/* The rules as the pod shares them: the policy's name left out, so that
 * two policies with the same network rules share one table. */
static char *
rules_text (const hv_egress_config *egress, bool none)
{
  if (egress == NULL)
    return none ? xstrdup (HV_POD_NETWORK_NONE) : NULL;
  hv_egress_config unnamed = *egress;
  unnamed.policy = (char *) "";
  return hv_egress_config_generate (&unnamed);
}

char *
hv_pod_network_record_text (unsigned long long dev, unsigned long long ino, const char *fingerprint,
                            const char *policy, const char *rules)
{
  return xasprintf (RECORD_MAGIC "\nnetns %llu %llu\ntable %s\npolicy %s\nrules %s\n", dev, ino, fingerprint, policy,
                    rules);
}

/* The value of line "KEY VALUE" at *pos (advanced past it), or NULL. */
static char *
take_line (char **pos, const char *key)
{
  char *line = *pos;
  char *end = strchr (line, '\n');
  if (end == NULL)
    return NULL;
  *end = '\0';
  *pos = end + 1;
  size_t k = strlen (key);
  if (strncmp (line, key, k) != 0 || line[k] != ' ')
    return NULL;
  return line + k + 1;
}

int
hv_pod_network_record_parse (const char *text, const char *name, struct hv_pod_network *out, char **policy,
                             char **rules, hv_error **err)
{
  cleanup_free char *copy = xstrdup (text);
  char *pos = copy, *magic = copy, *netns, *table, *pol, *rl;
  char *nl = strchr (copy, '\n');
  if (nl == NULL)
    return hv_error_set (err, 0, "%s: not a pod network record", name);
  *nl = '\0';
  pos = nl + 1;
  unsigned long long dev, ino;
  int at = 0;
  if (strcmp (magic, RECORD_MAGIC) != 0 || (netns = take_line (&pos, "netns")) == NULL
      || sscanf (netns, "%llu %llu%n", &dev, &ino, &at) != 2 || netns[at] != '\0'
      || (table = take_line (&pos, "table")) == NULL || strlen (table) != HV_EGRESS_FINGERPRINT_LEN - 1
      || (pol = take_line (&pos, "policy")) == NULL || (rl = take_line (&pos, "rules")) == NULL || rl[0] == '\0'
      || *pos != '\0')
    return hv_error_set (err, 0, "%s: not a pod network record", name);
  out->netns_dev = dev;
  out->netns_ino = ino;
  memcpy (out->fingerprint, table, HV_EGRESS_FINGERPRINT_LEN);
  *policy = xstrdup (pol);
  *rules = xstrdup (rl);
  return 0;
}

/* The sandbox's record, read from its state directory (root/id), every
 * component opened without following links: a directory of the state
 * root is the runtime's own, but nothing here trusts a link in it. */
static int
read_record (const char *root, const char *id, char **text, hv_error **err)
{
  cleanup_close int rootfd = open (root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (rootfd < 0)
    return hv_error_set (err, errno, "state root %s", root);
  const unsigned long long how = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV;
  cleanup_close int dir = hv_openat2 (rootfd, id, O_RDONLY | O_DIRECTORY, 0, how);
  if (dir < 0)
    return errno == ENOENT ? 1 : hv_error_set (err, errno, "the pod's sandbox container %s/%s", root, id);
  cleanup_close int fd = hv_openat2 (dir, HV_POD_NETWORK_RECORD_FILE, O_RDONLY | O_NONBLOCK, 0, how);
  if (fd < 0)
    return errno == ENOENT ? 1 : hv_error_set (err, errno, "%s/%s/%s", root, id, HV_POD_NETWORK_RECORD_FILE);
  cleanup_free char *name = xasprintf ("%s/%s/%s", root, id, HV_POD_NETWORK_RECORD_FILE);
  return hv_read_regular_fd (fd, name, RECORD_MAX, text, NULL, err) < 0 ? -1 : 0;
}

static const char *
or_none (const char *policy)
{
  return policy && policy[0] ? policy : "(none)";
}

/* What the rules are, in a few words, for the refusal. */
static const char *
rules_kind (const char *rules)
{
  if (rules == NULL)
    return "no network rules";
  return strcmp (rules, HV_POD_NETWORK_NONE) == 0 ? "network none" : "an allowlist";
}

/* A container of the pod: the pod's rules (the sandbox's record, text;
 * NULL when it has none) must be this config's. */
static int
match_sandbox (struct hv_pod_network *p, const char *root, const char *text, const char *rules, hv_error **err)
{
  cleanup_free char *their_policy = NULL;
  cleanup_free char *their_rules = NULL;
  cleanup_free char *name = xasprintf ("%s/%s/%s", root, p->sandbox_id, HV_POD_NETWORK_RECORD_FILE);
  if (text && hv_pod_network_record_parse (text, name, p, &their_policy, &their_rules, err) < 0)
    return -1;
  if (rules && their_rules && strcmp (rules, their_rules) == 0)
    return 0;
  /* Differing rules (or rules on one side only) cannot both hold in one
   * network namespace: every packet of it passes the one table. */
  return hv_error_set (err, 0,
                       "all containers of a pod share one network policy: container %s of pod %s (policy %s: %s) "
                       "differs from the pod's sandbox container %s (policy %s: %s)%s",
                       p->container ? p->container : "?", p->pod, or_none (p->policy), rules_kind (rules),
                       p->sandbox_id, or_none (their_policy), text ? rules_kind (their_rules) : "no network rules recorded",
                       text ? "" : " (its record is missing: was it made by this runtime, with a policy?)");
}

/* A Kubernetes pod: a CRI runtime names the pod's namespace and name on
 * each of its containers.  Podman puts CRI-O's type and sandbox-id
 * annotations on its own pods' containers too (for Kata), naming no
 * namespace, and its pod's infra container need not run under this
 * runtime: those keep what a container in a joined namespace gets. */
static bool
kubernetes_pod (const hv_pod_identity *id)
{
  return id->role != HV_POD_NONE && id->pod_namespace && id->pod_name;
}

int
hv_pod_network_prepare (const oci_spec *spec, const char *state_root, const hv_egress_config *egress, bool none,
                        struct hv_pod_network *p, hv_error **err)
{
  *p = (struct hv_pod_network) HV_POD_NETWORK_INIT;
  hv_pod_identity id;
  if (hv_pod_identity_read (spec, "config.json", &id, err) < 0)
    return -1;
  if (!kubernetes_pod (&id))
    return 0;
  cleanup_free char *rules = rules_text (egress, none);
  const char *policy = oci_kv_get (&spec->annotations, HV_POLICY_ANNOTATION);
  p->sandbox_id = xstrdup (id.sandbox_id);
  p->pod = xasprintf ("%s/%s", id.pod_namespace, id.pod_name);
  p->container = id.container_name ? xstrdup (id.container_name) : NULL;
  p->policy = xstrdup (policy ? policy : "");
  if (id.role == HV_POD_CONTAINER)
    {
      cleanup_free char *text = NULL;
      int r = read_record (state_root, id.sandbox_id, &text, err);
      /* A container without rules of its own in a pod without any:
       * nothing to share.  Anything else must match the sandbox. */
      if (r < 0 || (!(r == 1 && rules == NULL) && match_sandbox (p, state_root, text, rules, err) < 0))
        {
          hv_pod_network_clear (p);
          return -1;
        }
      if (rules == NULL)
        {
          hv_pod_network_clear (p);
          return 0;
        }
    }
  else if (rules == NULL)
    {
      hv_pod_network_clear (p);
      return 0;
    }
  p->role = id.role;
  p->rules = steal_pointer (&rules);
  return 0;
}

int
hv_pod_network_install_none (pid_t pid, hv_egress_table **table, char fingerprint[HV_EGRESS_FINGERPRINT_LEN],
                             hv_error **err)
{
  cleanup_close int ns = hv_netns_open_of_pid (pid, err);
  if (ns < 0)
    return -1;
  /* No allowed destination, no DNS target, no resolver: the output
   * chain accepts loopback only, the input chain too. */
  hv_egress_spec spec = { .nflog_group = HV_EGRESS_NFLOG_GROUP, .sandbox_mark = HV_EGRESS_SANDBOX_MARK,
                          .drop_inbound = true };
  if (hv_egress_table_open (HV_EGRESS_TABLE_NAME, ns, table, err) < 0)
    return hv_error_wrap (err, "network none in the pod's network namespace");
  if (hv_egress_table_create (*table, &spec, fingerprint, err) < 0)
    {
      /* Not made (one batch): nothing of ours to delete. */
      hv_egress_table_close (*table);
      *table = NULL;
      return hv_error_wrap (err, "network none in the pod's network namespace");
    }
  if (hv_egress_table_verify (*table, fingerprint, err) < 0)
    return hv_error_wrap (err, "network none in the pod's network namespace");
  return 0;
}

static int
netns_identity (pid_t pid, int *fd, struct stat *st, hv_error **err)
{
  *fd = hv_netns_open_of_pid (pid, err);
  if (*fd < 0)
    return -1;
  if (fstat (*fd, st) < 0)
    return hv_error_set (err, errno, "the network namespace of process %d", (int) pid);
  return 0;
}

int
hv_pod_network_record (const struct hv_pod_network *p, const char *dir, pid_t pid, const char *fingerprint,
                       hv_error **err)
{
  if (p->role != HV_POD_SANDBOX)
    return 0;
  cleanup_close int ns = -1;
  struct stat st;
  if (netns_identity (pid, &ns, &st, err) < 0)
    return hv_error_wrap (err, "the pod's network record");
  cleanup_free char *text = hv_pod_network_record_text ((unsigned long long) st.st_dev,
                                                         (unsigned long long) st.st_ino, fingerprint, p->policy,
                                                         p->rules);
  return write_file_atomic (dir, HV_POD_NETWORK_RECORD_FILE, text, strlen (text), err);
}

int
hv_pod_network_check (const struct hv_pod_network *p, pid_t pid, const char *what, hv_error **err)
{
  if (p->role != HV_POD_CONTAINER)
    return 0;
  cleanup_close int ns = -1;
  struct stat st;
  if (netns_identity (pid, &ns, &st, err) < 0)
    return hv_error_wrap (err, "the pod's network, %s", what);
  if ((unsigned long long) st.st_dev != p->netns_dev || (unsigned long long) st.st_ino != p->netns_ino)
    return hv_error_set (err, 0,
                         "the pod's network, %s: container %s of pod %s is not in the network namespace of its pod's "
                         "sandbox container %s, where the pod's network rules are",
                         what, p->container ? p->container : "?", p->pod, p->sandbox_id);
  hv_egress_table *t = NULL;
  if (hv_egress_table_open (HV_EGRESS_TABLE_NAME, ns, &t, err) < 0)
    return hv_error_wrap (err, "the pod's network, %s", what);
  int r = hv_egress_table_verify (t, p->fingerprint, err);
  hv_egress_table_close (t);
  if (r < 0)
    return hv_error_wrap (err, "the pod's network, %s: the egress table of pod %s (made by its sandbox container %s) "
                               "is not the one recorded",
                          what, p->pod, p->sandbox_id);
  return 0;
}
