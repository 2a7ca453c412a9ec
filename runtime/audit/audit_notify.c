/* Answering seccomp notifications into a trail (audit_notify.h): each
 * denied system call is answered EPERM and recorded, the first of each
 * call always, repeats under the trail's rate and size limits and
 * summarised in "dropped" records.  Apart from audit_trail.c, the
 * writer, because a denial record also goes to the run's view
 * (denial_view.h), which writes through the trail. */
#include "config.h"
#include "audit_notify.h"

#include <errno.h>
#include <fcntl.h>
#include <seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "denial_explain.h"
#include "denial_view.h"
#include "json_gen.h"
#include "utils.h"

static double
elapsed (const struct timespec *a, const struct timespec *b)
{
  return (double) (b->tv_sec - a->tv_sec) + (double) (b->tv_nsec - a->tv_nsec) / 1e9;
}

static void
count_dropped (struct hv_audit_trail *t, const struct seccomp_notif *req)
{
  t->dropped++;
  t->dropped_total++;
  for (size_t i = 0; i < t->n_kinds; i++)
    if (t->kinds[i].arch == req->data.arch && t->kinds[i].nr == req->data.nr)
      {
        t->kinds[i].count++;
        return;
      }
  if (t->n_kinds < HV_AUDIT_MAX_KINDS)
    t->kinds[t->n_kinds++] = (struct hv_audit_dropped_kind) { req->data.arch, req->data.nr, 1 };
  else
    t->other++;
}

/* May a denial be recorded now?  Refills the bucket. */
static bool
take_token (struct hv_audit_trail *t)
{
  struct timespec now;
  clock_gettime (CLOCK_MONOTONIC, &now);
  t->tokens += elapsed (&t->last, &now) * HV_AUDIT_RATE;
  if (t->tokens > HV_AUDIT_BURST)
    t->tokens = HV_AUDIT_BURST;
  t->last = now;
  if (t->tokens < 1)
    return false;
  t->tokens -= 1;
  return true;
}

/* Was a denial of this system call recorded before?  Remembers it when
 * not (and there is room): the caller records it. */
static bool
first_of_kind (struct hv_audit_trail *t, const struct seccomp_notif *req)
{
  for (size_t i = 0; i < t->n_recorded; i++)
    if (t->recorded[i].arch == req->data.arch && t->recorded[i].nr == req->data.nr)
      return false;
  if (t->n_recorded >= HV_AUDIT_MAX_RECORDED)
    return false;
  t->recorded[t->n_recorded].arch = req->data.arch;
  t->recorded[t->n_recorded].nr = req->data.nr;
  t->n_recorded++;
  return true;
}

static void
record_denial (struct hv_audit_trail *t, const struct seccomp_notif *req, const char *process)
{
  bool first = first_of_kind (t, req);
  if (!first && (t->capped || !take_token (t)))
    {
      count_dropped (t, req);
      return;
    }
  /* The summary of what was dropped comes before the next record (past
   * the cap only the final one). */
  if (!t->capped)
    hv_audit_trail_summarize (t, false);
  /* The process names itself: informative only, and any bytes at all. */
  char path[64], comm[64] = "";
  snprintf (path, sizeof (path), "/proc/%u/comm", req->pid);
  int fd = open (path, O_RDONLY | O_CLOEXEC);
  if (fd >= 0)
    {
      ssize_t n = read (fd, comm, sizeof (comm) - 1);
      comm[n > 0 ? n : 0] = '\0';
      comm[strcspn (comm, "\n")] = '\0';
      close (fd);
    }
  hv_audit_trail_denied (t, req, process, comm);
  /* Past the cap only the final summary is written (bounded too: one
   * entry per distinct system call, at most HV_AUDIT_MAX_KINDS), and the
   * first denial of a system call not recorded before. */
  if (t->written >= HV_AUDIT_MAX_BYTES)
    t->capped = true;
}

void
hv_audit_trail_denied (struct hv_audit_trail *t, const struct seccomp_notif *req, const char *process,
                       const char *comm)
{
  yajl_gen g = hv_audit_trail_record (t, "denied");
  if (process)
    hv_audit_put_kv (g, "process", process);
  cleanup_free char *name = seccomp_syscall_resolve_num_arch (req->data.arch, req->data.nr);
  char nr[32];
  snprintf (nr, sizeof (nr), "%d", req->data.nr);
  hv_audit_put_kv (g, "syscall", name ? name : nr);
  jg_str (g, "pid");
  yajl_gen_integer (g, req->pid);
  hv_audit_put_kv (g, "comm", comm);
  jg_str (g, "args");
  yajl_gen_array_open (g);
  for (size_t i = 0; i < 6; i++)
    {
      char hex[24];
      snprintf (hex, sizeof (hex), "0x%llx", (unsigned long long) req->data.args[i]);
      jg_str (g, hex);
    }
  yajl_gen_array_close (g);
  struct hv_denial_facts f = { .kind = HV_DENIAL_SYSCALL, .syscall = name ? name : nr };
  hv_denial_explain_put (g, t->rules, &f);
  hv_audit_denial_emit (t, g);
}

static int
alloc_notif_buffers (struct hv_audit_trail *t)
{
  if (t->req)
    return 0;
  struct seccomp_notif_sizes sizes;
  if (syscall (SYS_seccomp, SECCOMP_GET_NOTIF_SIZES, 0, &sizes) < 0)
    return -1;
  t->req_size = sizes.seccomp_notif > sizeof (*t->req) ? sizes.seccomp_notif : sizeof (*t->req);
  t->resp_size = sizes.seccomp_notif_resp > sizeof (*t->resp) ? sizes.seccomp_notif_resp : sizeof (*t->resp);
  t->req = xmalloc0 (t->req_size);
  t->resp = xmalloc0 (t->resp_size);
  return 0;
}

int
hv_audit_trail_answer (struct hv_audit_trail *t, int notify_fd, const char *process)
{
  if (alloc_notif_buffers (t) < 0)
    return -1;
  memset (t->req, 0, t->req_size);
  if (ioctl (notify_fd, SECCOMP_IOCTL_NOTIF_RECV, t->req) < 0)
    /* ENOENT: the caller died (or was interrupted) before we read it. */
    return errno == EINTR || errno == ENOENT ? 0 : -1;
  /* Recorded or not, every denied call is answered EPERM below. */
  record_denial (t, t->req, process);
  memset (t->resp, 0, t->resp_size);
  t->resp->id = t->req->id;
  t->resp->error = -EPERM;
  /* ENOENT: the caller died meanwhile; nothing to answer. */
  ioctl (notify_fd, SECCOMP_IOCTL_NOTIF_SEND, t->resp);
  return 0;
}

int
hv_audit_receive_notify_fd (int sock, char **msg)
{
  char data[65536];
  struct iovec iov = { data, sizeof (data) - 1 };
  union
  {
    char buf[CMSG_SPACE (sizeof (int))];
    struct cmsghdr align;
  } ctl;
  struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.buf, .msg_controllen = sizeof (ctl.buf) };
  ssize_t n = recvmsg (sock, &m, MSG_CMSG_CLOEXEC);
  if (n <= 0)
    return -1;
  struct cmsghdr *c = CMSG_FIRSTHDR (&m);
  if (c == NULL || c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
    return -1;
  int fd;
  memcpy (&fd, CMSG_DATA (c), sizeof (fd));
  if (msg)
    {
      data[n] = '\0';
      *msg = xstrdup (data);
    }
  return fd;
}
