/* Test helper: the egress denials listener (runtime/egress/egress_denials.c)
 * writing its records (runtime/egress/egress_audit.c) as the monitor's trail
 * would, to stdout.
 *
 *   egress_denials_tool [--netns PATH] [--rate N] [--name ADDR=NAME]...
 *                       [--refused NAME:TYPE:WHY]... GROUP SECONDS
 *
 * Listens on NFLOG GROUP in the network namespace at PATH (default: its
 * own) for SECONDS, printing one JSON line per record; "listening" on
 * stderr once bound, and at the end "malformed N lost N".  --name gives
 * the names the records say pointed at ADDR (the resolver's part);
 * --refused hands in resolver refusals once listening. */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <time.h>
#include <unistd.h>

#include "egress_audit.h"
#include "egress_denials.h"

#define MAX_NAMES 16

struct name_entry
{
  int family;
  uint8_t addr[16];
  const char *name;
};

struct tool
{
  struct hv_audit_trail trail;
  struct name_entry names[MAX_NAMES];
  size_t n_names;
};

static int
usage (void)
{
  fprintf (stderr, "usage: egress_denials_tool [--netns PATH] [--rate N] [--name ADDR=NAME]... "
                   "[--refused NAME:TYPE:WHY]... GROUP SECONDS\n");
  return 2;
}

static size_t
names_for (void *data, int family, const uint8_t addr[16], const char **names, size_t max)
{
  struct tool *t = data;
  size_t n = 0;
  for (size_t i = 0; i < t->n_names && n < max; i++)
    if (t->names[i].family == family
        && memcmp (t->names[i].addr, addr, family == AF_INET ? 4 : 16) == 0)
      names[n++] = t->names[i].name;
  return n;
}

static void
on_denied (void *data, const hv_egress_denial *d)
{
  struct tool *t = data;
  hv_egress_audit_denied (&t->trail, d, names_for, t);
}

static void
on_refused (void *data, const char *qname, uint16_t qtype, const char *why)
{
  struct tool *t = data;
  hv_egress_audit_refused (&t->trail, qname, qtype, why);
}

static void
on_suppressed (void *data, const hv_denial_summary *s)
{
  struct tool *t = data;
  hv_egress_audit_suppressed (&t->trail, s);
}

static long
ms_left (const struct timespec *end)
{
  struct timespec now;
  clock_gettime (CLOCK_MONOTONIC, &now);
  return (end->tv_sec - now.tv_sec) * 1000L + (end->tv_nsec - now.tv_nsec) / 1000000;
}

int
main (int argc, char **argv)
{
  static struct tool t;
  const char *netns = NULL;
  unsigned rate = 0;
  const char *refused[MAX_NAMES];
  size_t n_refused = 0;
  int i = 1;
  for (; i < argc && strncmp (argv[i], "--", 2) == 0; i++)
    {
      if (strcmp (argv[i], "--netns") == 0 && i + 1 < argc)
        netns = argv[++i];
      else if (strcmp (argv[i], "--rate") == 0 && i + 1 < argc)
        rate = (unsigned) strtoul (argv[++i], NULL, 10);
      else if (strcmp (argv[i], "--name") == 0 && i + 1 < argc && t.n_names < MAX_NAMES)
        {
          char *spec = argv[++i], *eq = strchr (spec, '=');
          if (eq == NULL)
            return usage ();
          *eq = '\0';
          struct name_entry *e = &t.names[t.n_names++];
          e->family = strchr (spec, ':') ? AF_INET6 : AF_INET;
          if (inet_pton (e->family, spec, e->addr) != 1)
            return usage ();
          e->name = eq + 1;
        }
      else if (strcmp (argv[i], "--refused") == 0 && i + 1 < argc && n_refused < MAX_NAMES)
        refused[n_refused++] = argv[++i];
      else
        return usage ();
    }
  if (argc - i != 2)
    return usage ();
  uint16_t group = (uint16_t) strtoul (argv[i], NULL, 10);
  long seconds = strtol (argv[i + 1], NULL, 10);

  int netns_fd = -1;
  if (netns)
    {
      netns_fd = open (netns, O_RDONLY | O_CLOEXEC);
      if (netns_fd < 0)
        {
          fprintf (stderr, "egress_denials_tool: open %s: %s\n", netns, strerror (errno));
          return 1;
        }
    }
  hv_audit_trail_init (&t.trail, STDOUT_FILENO, "test", NULL);
  hv_egress_denials_events ev = { .denied = on_denied, .refused = on_refused, .suppressed = on_suppressed, .capped = NULL, .data = &t };
  hv_egress_denials *d;
  hv_error *err = NULL;
  if (hv_egress_denials_open (netns_fd, group, rate, &ev, &d, &err) < 0)
    {
      fprintf (stderr, "egress_denials_tool: %s\n", err->msg);
      hv_error_free (&err);
      return 1;
    }
  if (netns_fd >= 0)
    close (netns_fd);
  /* The listener's socket is in the sandbox's namespace, this process
   * is back in its own (the test checks). */
  char self[64] = "";
  ssize_t n = readlink ("/proc/thread-self/ns/net", self, sizeof (self) - 1);
  self[n > 0 ? n : 0] = '\0';
  fprintf (stderr, "listening in %s\n", self);
  for (size_t k = 0; k < n_refused; k++)
    {
      char *spec = strdup (refused[k]), *c1 = strchr (spec, ':'), *c2 = c1 ? strchr (c1 + 1, ':') : NULL;
      if (c2 == NULL)
        return usage ();
      *c1 = *c2 = '\0';
      hv_egress_denials_refused (d, spec, (uint16_t) strtoul (c1 + 1, NULL, 10), c2 + 1);
      free (spec);
    }

  int ep = epoll_create1 (EPOLL_CLOEXEC);
  struct epoll_event e = { .events = EPOLLIN };
  epoll_ctl (ep, EPOLL_CTL_ADD, hv_egress_denials_fd (d), &e);
  struct timespec end;
  clock_gettime (CLOCK_MONOTONIC, &end);
  end.tv_sec += seconds;
  int rc = 0;
  long left;
  while ((left = ms_left (&end)) > 0)
    {
      if (epoll_wait (ep, &e, 1, (int) left) <= 0)
        continue;
      if (hv_egress_denials_dispatch (d, &err) < 0)
        {
          fprintf (stderr, "egress_denials_tool: %s\n", err->msg);
          hv_error_free (&err);
          rc = 1;
          break;
        }
    }
  hv_egress_denials_finish (d);
  fprintf (stderr, "malformed %llu lost %llu\n", (unsigned long long) hv_egress_denials_malformed (d),
           (unsigned long long) hv_egress_denials_lost (d));
  hv_egress_denials_free (d);
  hv_audit_trail_release (&t.trail);
  close (ep);
  return rc;
}
