#include "config.h"
#include "seccomp_filter.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>
#include <yajl/yajl_gen.h>

#include "json_gen.h"
#include "oci_tables.h"
#include "seccomp_arch.h"
#include "seccomp_args.h"
#include "unix_socket.h"
#include "utils.h"

/* runc and crun answer SCMP_ACT_ERRNO without errnoRet with EPERM: the
 * call fails in a way programs handle, instead of killing them. */
static uint32_t
action_value (int action, const oci_opt_u64 *errno_ret)
{
  uint16_t e = errno_ret->set ? (uint16_t) errno_ret->value : EPERM;
  switch (action)
    {
    case OCI_SCMP_KILL:
    case OCI_SCMP_KILL_THREAD:
      return SCMP_ACT_KILL_THREAD;
    case OCI_SCMP_KILL_PROCESS:
      return SCMP_ACT_KILL_PROCESS;
    case OCI_SCMP_TRAP:
      return SCMP_ACT_TRAP;
    case OCI_SCMP_ERRNO:
      return SCMP_ACT_ERRNO (e);
    case OCI_SCMP_TRACE:
      return SCMP_ACT_TRACE (e);
    case OCI_SCMP_LOG:
      return SCMP_ACT_LOG;
    case OCI_SCMP_NOTIFY:
      return SCMP_ACT_NOTIFY;
    default:
      return SCMP_ACT_ALLOW;
    }
}

/* libseccomp returns -EEXIST for a rule it already has (two
 * alternatives can coincide): that is not an error. */
static int
add_one (scmp_filter_ctx ctx, uint32_t action, int nr, unsigned n, const struct scmp_arg_cmp *cmps)
{
  int r = seccomp_rule_add_array (ctx, action, nr, n, cmps);
  return r == -EEXIST ? 0 : r;
}

/* The most rules one OCI rule may become: comparisons of narrow
 * arguments turn into up to 32 alternatives each. */
#define MAX_RULES_PER_ENTRY 4096

static int
add_rule (scmp_filter_ctx ctx, const oci_seccomp_syscall *s, const char *name, int nr, uint32_t action,
          hv_error **err)
{
  size_t n = s->n_args;
  bool repeated = false;
  for (size_t i = 0; i < n; i++)
    for (size_t j = 0; j < i; j++)
      if (s->args[j].index == s->args[i].index)
        repeated = true;
  /* Distinct arguments: one rule ANDing them all (at most six exist). */
  if (!repeated && n > 6)
    return hv_error_set (err, 0, "seccomp: rule for \"%s\" compares %zu arguments (at most 6 exist)", name, n);
  /* Each comparison, as the kernel reads the argument: an OR of
   * alternatives (see seccomp_args.c). */
  cleanup_free struct scmp_arg_cmp(*alts)[HV_SCMP_MAX_ALTERNATIVES] = xmalloc0 ((n + 1) * sizeof (*alts));
  cleanup_free size_t *n_alts = xmalloc0 ((n + 1) * sizeof (*n_alts));
  for (size_t i = 0; i < n; i++)
    {
      struct scmp_arg_cmp raw = { .arg = s->args[i].index, .op = (enum scmp_compare) s->args[i].op,
                                  .datum_a = s->args[i].value, .datum_b = s->args[i].value_two };
      n_alts[i] = hv_seccomp_narrow_cmp (&raw, hv_seccomp_arg_width_mask (name, s->args[i].index), alts[i]);
    }
  int r = 0;
  if (repeated)
    {
      /* libseccomp ANDs comparisons and refuses two on the same argument;
       * like runc and crun, several comparisons of one argument mean OR:
       * one rule each, for every one of them (dropping any would leave the
       * rule more permissive than asked). */
      for (size_t i = 0; i < n && r == 0; i++)
        for (size_t k = 0; k < n_alts[i] && r == 0; k++)
          r = add_one (ctx, action, nr, 1, &alts[i][k]);
    }
  else
    {
      /* An AND of ORs: one rule per combination of alternatives.  None
       * when a comparison can never hold for the kernel's value. */
      size_t total = 1;
      for (size_t i = 0; i < n; i++)
        {
          total *= n_alts[i];
          if (total > MAX_RULES_PER_ENTRY)
            return hv_error_set (err, 0, "seccomp: rule for \"%s\" needs more than %d comparisons", name,
                                 MAX_RULES_PER_ENTRY);
        }
      for (size_t c = 0; c < total && r == 0; c++)
        {
          struct scmp_arg_cmp combo[6];
          size_t rest = c;
          for (size_t i = 0; i < n; i++)
            {
              combo[i] = alts[i][rest % n_alts[i]];
              rest /= n_alts[i];
            }
          r = add_one (ctx, action, nr, (unsigned) n, combo);
        }
    }
  if (r < 0)
    return hv_error_set (err, -r, "seccomp: add rule for \"%s\" (%s)", name, s->action_name);
  return 0;
}

