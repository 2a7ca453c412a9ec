/* What a container may do, asked of the kernel directly: each argument
 * names one attempt, and one line "NAME: ok" or "NAME: <error>" is printed
 * for it.  Built static (no libc in the test image) and without the
 * sanitizers, so that it runs in any root filesystem.
 *
 * Two attempts print a result of their own instead (egress tests):
 *   dns:NAME            an A query to resolv.conf's first nameserver:
 *                       "dns:NAME: RCODE a=ADDR,... ede=CODE TEXT" (3 s bound)
 *   connect:HOST:PORT   HOST resolved as above (or an IPv4 literal), then a
 *                       TCP connect: "connect:HOST:PORT: connected|refused|
 *                       unreachable|timeout|dns-RCODE|error:TEXT Nms" (3 s bound) */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/if_ether.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nf_tables.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netlink.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

/* One nfnetlink request (or a batch of them) and the kernel's first
 * answer: 0 when it was carried out (or the dump ended), -1 with errno
 * set to the kernel's error otherwise.  Listing or changing nftables
 * needs CAP_NET_ADMIN in the network namespace's owner. */
static long
nfnetlink_ask (const void *req, size_t len)
{
  int fd = socket (AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_NETFILTER);
  if (fd < 0)
    return -1;
  struct sockaddr_nl k = { .nl_family = AF_NETLINK };
  if (sendto (fd, req, len, 0, (struct sockaddr *) &k, sizeof (k)) < 0)
    {
      close (fd);
      return -1;
    }
  char buf[65536];
  for (int round = 0; round < 64; round++)
    {
      struct pollfd p = { .fd = fd, .events = POLLIN };
      if (poll (&p, 1, 3000) <= 0)
        {
          close (fd);
          errno = ETIMEDOUT;
          return -1;
        }
      ssize_t n = recv (fd, buf, sizeof (buf), 0);
      if (n < 0)
        {
          close (fd);
          return -1;
        }
      for (struct nlmsghdr *h = (struct nlmsghdr *) buf; NLMSG_OK (h, (size_t) n); h = NLMSG_NEXT (h, n))
        {
          if (h->nlmsg_type == NLMSG_DONE)
            {
              close (fd);
              return 0;
            }
          if (h->nlmsg_type == NLMSG_ERROR)
            {
              int e = ((struct nlmsgerr *) NLMSG_DATA (h))->error;
              close (fd);
              if (e == 0)
                return 0;
              errno = -e;
              return -1;
            }
        }
    }
  close (fd);
  errno = EPROTO;
  return -1;
}

