/* A certificate authority made for a test run, and TLS servers on the
 * loopback that present its certificates, for unit tests of the gateway's
 * TLS side: openssl(1) writes everything into a temporary directory, and
 * no outside network is used.  Include after config.h, cmocka.h and
 * openssl/ssl.h; the test links utils.c (xvasprintf). */
#ifndef HAVEN_TESTS_TEST_CA_H
#define HAVEN_TESTS_TEST_CA_H

#include <netinet/in.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "unit_skip.h"
#include "utils.h"

/* system() on a formatted command line: its status. */
__attribute__ ((format (printf, 1, 2))) static inline int
test_ca_sh (const char *fmt, ...)
{
  va_list ap;
  va_start (ap, fmt);
  cleanup_free char *cmd = xvasprintf (fmt, ap);
  va_end (ap);
  return system (cmd);
}

/* A new directory /tmp/haven-TAG-XXXXXX (*dir) with the CA (ca.pem,
 * ca.key) and, for each leaf NAME, NAME.pem and NAME.key for the DNS name
 * sans[i]: 0; 0 with *dir NULL when openssl(1) is missing (the tests then
 * skip, need_test_ca); -1 when it fails. */
static inline int
test_ca_make (const char *tag, const char *const *leaves, const char *const *sans, size_t n, char **dir)
{
  *dir = NULL;
  if (test_ca_sh ("openssl version > /dev/null 2>&1") != 0)
    return 0;
  char tmpl[128];
  snprintf (tmpl, sizeof (tmpl), "/tmp/haven-%s-XXXXXX", tag);
  if (!mkdtemp (tmpl))
    return -1;
  *dir = xstrdup (tmpl);
  /* A config of our own, so that the system's openssl.cnf adds nothing. */
  if (test_ca_sh ("cd %s && printf '%%s\\n' '[req]' 'distinguished_name = dn' '[dn]' '[ca]' "
                  "'basicConstraints = critical,CA:TRUE' 'keyUsage = critical,keyCertSign' > openssl.cnf",
                  *dir)
      != 0)
    return -1;
  for (size_t i = 0; i < n; i++)
    if (test_ca_sh ("cd %s && printf '%%s\\n' '[leaf_%s]' 'subjectAltName = DNS:%s' >> openssl.cnf", *dir, leaves[i],
                    sans[i])
        != 0)
      return -1;
  const char *key = "-newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes";
  if (test_ca_sh ("cd %s && openssl req -config openssl.cnf -x509 %s -keyout ca.key -out ca.pem -days 2 "
                  "-subj /CN=haven-test-ca -extensions ca 2>/dev/null",
                  *dir, key)
      != 0)
    return -1;
  for (size_t i = 0; i < n; i++)
    if (test_ca_sh ("cd %s && openssl req -config openssl.cnf -new %s -keyout %s.key -out %s.csr -subj /CN=%s "
                    "2>/dev/null && openssl x509 -req -in %s.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 2 "
                    "-extfile openssl.cnf -extensions leaf_%s -out %s.pem 2>/dev/null",
                    *dir, key, leaves[i], leaves[i], leaves[i], leaves[i], leaves[i], leaves[i])
        != 0)
      return -1;
  return 0;
}

static inline void
test_ca_remove (char **dir)
{
  if (*dir)
    test_ca_sh ("rm -rf %s", *dir);
  free (*dir);
  *dir = NULL;
}

static inline void
need_test_ca (const char *dir)
{
  if (!dir)
    SKIP_BECAUSE ("openssl(1) is not installed: no test CA can be made");
}

/* A server's TLS context presenting LEAF's certificate from dir; in a
 * server child, which exits 2 when it cannot be made. */
static inline SSL_CTX *
test_ca_server_ctx (const char *dir, const char *leaf)
{
  SSL_CTX *c = SSL_CTX_new (TLS_server_method ());
  char cert[512], key[512];
  snprintf (cert, sizeof (cert), "%s/%s.pem", dir, leaf);
  snprintf (key, sizeof (key), "%s/%s.key", dir, leaf);
  if (!c || SSL_CTX_use_certificate_file (c, cert, SSL_FILETYPE_PEM) != 1
      || SSL_CTX_use_PrivateKey_file (c, key, SSL_FILETYPE_PEM) != 1)
    _exit (2);
  return c;
}

/* One connection accepted on lfd, its TLS handshake done with c, in a
 * server child (which exits 2 or 3 when either fails); *fd its socket. */
static inline SSL *
test_ca_accept (int lfd, SSL_CTX *c, int *fd)
{
  *fd = accept (lfd, NULL, NULL);
  if (*fd < 0)
    _exit (2);
  SSL *ssl = SSL_new (c);
  SSL_set_fd (ssl, *fd);
  if (SSL_accept (ssl) != 1)
    _exit (3);
  return ssl;
}

/* A listening TCP socket on 127.0.0.1 at a port the kernel chose (*port). */
static inline int
test_ca_listen (uint16_t *port)
{
  int lfd = socket (AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  assert_true (lfd >= 0);
  struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr.s_addr = htonl (INADDR_LOOPBACK) };
  socklen_t len = sizeof (sa);
  assert_int_equal (bind (lfd, (struct sockaddr *) &sa, len), 0);
  assert_int_equal (listen (lfd, 4), 0);
  assert_int_equal (getsockname (lfd, (struct sockaddr *) &sa, &len), 0);
  *port = ntohs (sa.sin_port);
  return lfd;
}

/* fork() for a server child: 0 in the child, which never outlives the
 * test (an alarm may end it) nor runs past 2 * alarm_s; the child's pid in
 * the test, whose own alarm is then set to alarm_s (a test that hangs
 * instead of failing is killed, and so fails). */
static inline pid_t
test_ca_fork_server (unsigned alarm_s)
{
  pid_t test_pid = getpid ();
  pid_t pid = fork ();
  assert_true (pid >= 0);
  if (pid == 0)
    {
      if (prctl (PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid () != test_pid)
        _exit (1);
      alarm (2 * alarm_s);
      return 0;
    }
  alarm (alarm_s);
  return pid;
}
#endif