int
hv_seccomp_build (const oci_seccomp *sc, scmp_filter_ctx *out, hv_error **err)
{
  uint32_t def = action_value (sc->default_action, &sc->default_errno_ret);
  scmp_filter_ctx ctx = seccomp_init (def);
  if (ctx == NULL)
    return hv_error_set (err, 0, "seccomp: init with default action %s", sc->default_action_name);
  int r;
  /* The caller sets no_new_privs itself, according to the config. */
  seccomp_attr_set (ctx, SCMP_FLTATR_CTL_NNP, 0);
  for (size_t i = 0; i < sc->architectures.n; i++)
    {
      uint32_t arch = hv_seccomp_arch_token (sc->architectures.v[i]);
      if (arch == 0)
        {
          seccomp_release (ctx);
          return hv_error_set (err, 0, "seccomp: architecture %s is not supported by libseccomp",
                               sc->architectures.v[i]);
        }
      r = seccomp_arch_add (ctx, arch);
      if (r < 0 && r != -EEXIST)
        {
          seccomp_release (ctx);
          return hv_error_set (err, -r, "seccomp: add architecture %s", sc->architectures.v[i]);
        }
    }
  for (size_t i = 0; i < sc->flags.n; i++)
    {
      const char *f = sc->flags.v[i];
      r = 0;
      if (strcmp (f, "SECCOMP_FILTER_FLAG_LOG") == 0)
        r = seccomp_attr_set (ctx, SCMP_FLTATR_CTL_LOG, 1);
      else if (strcmp (f, "SECCOMP_FILTER_FLAG_SPEC_ALLOW") == 0)
        r = seccomp_attr_set (ctx, SCMP_FLTATR_CTL_SSB, 1);
      else if (strcmp (f, "SECCOMP_FILTER_FLAG_TSYNC") == 0)
        r = seccomp_attr_set (ctx, SCMP_FLTATR_CTL_TSYNC, 1);
      else
        r = -EOPNOTSUPP; /* WAIT_KILLABLE_RECV needs libseccomp >= 2.6 */
      if (r < 0)
        {
          seccomp_release (ctx);
          return hv_error_set (err, -r, "seccomp: flag %s", f);
        }
    }
  for (size_t i = 0; i < sc->n_syscalls; i++)
    {
      const oci_seccomp_syscall *s = &sc->syscalls[i];
      uint32_t action = action_value (s->action, &s->errno_ret);
      /* libseccomp rejects rules that repeat the default action. */
      if (action == def)
        continue;
      for (size_t j = 0; j < s->n; j++)
        {
          int nr = seccomp_syscall_resolve_name (s->names[j]);
          /* Profiles list syscalls of every kernel and architecture; one
           * unknown here cannot be called here either. */
          if (nr == __NR_SCMP_ERROR)
            continue;
          if (add_rule (ctx, s, s->names[j], nr, action, err) < 0)
            {
              seccomp_release (ctx);
              return -1;
            }
        }
    }
  *out = ctx;
  return 0;
}

int
hv_seccomp_load (const oci_seccomp *sc, int *notify_fd, hv_error **err)
{
  scmp_filter_ctx ctx;
  *notify_fd = -1;
  if (hv_seccomp_build (sc, &ctx, err) < 0)
    return -1;
  int r = seccomp_load (ctx);
  if (r < 0)
    {
      seccomp_release (ctx);
      return hv_error_set (err, -r, "seccomp: load filter");
    }
  bool notify = sc->default_action == OCI_SCMP_NOTIFY;
  for (size_t i = 0; i < sc->n_syscalls && !notify; i++)
    notify = sc->syscalls[i].action == OCI_SCMP_NOTIFY;
  if (notify)
    {
      *notify_fd = seccomp_notify_fd (ctx);
      if (*notify_fd < 0)
        {
          seccomp_release (ctx);
          return hv_error_set (err, 0, "seccomp: no notify fd");
        }
      *notify_fd = dup (*notify_fd);
      if (*notify_fd < 0)
        {
          seccomp_release (ctx);
          return hv_error_set (err, errno, "seccomp: dup notify fd");
        }
    }
  seccomp_release (ctx);
  return 0;
}

int
hv_seccomp_connect_listener (const char *path, hv_error **err)
{
  int sock = hv_unix_connect (path, err);
  if (sock < 0)
    return hv_error_wrap (err, "seccomp listener");
  return sock;
}

int
hv_seccomp_send_notify_fd (const oci_seccomp *sc, int sock, const char *state_json, pid_t host_pid, int notify_fd,
                           hv_error **err)
{
  if (sock < 0)
    return hv_error_set (err, 0, "seccomp: SCMP_ACT_NOTIFY needs linux.seccomp.listenerPath");
  /* The container process state: the seccomp fd, the process's pid as the
   * runtime sees it, the metadata and the container state. */
  yajl_gen g = yajl_gen_alloc (NULL);
  yajl_gen_map_open (g);
  jg_kv (g, "ociVersion", HAVEN_OCI_VERSION);
  jg_str (g, "fds");
  yajl_gen_array_open (g);
  jg_str (g, "seccompFd");
  yajl_gen_array_close (g);
  jg_str (g, "pid");
  yajl_gen_integer (g, host_pid > 0 ? host_pid : getpid ());
  jg_kv (g, "metadata", sc->listener_metadata);
  jg_str (g, "state");
  if (state_json)
    yajl_gen_number (g, state_json, strlen (state_json)); /* already JSON: embedded as is */
  else
    {
      yajl_gen_map_open (g);
      yajl_gen_map_close (g);
    }
  yajl_gen_map_close (g);
  cleanup_free char *msg = jg_finish (g);
  struct iovec iov = { msg, strlen (msg) };
  union
  {
    char buf[CMSG_SPACE (sizeof (int))];
    struct cmsghdr align;
  } ctl;
  memset (&ctl, 0, sizeof (ctl));
  struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.buf, .msg_controllen = sizeof (ctl.buf) };
  struct cmsghdr *c = CMSG_FIRSTHDR (&m);
  c->cmsg_level = SOL_SOCKET;
  c->cmsg_type = SCM_RIGHTS;
  c->cmsg_len = CMSG_LEN (sizeof (int));
  memcpy (CMSG_DATA (c), &notify_fd, sizeof (int));
  if (sendmsg (sock, &m, MSG_NOSIGNAL) < 0)
    return hv_error_set (err, errno, "send seccomp notify fd to listener");
  return 0;
}
