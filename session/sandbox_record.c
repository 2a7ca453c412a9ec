#include "config.h"
#include "sandbox_record.h"

#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "utils.h"

#define RECORD_MAGIC 0x68767362u /* "hvsb" */
/* A compiled config is tens of KiB; anything near this is not a record. */
#define RECORD_MAX (8u << 20)

struct header
{
  uint32_t magic;
  uint32_t ok;
  uint32_t fd_mask; /* which of fds[] follow, in order */
  uint32_t len;     /* payload bytes after the header */
};

void
hv_sandbox_record_init (struct hv_sandbox_record *r)
{
  memset (r, 0, sizeof (*r));
  for (int i = 0; i < HV_SBR_NFDS; i++)
    r->fds[i] = -1;
}

void
hv_sandbox_record_release (struct hv_sandbox_record *r)
{
  char **strs[] = { &r->error, &r->id, &r->state_root, &r->bundle, &r->workspace, &r->policy_name, &r->config,
                    &r->audit_socket, &r->home_state, &r->audit_log, &r->syscall_profile, &r->run };
  for (size_t i = 0; i < N_ELEMENTS (strs); i++)
    {
      free (*strs[i]);
      *strs[i] = NULL;
    }
  oci_strv_free (&r->env);
  oci_strv_free (&r->env_pass);
  oci_strv_free (&r->env_deny);
  oci_strv_free (&r->env_fixed);
  oci_strv_free (&r->syscall_deny);
  for (int i = 0; i < HV_SBR_NFDS; i++)
    if (r->fds[i] >= 0)
      {
        close (r->fds[i]);
        r->fds[i] = -1;
      }
}

/* The payload: NUL-terminated strings in a fixed order; numbers in
 * decimal, a list as its length then its items. */
static void
put (oci_strv *out, const char *s)
{
  oci_strv_push (out, s ? s : "");
}

static void
put_num (oci_strv *out, long long v)
{
  oci_strv_pushf (out, "%lld", v);
}

static void
put_list (oci_strv *out, const oci_strv *l)
{
  put_num (out, (long long) l->n);
  for (size_t i = 0; i < l->n; i++)
    put (out, l->v[i]);
}

int
hv_sandbox_record_send (int sock, const struct hv_sandbox_record *r, hv_error **err)
{
  oci_strv items = { 0 };
  if (!r->ok)
    {
      put (&items, r->error);
      put_num (&items, r->errno_code);
      put_num (&items, r->exit_status);
    }
  else
    {
      const char *strs[] = { r->id,          r->state_root, r->bundle,       r->workspace,
                             r->policy_name, r->config,     r->audit_socket, r->home_state,
                             r->audit_log,   r->syscall_profile, r->run };
      for (size_t i = 0; i < N_ELEMENTS (strs); i++)
        put (&items, strs[i]);
      put_num (&items, r->scratch);
      put_num (&items, r->refuse_project_links);
      put_num (&items, r->shell);
      put_num (&items, r->timeout_s);
      put_num (&items, r->init_pid);
      put_num (&items, r->audit_listener);
      put_num (&items, r->pasta_pid);
      put_num (&items, (long long) r->audit_start.tv_sec);
      put_num (&items, r->audit_start.tv_nsec);
      put_list (&items, &r->env);
      put_list (&items, &r->env_pass);
      put_list (&items, &r->env_deny);
      put_list (&items, &r->env_fixed);
      put_list (&items, &r->syscall_deny);
    }
  size_t len = 0;
  for (size_t i = 0; i < items.n; i++)
    len += strlen (items.v[i]) + 1;
  if (len > RECORD_MAX)
    {
      oci_strv_free (&items);
      return hv_error_set (err, E2BIG, "the sandbox's record is %zu bytes, over %u", len, RECORD_MAX);
    }
  cleanup_free char *payload = xmalloc0 (len ? len : 1);
  for (size_t i = 0, off = 0; i < items.n; i++)
    {
      size_t n = strlen (items.v[i]) + 1;
      memcpy (payload + off, items.v[i], n);
      off += n;
    }
  oci_strv_free (&items);

  struct header h = { .magic = RECORD_MAGIC, .ok = r->ok, .len = (uint32_t) len };
  int fds[HV_SBR_NFDS];
  size_t nfds = 0;
  for (int i = 0; r->ok && i < HV_SBR_NFDS; i++)
    if (r->fds[i] >= 0)
      {
        h.fd_mask |= 1u << i;
        fds[nfds++] = r->fds[i];
      }
  union
  {
    char buf[CMSG_SPACE (sizeof (int) * HV_SBR_NFDS)];
    struct cmsghdr align;
  } ctl;
  memset (&ctl, 0, sizeof (ctl));
  struct iovec iov = { .iov_base = &h, .iov_len = sizeof (h) };
  struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1 };
  if (nfds)
    {
      msg.msg_control = ctl.buf;
      msg.msg_controllen = CMSG_SPACE (sizeof (int) * nfds);
      struct cmsghdr *c = CMSG_FIRSTHDR (&msg);
      c->cmsg_level = SOL_SOCKET;
      c->cmsg_type = SCM_RIGHTS;
      c->cmsg_len = CMSG_LEN (sizeof (int) * nfds);
      memcpy (CMSG_DATA (c), fds, sizeof (int) * nfds);
    }
  ssize_t n;
  do
    n = sendmsg (sock, &msg, MSG_NOSIGNAL);
  while (n < 0 && errno == EINTR);
  if (n != (ssize_t) sizeof (h))
    return hv_error_set (err, n < 0 ? errno : EIO, "send the sandbox's record");
  if (write_all (sock, payload, len) < 0)
    return hv_error_set (err, errno, "send the sandbox's record");
  return 0;
}