static void
nl_put (char *buf, size_t *off, uint16_t type, uint16_t flags, uint8_t family, uint16_t res_id, const char *table)
{
  struct nlmsghdr *h = (struct nlmsghdr *) (buf + *off);
  struct nfgenmsg *g = (struct nfgenmsg *) NLMSG_DATA (h);
  h->nlmsg_len = NLMSG_LENGTH (sizeof (*g));
  h->nlmsg_type = type;
  h->nlmsg_flags = flags;
  h->nlmsg_seq = (uint32_t) *off + 1;
  g->nfgen_family = family;
  g->version = NFNETLINK_V0;
  g->res_id = htons (res_id);
  if (table)
    {
      struct nlattr *a = (struct nlattr *) (buf + *off + NLMSG_ALIGN (h->nlmsg_len));
      a->nla_type = NFTA_TABLE_NAME;
      /* The kernel's NLA_HDRLEN and NLA_ALIGN mask with ~(4 - 1), a
       * negative int, which -Wconversion flags; the lengths are small. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wsign-conversion"
      a->nla_len = (uint16_t) (NLA_HDRLEN + strlen (table) + 1);
      memcpy ((char *) a + NLA_HDRLEN, table, strlen (table) + 1);
      h->nlmsg_len = NLMSG_ALIGN (h->nlmsg_len) + NLA_ALIGN (a->nla_len);
#pragma GCC diagnostic pop
    }
  *off += NLMSG_ALIGN (h->nlmsg_len);
}

/* nft list tables */
static long
nft_list (void)
{
  char buf[256] = { 0 };
  size_t off = 0;
  nl_put (buf, &off, (NFNL_SUBSYS_NFTABLES << 8) | NFT_MSG_GETTABLE, NLM_F_REQUEST | NLM_F_DUMP | NLM_F_ACK,
          AF_UNSPEC, 0, NULL);
  return nfnetlink_ask (buf, off);
}

/* nft delete table inet haven, as one batch */
static long
nft_delete (void)
{
  char buf[256] = { 0 };
  size_t off = 0;
  nl_put (buf, &off, NFNL_MSG_BATCH_BEGIN, NLM_F_REQUEST, AF_UNSPEC, NFNL_SUBSYS_NFTABLES, NULL);
  nl_put (buf, &off, (NFNL_SUBSYS_NFTABLES << 8) | NFT_MSG_DELTABLE, NLM_F_REQUEST | NLM_F_ACK, NFPROTO_INET, 0,
          "haven");
  nl_put (buf, &off, NFNL_MSG_BATCH_END, NLM_F_REQUEST, AF_UNSPEC, NFNL_SUBSYS_NFTABLES, NULL);
  return nfnetlink_ask (buf, off);
}

static long
ms_since (const struct timespec *t0)
{
  struct timespec t;
  clock_gettime (CLOCK_MONOTONIC, &t);
  return (t.tv_sec - t0->tv_sec) * 1000 + (t.tv_nsec - t0->tv_nsec) / 1000000;
}

/* The first nameserver of /etc/resolv.conf (IPv4), else 127.0.0.1. */
static struct in_addr
nameserver (void)
{
  struct in_addr a = { htonl (INADDR_LOOPBACK) };
  FILE *f = fopen ("/etc/resolv.conf", "re");
  char line[256], addr[64];
  while (f && fgets (line, sizeof (line), f))
    if (sscanf (line, "nameserver %63s", addr) == 1 && inet_pton (AF_INET, addr, &a) == 1)
      break;
  if (f)
    fclose (f);
  return a;
}

static const char *const rcodes[] = { "NOERROR", "FORMERR", "SERVFAIL", "NXDOMAIN", "NOTIMP", "REFUSED" };

/* A name in a message: its end, or 0 when it runs past LEN. */
/* A big-endian 16-bit field of a DNS answer. */
static unsigned
be16 (const uint8_t *p)
{
  return (unsigned) p[0] << 8 | p[1];
}

static size_t
skip_name (const uint8_t *m, size_t len, size_t i)
{
  while (i < len)
    {
      if ((m[i] & 0xc0) == 0xc0)
        return i + 2 <= len ? i + 2 : 0;
      if (m[i] == 0)
        return i + 1;
      i += (size_t) m[i] + 1;
    }
  return 0;
}

/* Ask for NAME's A records.  OUT gets "RCODE a=... ede=..."; FIRST the
 * first address (0 if none).  -1 (and OUT says why) when no answer came. */
static int
dns_ask (const char *name, char *out, size_t outlen, struct in_addr *first)
{
  uint8_t q[512], r[4096];
  size_t n = 0;
  first->s_addr = 0;
  memcpy (q, "\x12\x34\x01\x00\x00\x01\x00\x00\x00\x00\x00\x01", 12);
  n = 12;
  for (const char *l = name; *l;)
    {
      size_t k = strcspn (l, ".");
      if (k == 0 || k > 63 || n + k + 2 > 400)
        return snprintf (out, outlen, "error:bad name"), -1;
      q[n++] = (uint8_t) k;
      memcpy (q + n, l, k);
      n += k;
      l += k;
      if (*l == '.')
        l++;
    }
  q[n++] = 0;
  /* QTYPE A, QCLASS IN; an OPT record (EDNS, 1232 bytes) so that the
   * server may add an Extended DNS Error. */
  memcpy (q + n, "\x00\x01\x00\x01\x00\x00\x29\x04\xd0\x00\x00\x00\x00\x00\x00", 15);
  n += 15;
  int fd = socket (AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0)
    return snprintf (out, outlen, "error:%s", strerror (errno)), -1;
  struct sockaddr_in ns = { .sin_family = AF_INET, .sin_port = htons (53), .sin_addr = nameserver () };
  struct pollfd p = { .fd = fd, .events = POLLIN };
  ssize_t got = -1;
  if (sendto (fd, q, n, 0, (struct sockaddr *) &ns, sizeof (ns)) < 0)
    snprintf (out, outlen, "error:%s", strerror (errno));
  else if (poll (&p, 1, 3000) <= 0)
    snprintf (out, outlen, "timeout");
  else if ((got = recv (fd, r, sizeof (r), 0)) < 12)
    snprintf (out, outlen, "error:%s", got < 0 ? strerror (errno) : "short answer");
  close (fd);
  if (got < 12)
    return -1;
  size_t len = (size_t) got, i = 12;
  unsigned rcode = r[3] & 0xf, qd = be16 (r + 4), an = be16 (r + 6), ns_n = be16 (r + 8),
           ar = be16 (r + 10);
  int w = snprintf (out, outlen, "%s", rcode < 6 ? rcodes[rcode] : "RCODE?");
  for (unsigned j = 0; j < qd && i; j++)
    {
      i = skip_name (r, len, i);
      i = i && i + 4 <= len ? i + 4 : 0;
    }
  for (unsigned j = 0; j < an + ns_n + ar && i && i + 10 <= len; j++)
    {
      i = skip_name (r, len, i);
      if (i == 0 || i + 10 > len)
        break;
      unsigned type = be16 (r + i), rdlen = be16 (r + i + 8);
      size_t rd = i + 10;
      if (rd + rdlen > len)
        break;
      if (j < an && type == 1 && rdlen == 4)
        {
          char a[INET_ADDRSTRLEN];
          if (first->s_addr == 0)
            memcpy (&first->s_addr, r + rd, 4);
          inet_ntop (AF_INET, r + rd, a, sizeof (a));
          w += snprintf (out + w, outlen - (size_t) w, " a=%s", a);
        }
      if (type == 41) /* OPT: options; EDE is option 15 */
        for (size_t o = rd; o + 4 <= rd + rdlen;)
          {
            unsigned code = be16 (r + o), olen = be16 (r + o + 2);
            if (o + 4 + olen > rd + rdlen)
              break;
            if (code == 15 && olen >= 2)
              w += snprintf (out + w, outlen - (size_t) w, " ede=%u %.*s", be16 (r + o + 4),
                             (int) olen - 2, (const char *) r + o + 6);
            o += 4 + olen;
          }
      i = rd + rdlen;
      if ((size_t) w >= outlen)
        break;
    }
  return (int) rcode;
}

static void
probe_dns (const char *arg)
{
  char out[1024];
  struct in_addr a;
  dns_ask (arg + 4, out, sizeof (out), &a);
  printf ("%s: %s\n", arg, out);
}

static void
probe_connect (const char *arg)
{
  char host[300], out[1024] = "";
  const char *colon = strrchr (arg + 8, ':');
  struct timespec t0;
  clock_gettime (CLOCK_MONOTONIC, &t0);
  if (colon == NULL || (size_t) (colon - (arg + 8)) >= sizeof (host))
    {
      printf ("%s: error:usage connect:HOST:PORT\n", arg);
      return;
    }
  memcpy (host, arg + 8, (size_t) (colon - (arg + 8)));
  host[colon - (arg + 8)] = '\0';
  struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons ((uint16_t) atoi (colon + 1)) };
  if (inet_pton (AF_INET, host, &sa.sin_addr) != 1)
    {
      int rc = dns_ask (host, out, sizeof (out), &sa.sin_addr);
      if (rc != 0 || sa.sin_addr.s_addr == 0)
        {
          /* the rcode's name, or timeout/error:... when no answer came */
          out[strcspn (out, " ")] = '\0';
          printf ("%s: %s%s %ldms\n", arg, rc >= 0 ? "dns-" : "", rc == 0 ? "no-address" : out, ms_since (&t0));
          return;
        }
    }
  int fd = socket (AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  const char *r = "connected";
  if (fd < 0)
    r = strerror (errno);
  else if (connect (fd, (struct sockaddr *) &sa, sizeof (sa)) < 0 && errno != EINPROGRESS)
    r = errno == ECONNREFUSED ? "refused" : errno == EHOSTUNREACH || errno == ENETUNREACH ? "unreachable"
                                                                                            : strerror (errno);
  else
    {
      struct pollfd p = { .fd = fd, .events = POLLOUT };
      int e = 0;
      socklen_t el = sizeof (e);
      if (poll (&p, 1, 3000) <= 0)
        r = "timeout";
      else if (getsockopt (fd, SOL_SOCKET, SO_ERROR, &e, &el) == 0 && e != 0)
        r = e == ECONNREFUSED ? "refused" : e == EHOSTUNREACH || e == ENETUNREACH ? "unreachable" : strerror (e);
    }
  if (fd >= 0)
    close (fd);
  printf ("%s: %s %ldms\n", arg, r, ms_since (&t0));
}

static long
attempt (const char *name)
{
  if (strcmp (name, "ptrace") == 0)
    return ptrace (PTRACE_TRACEME, 0, 0, 0);
  if (strcmp (name, "io_uring") == 0)
    {
      unsigned char params[120] = { 0 };
      long fd = syscall (__NR_io_uring_setup, 1, params);
      if (fd >= 0)
        close ((int) fd);
      return fd < 0 ? -1 : 0;
    }
  if (strcmp (name, "tiocsti") == 0)
    {
      char c = 'x';
      return ioctl (0, TIOCSTI, &c);
    }
  if (strcmp (name, "setuid-file") == 0)
    {
      int fd = open ("/tmp/.probe-setuid", O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0755);
      if (fd < 0)
        return -1;
      close (fd);
      return chmod ("/tmp/.probe-setuid", 04755);
    }
  if (strcmp (name, "write-workspace") == 0)
    {
      int fd = open ("/workspace/.probe-write", O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
      if (fd < 0)
        return -1;
      close (fd);
      return unlink ("/workspace/.probe-write");
    }
  if (strcmp (name, "sleep") == 0)
    return sleep (3600) ? -1 : 0; /* a long-running program that is no shell */
  if (strcmp (name, "userns") == 0)
    return unshare (CLONE_NEWUSER);
  /* Sockets that would get past an egress table: packet sockets see and
   * send whole frames, a raw socket any IP packet. */
  if (strcmp (name, "packet") == 0 || strcmp (name, "sock-packet") == 0 || strcmp (name, "raw") == 0)
    {
      int fd = strcmp (name, "packet") == 0        ? socket (AF_PACKET, SOCK_RAW, htons (ETH_P_ALL))
               : strcmp (name, "sock-packet") == 0 ? socket (AF_INET, SOCK_PACKET, htons (ETH_P_ALL))
                                                   : socket (AF_INET, SOCK_RAW, IPPROTO_ICMP);
      if (fd >= 0)
        close (fd);
      return fd < 0 ? -1 : 0;
    }
  if (strcmp (name, "nft-list") == 0)
    return nft_list ();
  if (strcmp (name, "nft-delete") == 0)
    return nft_delete ();
  errno = EINVAL;
  return -1;
}

int
main (int argc, char **argv)
{
  for (int i = 1; i < argc; i++)
    {
      if (strncmp (argv[i], "dns:", 4) == 0)
        {
          probe_dns (argv[i]);
          continue;
        }
      if (strncmp (argv[i], "connect:", 8) == 0)
        {
          probe_connect (argv[i]);
          continue;
        }
      errno = 0;
      long r = attempt (argv[i]);
      printf ("%s: %s\n", argv[i], r < 0 ? strerror (errno) : "ok");
    }
  return 0;
}