static int
read_full (int fd, void *buf, size_t len)
{
  for (size_t off = 0; off < len;)
    {
      ssize_t n = read (fd, (char *) buf + off, len - off);
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        return -1;
      off += (size_t) n;
    }
  return 0;
}

struct cursor
{
  const char *p, *end;
  bool bad;
};

static const char *
next (struct cursor *c)
{
  const char *nul = c->bad ? NULL : memchr (c->p, '\0', (size_t) (c->end - c->p));
  if (nul == NULL)
    {
      c->bad = true;
      return "";
    }
  const char *s = c->p;
  c->p = nul + 1;
  return s;
}

static char *
next_dup (struct cursor *c)
{
  return xstrdup (next (c));
}

static long long
next_num (struct cursor *c, long long min, long long max)
{
  const char *s = next (c);
  char *end;
  errno = 0;
  long long v = strtoll (s, &end, 10);
  if (errno || end == s || *end || v < min || v > max)
    {
      c->bad = true;
      return 0;
    }
  return v;
}

static void
next_list (struct cursor *c, oci_strv *out)
{
  long long n = next_num (c, 0, RECORD_MAX);
  for (long long i = 0; i < n && !c->bad; i++)
    oci_strv_push (out, next (c));
}

int
hv_sandbox_record_recv (int sock, struct hv_sandbox_record *r, hv_error **err)
{
  hv_sandbox_record_init (r);
  struct header h;
  union
  {
    char buf[CMSG_SPACE (sizeof (int) * HV_SBR_NFDS)];
    struct cmsghdr align;
  } ctl;
  struct iovec iov = { .iov_base = &h, .iov_len = sizeof (h) };
  struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.buf, .msg_controllen = sizeof (ctl.buf) };
  ssize_t n;
  do
    n = recvmsg (sock, &msg, MSG_CMSG_CLOEXEC | MSG_WAITALL);
  while (n < 0 && errno == EINTR);
  /* Whatever descriptors came are ours to close, also on a bad header. */
  int got[HV_SBR_NFDS];
  size_t ngot = 0;
  for (struct cmsghdr *c = CMSG_FIRSTHDR (&msg); c; c = CMSG_NXTHDR (&msg, c))
    if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS)
      {
        size_t k = (c->cmsg_len - CMSG_LEN (0)) / sizeof (int);
        int tmp[HV_SBR_NFDS];
        memcpy (tmp, CMSG_DATA (c), k * sizeof (int));
        for (size_t i = 0; i < k; i++)
          if (ngot < HV_SBR_NFDS)
            got[ngot++] = tmp[i];
          else
            close (tmp[i]);
      }
  if (n == 0)
    return hv_error_set (err, 0, "the sandbox's maker ended without a word");
  bool header_ok = n == (ssize_t) sizeof (h) && h.magic == RECORD_MAGIC && h.len <= RECORD_MAX
                   && (msg.msg_flags & MSG_CTRUNC) == 0 && (h.fd_mask >> HV_SBR_NFDS) == 0
                   && (size_t) __builtin_popcount (h.fd_mask) == ngot;
  if (!header_ok)
    {
      for (size_t i = 0; i < ngot; i++)
        close (got[i]);
      return hv_error_set (err, n < 0 ? errno : 0, "the sandbox's maker sent a malformed record");
    }
  for (int i = 0, k = 0; i < HV_SBR_NFDS; i++)
    if (h.fd_mask & (1u << i))
      r->fds[i] = got[k++];
  cleanup_free char *payload = xmalloc0 (h.len + 1);
  if (read_full (sock, payload, h.len) < 0)
    {
      hv_sandbox_record_release (r);
      return hv_error_set (err, 0, "the sandbox's maker ended in the middle of its record");
    }
  struct cursor c = { .p = payload, .end = payload + h.len };
  r->ok = h.ok != 0;
  if (!r->ok)
    {
      r->error = next_dup (&c);
      r->errno_code = (int) next_num (&c, 0, 4095);
      r->exit_status = (int) next_num (&c, 0, 255);
    }
  else
    {
      char **strs[] = { &r->id, &r->state_root, &r->bundle, &r->workspace, &r->policy_name, &r->config,
                        &r->audit_socket, &r->home_state, &r->audit_log, &r->syscall_profile, &r->run };
      for (size_t i = 0; i < N_ELEMENTS (strs); i++)
        *strs[i] = next_dup (&c);
      r->scratch = next_num (&c, 0, 1);
      r->refuse_project_links = next_num (&c, 0, 1);
      r->shell = next_num (&c, 0, 1);
      r->timeout_s = (uint32_t) next_num (&c, 0, UINT32_MAX);
      r->init_pid = (pid_t) next_num (&c, 1, INT32_MAX);
      r->audit_listener = (pid_t) next_num (&c, 0, INT32_MAX);
      r->pasta_pid = (pid_t) next_num (&c, 0, INT32_MAX);
      r->audit_start.tv_sec = (time_t) next_num (&c, 0, INT64_MAX);
      r->audit_start.tv_nsec = (long) next_num (&c, 0, 999999999);
      next_list (&c, &r->env);
      next_list (&c, &r->env_pass);
      next_list (&c, &r->env_deny);
      next_list (&c, &r->env_fixed);
      next_list (&c, &r->syscall_deny);
      if (!c.bad && (r->fds[HV_SBR_KEEPER] < 0 || r->fds[HV_SBR_PIDFD] < 0 || r->fds[HV_SBR_WORKSPACE] < 0))
        c.bad = true;
    }
  if (c.bad || c.p != c.end)
    {
      hv_sandbox_record_release (r);
      return hv_error_set (err, 0, "the sandbox's maker sent a malformed record");
    }
  return 0;
}
