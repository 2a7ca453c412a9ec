/* Unit tests of the restricted ssh-agent view (runtime/guard/
 * ssh_agent_msg.c, ssh_agent_view.c): fingerprints and public key files,
 * the two messages it looks into, and the view served on a socket in
 * front of a real ssh-agent holding two keys, driven by OpenSSH's own
 * ssh-add and ssh-keygen and by messages written by hand. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "ssh_agent_view.h"
#include "tmp_tree.h"
#include "unit_skip.h"
#include "unix_socket.h"
#include "utils.h"

/* ssh-keygen -t ed25519's public key file of a fixed key, and what
 * ssh-keygen -l prints for it. */
static const char ed_pub[] = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIDe71/dvUgdhlzwWsB0Onp09oAfgEqHVGNUsfengr+BH t@h\n";
static const char ed_fp[] = "SHA256:TL0x2eDPUnTgzcrOr98O+URbPnPWFK3NbgdSEynspLQ";

static void
test_fingerprint (void **state)
{
  (void) state;
  hv_ssh_fingerprint fp;
  hv_error *err = NULL;
  if (hv_ssh_pubkey_fingerprint (ed_pub, strlen (ed_pub), fp, &err) < 0)
    fail_msg ("refused: %s", err->msg);
  assert_string_equal (fp, ed_fp);
  assert_true (hv_ssh_fingerprint_valid (fp));
  /* Without the comment, the newline, with tabs: the same key. */
  const char bare[] = "ssh-ed25519\tAAAAC3NzaC1lZDI1NTE5AAAAIDe71/dvUgdhlzwWsB0Onp09oAfgEqHVGNUsfengr+BH";
  assert_int_equal (hv_ssh_pubkey_fingerprint (bare, strlen (bare), fp, &err), 0);
  assert_string_equal (fp, ed_fp);

  static const char *const bad[] = {
    "",
    "ssh-ed25519",
    /* two keys */
    "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIDe71/dvUgdhlzwWsB0Onp09oAfgEqHVGNUsfengr+BH\nssh-ed25519 AAAA\n",
    /* the line's type is not the blob's */
    "ssh-rsa AAAAC3NzaC1lZDI1NTE5AAAAIDe71/dvUgdhlzwWsB0Onp09oAfgEqHVGNUsfengr+BH",
    /* options first, as in authorized_keys */
    "restrict ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIDe71/dvUgdhlzwWsB0Onp09oAfgEqHVGNUsfengr+BH",
    /* not base64: a digit out of the alphabet, a length not a multiple of 4 */
    "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIDe71/dvUgdhlzwWsB0Onp09oAfgEqHVGNUsfengr+B*",
    "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIDe71/dvUgdhlzwWsB0Onp09oAfgEqHVGNUsfengr+B",
    /* a blob shorter than the type's length says */
    "ssh-ed25519 AAAAAQ==",
  };
  for (size_t i = 0; i < N_ELEMENTS (bad); i++)
    {
      if (hv_ssh_pubkey_fingerprint (bad[i], strlen (bad[i]), fp, &err) == 0)
        fail_msg ("taken: %s", bad[i]);
      hv_error_free (&err);
    }

  assert_false (hv_ssh_fingerprint_valid ("SHA256:pmUy8fLgiK3PlRw8RVeobtRNH8Cr/wxC2Tn4cltTrS"));
  assert_false (hv_ssh_fingerprint_valid ("SHA256:TL0x2eDPUnTgzcrOr98O+URbPnPWFK3NbgdSEynspLQA"));
  assert_false (hv_ssh_fingerprint_valid ("sha256:pmUy8fLgiK3PlRw8RVeobtRNH8Cr/wxC2Tn4cltTrSM"));
  assert_false (hv_ssh_fingerprint_valid ("MD5:pmUy8fLgiK3PlRw8RVeobtRNH8Cr/wxC2Tn4cltTrSMAAA"));
  assert_false (hv_ssh_fingerprint_valid ("SHA256:pmUy8fLgiK3PlRw8RVeobtRNH8Cr/wxC2Tn4clt-rSM"));
  /* 'R' leaves padding bits set: no digest is spelled so. */
  assert_false (hv_ssh_fingerprint_valid ("SHA256:TL0x2eDPUnTgzcrOr98O+URbPnPWFK3NbgdSEynspLR"));
}

/* Wire helpers for messages written by hand. */
struct wbuf
{
  unsigned char b[1024];
  size_t n;
};

static void
w_u32 (struct wbuf *w, uint32_t v)
{
  w->b[w->n++] = (unsigned char) (v >> 24);
  w->b[w->n++] = (unsigned char) (v >> 16);
  w->b[w->n++] = (unsigned char) (v >> 8);
  w->b[w->n++] = (unsigned char) v;
}

static void
w_str (struct wbuf *w, const void *s, size_t len)
{
  w_u32 (w, (uint32_t) len);
  memcpy (w->b + w->n, s, len);
  w->n += len;
}

static void
test_messages (void **state)
{
  (void) state;
  const unsigned char *blob;
  size_t blob_len;
  struct wbuf m = { .n = 0 };
  m.b[m.n++] = HV_SSH_AGENTC_SIGN_REQUEST;
  w_str (&m, "KEY", 3);
  w_str (&m, "data", 4);
  w_u32 (&m, 0);
  assert_int_equal (hv_ssh_agent_sign_key (m.b, m.n, &blob, &blob_len), 0);
  assert_int_equal (blob_len, 3);
  assert_memory_equal (blob, "KEY", 3);
  /* A byte more, the flags cut, another message type: malformed. */
  assert_int_equal (hv_ssh_agent_sign_key (m.b, m.n + 1, &blob, &blob_len), -1);
  assert_int_equal (hv_ssh_agent_sign_key (m.b, m.n - 1, &blob, &blob_len), -1);
  m.b[0] = HV_SSH_AGENTC_REQUEST_IDENTITIES;
  assert_int_equal (hv_ssh_agent_sign_key (m.b, m.n, &blob, &blob_len), -1);
  /* A key blob longer than the message. */
  struct wbuf l = { .n = 0 };
  l.b[l.n++] = HV_SSH_AGENTC_SIGN_REQUEST;
  w_u32 (&l, 0xffffffff);
  assert_int_equal (hv_ssh_agent_sign_key (l.b, l.n, &blob, &blob_len), -1);

  /* An answer with three keys, the second allowed. */
  hv_ssh_fingerprint fp_b;
  hv_ssh_key_fingerprint ((const unsigned char *) "B", 1, fp_b);
  struct wbuf a = { .n = 0 };
  a.b[a.n++] = HV_SSH_AGENT_IDENTITIES_ANSWER;
  w_u32 (&a, 3);
  w_str (&a, "A", 1);
  w_str (&a, "comment a", 9);
  w_str (&a, "B", 1);
  w_str (&a, "comment b", 9);
  w_str (&a, "C", 1);
  w_str (&a, "", 0);
  unsigned char *out = NULL;
  size_t out_len;
  assert_int_equal (hv_ssh_agent_filter_identities (a.b, a.n, &fp_b, 1, &out, &out_len), 0);
  struct wbuf want = { .n = 0 };
  want.b[want.n++] = HV_SSH_AGENT_IDENTITIES_ANSWER;
  w_u32 (&want, 1);
  w_str (&want, "B", 1);
  w_str (&want, "comment b", 9);
  assert_int_equal (out_len, want.n);
  assert_memory_equal (out, want.b, want.n);
  free (out);
  /* None allowed: an empty list. */
  assert_int_equal (hv_ssh_agent_filter_identities (a.b, a.n, NULL, 0, &out, &out_len), 0);
  assert_int_equal (out_len, 5);
  assert_int_equal (out[4], 0);
  free (out);
  /* A count larger than the identities sent, bytes after them, a cut
   * comment, another type: malformed. */
  a.b[4] = 4;
  assert_int_equal (hv_ssh_agent_filter_identities (a.b, a.n, &fp_b, 1, &out, &out_len), -1);
  a.b[4] = 2;
  assert_int_equal (hv_ssh_agent_filter_identities (a.b, a.n, &fp_b, 1, &out, &out_len), -1);
  a.b[4] = 3;
  assert_int_equal (hv_ssh_agent_filter_identities (a.b, a.n - 1, &fp_b, 1, &out, &out_len), -1);
  a.b[0] = HV_SSH_AGENT_FAILURE;
  assert_int_equal (hv_ssh_agent_filter_identities (a.b, a.n, &fp_b, 1, &out, &out_len), -1);
}

/* The fixture: a real ssh-agent with two keys (their private files
 * deleted, so only the agent can sign), and the view served on a socket
 * of its own by a thread, allowing key "a". */
struct fixture
{
  char *dir;
  char agent_sock[PATH_MAX];
  char view_sock[PATH_MAX];
  pid_t agent_pid;
  hv_ssh_fingerprint fp_a, fp_b;
  hv_ssh_agent_view view;
  int listen_fd;
  pthread_t thread;
  pthread_mutex_t lock;
  char signs[8][HV_SSH_FINGERPRINT_LEN + 8];
  size_t n_signs;
  int serve_results[32];
  size_t n_served;
};

static void
on_sign (const char *fp, bool allowed, void *data)
{
  struct fixture *f = data;
  pthread_mutex_lock (&f->lock);
  if (f->n_signs < N_ELEMENTS (f->signs))
    snprintf (f->signs[f->n_signs++], sizeof f->signs[0], "%s %d", fp, allowed);
  pthread_mutex_unlock (&f->lock);
}

static void *
serve_thread (void *arg)
{
  struct fixture *f = arg;
  for (;;)
    {
      int conn = accept4 (f->listen_fd, NULL, NULL, SOCK_CLOEXEC);
      if (conn < 0)
        return NULL; /* the listener was shut down */
      hv_error *err = NULL;
      int r = hv_ssh_agent_view_serve (conn, &f->view, &err);
      hv_error_free (&err);
      close (conn);
      pthread_mutex_lock (&f->lock);
      if (f->n_served < N_ELEMENTS (f->serve_results))
        f->serve_results[f->n_served++] = r;
      pthread_mutex_unlock (&f->lock);
    }
}

/* Run a shell command in f->dir; its exit status. */
static int
sh (struct fixture *f, const char *fmt, ...)
{
  va_list ap;
  va_start (ap, fmt);
  char *cmd = xvasprintf (fmt, ap);
  va_end (ap);
  char *full = xasprintf ("cd '%s' && %s", f->dir, cmd);
  int st = system (full);
  free (full);
  free (cmd);
  return WIFEXITED (st) ? WEXITSTATUS (st) : 128;
}

static bool
on_path (const char *prog)
{
  char *cmd = xasprintf ("command -v %s >/dev/null 2>&1", prog);
  int st = system (cmd);
  free (cmd);
  return st == 0;
}

static int
setup_agent (void **state)
{
  struct fixture *f = calloc (1, sizeof *f);
  *state = f;
  f->listen_fd = -1;
  if (!on_path ("ssh-agent") || !on_path ("ssh-add") || !on_path ("ssh-keygen"))
    return 0;
  f->dir = tree_make ("sshview");
  snprintf (f->agent_sock, sizeof f->agent_sock, "%s/agent.sock", f->dir);
  snprintf (f->view_sock, sizeof f->view_sock, "%s/view.sock", f->dir);
  /* Key a is added with ssh-add -c: the agent asks this program before
   * each use (no display needed with SSH_ASKPASS_REQUIRE=force); it notes
   * each question in "asked" and says no when "refuse" exists. */
  tree_put (f->dir, "ask", "#!/bin/sh\necho asked >> \"${0%/*}/asked\"\n! test -e \"${0%/*}/refuse\"\n");
  char ask[PATH_MAX];
  snprintf (ask, sizeof ask, "%s/ask", f->dir);
  chmod (ask, 0700);
  f->agent_pid = fork ();
  if (f->agent_pid == 0)
    {
      int null = open ("/dev/null", O_WRONLY);
      dup2 (null, 1); /* it prints the shell lines that name its socket */
      setenv ("SSH_ASKPASS", ask, 1);
      setenv ("SSH_ASKPASS_REQUIRE", "force", 1);
      setenv ("DISPLAY", ":0", 1);
      execlp ("ssh-agent", "ssh-agent", "-D", "-a", f->agent_sock, (char *) NULL);
      _exit (127);
    }
  struct stat st;
  for (int i = 0; i < 500 && stat (f->agent_sock, &st) < 0; i++)
    nanosleep (&(struct timespec){ 0, 10000000 }, NULL);
  if (stat (f->agent_sock, &st) < 0)
    fail_msg ("ssh-agent made no socket at %s", f->agent_sock);
  if (sh (f, "ssh-keygen -q -t ed25519 -N '' -C key-a -f a && ssh-keygen -q -t ed25519 -N '' -C key-b -f b"
             " && ssh-keygen -q -t ed25519 -N '' -C key-c -f c"
             /* a certificate of key a, which ssh-add adds with it */
             " && ssh-keygen -q -t ed25519 -N '' -C ca -f ca && ssh-keygen -q -s ca -I a-cert -n u a.pub"
             " && SSH_AUTH_SOCK=agent.sock ssh-add -q -c a 2>/dev/null && SSH_AUTH_SOCK=agent.sock ssh-add -q b"
             " 2>/dev/null && rm a b")
      != 0)
    fail_msg ("making and adding the keys failed");
  char *pa = tree_read (f->dir, "a.pub"), *pb = tree_read (f->dir, "b.pub");
  hv_error *err = NULL;
  assert_int_equal (hv_ssh_pubkey_fingerprint (pa, strlen (pa), f->fp_a, &err), 0);
  assert_int_equal (hv_ssh_pubkey_fingerprint (pb, strlen (pb), f->fp_b, &err), 0);
  free (pa);
  free (pb);
  pthread_mutex_init (&f->lock, NULL);
  f->view = (hv_ssh_agent_view){
    .upstream = f->agent_sock,
    .allowed = &f->fp_a,
    .n_allowed = 1,
    .idle_timeout_ms = 2000,
    .upstream_timeout_ms = 5000,
    .on_sign = on_sign,
    .data = f,
  };
  f->listen_fd = hv_unix_listen (f->view_sock, 8, &err);
  if (f->listen_fd < 0)
    fail_msg ("%s", err->msg);
  assert_int_equal (pthread_create (&f->thread, NULL, serve_thread, f), 0);
  return 0;
}

static int
teardown_agent (void **state)
{
  struct fixture *f = *state;
  if (f->listen_fd >= 0)
    {
      shutdown (f->listen_fd, SHUT_RDWR);
      pthread_join (f->thread, NULL);
      close (f->listen_fd);
    }
  if (f->agent_pid > 0)
    {
      kill (f->agent_pid, SIGTERM);
      waitpid (f->agent_pid, NULL, 0);
    }
  if (f->dir)
    tree_remove (f->dir);
  free (f);
  return 0;
}

#define NEED_AGENT(f)                                                                                             \
  do                                                                                                              \
    if ((f)->dir == NULL)                                                                                         \
      SKIP_BECAUSE ("no ssh-agent, ssh-add or ssh-keygen on PATH (openssh-client)");                              \
  while (0)

static void
test_openssh_through_view (void **state)
{
  struct fixture *f = *state;
  NEED_AGENT (f);
  /* The real agent holds both keys; the view shows one. */
  assert_int_equal (sh (f, "SSH_AUTH_SOCK=agent.sock ssh-add -l > real.txt"), 0);
  char *real = tree_read (f->dir, "real.txt");
  assert_non_null (strstr (real, f->fp_a));
  assert_non_null (strstr (real, f->fp_b));
  free (real);
  assert_int_equal (sh (f, "SSH_AUTH_SOCK=view.sock ssh-add -l > view.txt"), 0);
  char *seen = tree_read (f->dir, "view.txt");
  assert_non_null (strstr (seen, f->fp_a));
  assert_null (strstr (seen, f->fp_b));
  assert_non_null (strstr (seen, "key-a"));
  /* One line: key a's certificate, in the agent too, is not its key. */
  assert_int_equal (sh (f, "test \"$(wc -l < view.txt)\" = 1 && grep -c CERT real.txt >/dev/null"), 0);
  free (seen);

  /* Signing with the listed key works, and the signature verifies. */
  assert_int_equal (sh (f, "echo data > msg && SSH_AUTH_SOCK=view.sock ssh-keygen -q -Y sign -f a.pub -n file msg"
                           " 2>/dev/null && ssh-keygen -q -Y check-novalidate -n file -s msg.sig < msg >/dev/null"),
                    0);
  /* The agent asked on the host (key a was added with ssh-add -c) ... */
  assert_int_equal (sh (f, "test \"$(wc -l < asked)\" = 1"), 0);
  /* ... and when the answer is no, the signature is refused. */
  assert_int_equal (sh (f, "rm msg.sig && touch refuse && SSH_AUTH_SOCK=view.sock ssh-keygen -q -Y sign -f a.pub -n file msg"
                           " 2>/dev/null"),
                    255);
  assert_int_equal (sh (f, "rm refuse && test \"$(wc -l < asked)\" = 2"), 0);
  /* With the other key (which the real agent holds) it is refused. */
  assert_int_not_equal (sh (f, "SSH_AUTH_SOCK=view.sock ssh-keygen -q -Y sign -f b.pub -n file msg 2>/dev/null"), 0);
  assert_int_equal (sh (f, "test ! -e msg.sig || rm msg.sig; SSH_AUTH_SOCK=agent.sock ssh-keygen -q -Y sign"
                           " -f b.pub -n file msg 2>/dev/null"),
                    0);

  /* Adding, removing all keys, removing one: refused, and the real agent
   * still holds both. */
  assert_int_not_equal (sh (f, "SSH_AUTH_SOCK=view.sock ssh-add -q c 2>/dev/null"), 0);
  assert_int_not_equal (sh (f, "SSH_AUTH_SOCK=view.sock ssh-add -q -D 2>/dev/null"), 0);
  assert_int_not_equal (sh (f, "SSH_AUTH_SOCK=view.sock ssh-add -q -d a.pub 2>/dev/null"), 0);
  assert_int_equal (sh (f, "test \"$(SSH_AUTH_SOCK=agent.sock ssh-add -l | wc -l)\" = 3"), 0);

  /* ssh-keygen asked twice with a (once refused by the user); for b,
   * which the view does not list, it sent no request at all. */
  pthread_mutex_lock (&f->lock);
  assert_int_equal (f->n_signs, 2);
  char want[HV_SSH_FINGERPRINT_LEN + 8];
  snprintf (want, sizeof want, "%s 1", f->fp_a);
  assert_string_equal (f->signs[0], want);
  pthread_mutex_unlock (&f->lock);
}

/* Key b's blob, as the real agent lists it (the view's own filter picks
 * it out of the real agent's answer). */
static void
blob_of_b (struct fixture *f, unsigned char **blob, size_t *len)
{
  hv_error *err = NULL;
  int fd = hv_unix_connect (f->agent_sock, &err);
  assert_true (fd >= 0);
  unsigned char list[5] = { 0, 0, 0, 1, HV_SSH_AGENTC_REQUEST_IDENTITIES };
  assert_int_equal (write_all (fd, list, 5), 0);
  unsigned char *all = NULL, *only_b = NULL;
  size_t all_len, only_len;
  assert_int_equal (hv_ssh_agent_read_msg (fd, 5000, &all, &all_len, &err), 1);
  close (fd);
  assert_int_equal (hv_ssh_agent_filter_identities (all, all_len, &f->fp_b, 1, &only_b, &only_len), 0);
  assert_int_equal (only_b[4], 1);
  *len = (size_t) only_b[5] << 24 | (size_t) only_b[6] << 16 | (size_t) only_b[7] << 8 | only_b[8];
  *blob = malloc (*len);
  memcpy (*blob, only_b + 9, *len);
  free (all);
  free (only_b);
}

/* A connection to the view, and one exchange on it by hand. */
static int
view_connect (struct fixture *f)
{
  hv_error *err = NULL;
  int fd = hv_unix_connect (f->view_sock, &err);
  if (fd < 0)
    fail_msg ("%s", err->msg);
  return fd;
}

static void
send_framed (int fd, const unsigned char *msg, size_t len)
{
  unsigned char head[4] = { (unsigned char) (len >> 24), (unsigned char) (len >> 16), (unsigned char) (len >> 8),
                            (unsigned char) len };
  assert_int_equal (write_all (fd, head, 4), 0);
  assert_int_equal (write_all (fd, msg, len), 0);
}

/* The type of the answer to msg on fd. */
static int
exchange (int fd, const unsigned char *msg, size_t len)
{
  send_framed (fd, msg, len);
  unsigned char *answer = NULL;
  size_t answer_len;
  hv_error *err = NULL;
  if (hv_ssh_agent_read_msg (fd, 5000, &answer, &answer_len, &err) != 1)
    fail_msg ("no answer: %s", err ? err->msg : "end of stream");
  int type = answer[0];
  free (answer);
  return type;
}

/* Whether the view closed fd (end of stream within two seconds). */
static bool
closed_by_view (int fd)
{
  struct pollfd p = { .fd = fd, .events = POLLIN };
  if (poll (&p, 1, 2000) != 1)
    return false;
  char c;
  return read (fd, &c, 1) == 0;
}

static void
test_refused_locally (void **state)
{
  struct fixture *f = *state;
  NEED_AGENT (f);
  /* The view asks a listener that counts who connects meanwhile. */
  char counter[PATH_MAX];
  snprintf (counter, sizeof counter, "%s/counter.sock", f->dir);
  hv_error *err = NULL;
  int lfd = hv_unix_listen (counter, 8, &err);
  assert_true (lfd >= 0);
  const char *saved = f->view.upstream;
  f->view.upstream = counter;
  int fd = view_connect (f);
  /* lock (22) and unlock (23) with a password, add (17), remove all
   * (19), smartcard add (20), an extension (27, session-bind), an unknown
   * type: each SSH_AGENT_FAILURE without asking the agent, and the
   * connection goes on. */
  static const unsigned char types[] = { 22, 23, 17, 19, 20, 27, 1, 200 };
  for (size_t i = 0; i < N_ELEMENTS (types); i++)
    {
      struct wbuf m = { .n = 0 };
      m.b[m.n++] = types[i];
      w_str (&m, types[i] == 27 ? "session-bind@openssh.com" : "secret", types[i] == 27 ? 24 : 6);
      assert_int_equal (exchange (fd, m.b, m.n), HV_SSH_AGENT_FAILURE);
    }
  struct pollfd p = { .fd = lfd, .events = POLLIN };
  assert_int_equal (poll (&p, 1, 200), 0);
  close (lfd);
  f->view.upstream = saved;
  unsigned char list = HV_SSH_AGENTC_REQUEST_IDENTITIES;
  assert_int_equal (exchange (fd, &list, 1), HV_SSH_AGENT_IDENTITIES_ANSWER);
  close (fd);
  /* The real agent is neither locked nor emptied. */
  assert_int_equal (sh (f, "test \"$(SSH_AUTH_SOCK=agent.sock ssh-add -l | wc -l)\" = 3"), 0);
}

static void
test_denied_sign_never_reaches_agent (void **state)
{
  struct fixture *f = *state;
  NEED_AGENT (f);
  /* Point the view at a listener that counts who connects. */
  char counter[PATH_MAX];
  snprintf (counter, sizeof counter, "%s/counter.sock", f->dir);
  hv_error *err = NULL;
  int lfd = hv_unix_listen (counter, 8, &err);
  assert_true (lfd >= 0);
  const char *saved = f->view.upstream;
  f->view.upstream = counter;

  /* Key b, which the real agent holds, and a blob that is no key. */
  unsigned char *blob_b;
  size_t blob_b_len;
  blob_of_b (f, &blob_b, &blob_b_len);
  int fd = view_connect (f);
  struct wbuf m = { .n = 0 };
  m.b[m.n++] = HV_SSH_AGENTC_SIGN_REQUEST;
  w_str (&m, blob_b, blob_b_len);
  w_str (&m, "data", 4);
  w_u32 (&m, 0);
  assert_int_equal (exchange (fd, m.b, m.n), HV_SSH_AGENT_FAILURE);
  m.n = 0;
  m.b[m.n++] = HV_SSH_AGENTC_SIGN_REQUEST;
  w_str (&m, "not-a-listed-key", 16);
  w_str (&m, "data", 4);
  w_u32 (&m, 0);
  assert_int_equal (exchange (fd, m.b, m.n), HV_SSH_AGENT_FAILURE);
  struct pollfd p = { .fd = lfd, .events = POLLIN };
  assert_int_equal (poll (&p, 1, 200), 0);
  close (fd);
  free (blob_b);
  f->view.upstream = saved;
  close (lfd);
  pthread_mutex_lock (&f->lock);
  assert_int_equal (f->n_signs, 2);
  char want[HV_SSH_FINGERPRINT_LEN + 8];
  snprintf (want, sizeof want, "%s 0", f->fp_b);
  assert_string_equal (f->signs[0], want);
  assert_non_null (strstr (f->signs[1], " 0"));
  pthread_mutex_unlock (&f->lock);
}

static void
test_agent_gone (void **state)
{
  struct fixture *f = *state;
  NEED_AGENT (f);
  const char *saved = f->view.upstream;
  char gone[PATH_MAX];
  snprintf (gone, sizeof gone, "%s/nothing-here.sock", f->dir);
  f->view.upstream = gone;
  int fd = view_connect (f);
  unsigned char list = HV_SSH_AGENTC_REQUEST_IDENTITIES;
  assert_int_equal (exchange (fd, &list, 1), HV_SSH_AGENT_FAILURE);
  close (fd);
  f->view.upstream = saved;
}

/* An agent that stops accepting (its backlog full): the request is
 * answered SSH_AGENT_FAILURE at the deadline, not waited on without end. */
static void
test_agent_backlog_full (void **state)
{
  struct fixture *f = *state;
  NEED_AGENT (f);
  char stuck[PATH_MAX];
  snprintf (stuck, sizeof stuck, "%s/stuck.sock", f->dir);
  int lfd = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  struct sockaddr_un sa = { .sun_family = AF_UNIX };
  strcpy (sa.sun_path, stuck);
  assert_int_equal (bind (lfd, (struct sockaddr *) &sa, sizeof sa), 0);
  assert_int_equal (listen (lfd, 0), 0);
  int filler[8];
  size_t n = 0;
  for (; n < N_ELEMENTS (filler); n++)
    {
      filler[n] = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
      if (connect (filler[n], (struct sockaddr *) &sa, sizeof sa) < 0)
        {
          assert_int_equal (errno, EAGAIN);
          close (filler[n]);
          break;
        }
    }
  const char *saved = f->view.upstream;
  f->view.upstream = stuck;
  f->view.upstream_timeout_ms = 300;
  int fd = view_connect (f);
  unsigned char list = HV_SSH_AGENTC_REQUEST_IDENTITIES;
  assert_int_equal (exchange (fd, &list, 1), HV_SSH_AGENT_FAILURE);
  close (fd);
  f->view.upstream = saved;
  f->view.upstream_timeout_ms = 5000;
  for (size_t i = 0; i < n; i++)
    close (filler[i]);
  close (lfd);
}

static void
test_malformed_closes (void **state)
{
  struct fixture *f = *state;
  NEED_AGENT (f);
  /* Oversized: the length alone ends the connection, before any body. */
  int fd = view_connect (f);
  unsigned char big[4] = { 0, 4, 0, 1 }; /* 256 KiB + 1 */
  assert_int_equal (write_all (fd, big, 4), 0);
  assert_true (closed_by_view (fd));
  close (fd);
  /* Exactly the bound is read (and refused as an unknown message). */
  fd = view_connect (f);
  unsigned char *max = calloc (1, HV_SSH_AGENT_MAX_MSG);
  max[0] = 99;
  send_framed (fd, max, HV_SSH_AGENT_MAX_MSG);
  free (max);
  unsigned char *answer = NULL;
  size_t answer_len;
  hv_error *err = NULL;
  assert_int_equal (hv_ssh_agent_read_msg (fd, 5000, &answer, &answer_len, &err), 1);
  assert_int_equal (answer[0], HV_SSH_AGENT_FAILURE);
  free (answer);
  close (fd);
  /* An empty message. */
  fd = view_connect (f);
  unsigned char zero[4] = { 0, 0, 0, 0 };
  assert_int_equal (write_all (fd, zero, 4), 0);
  assert_true (closed_by_view (fd));
  close (fd);
  /* A sign request whose key runs past its end. */
  fd = view_connect (f);
  struct wbuf m = { .n = 0 };
  m.b[m.n++] = HV_SSH_AGENTC_SIGN_REQUEST;
  w_u32 (&m, 1000);
  send_framed (fd, m.b, m.n);
  assert_true (closed_by_view (fd));
  close (fd);
  /* A request of identities with a body. */
  fd = view_connect (f);
  unsigned char list[2] = { HV_SSH_AGENTC_REQUEST_IDENTITIES, 0 };
  send_framed (fd, list, 2);
  assert_true (closed_by_view (fd));
  close (fd);
  /* A message cut short, then silence: closed at the idle deadline. */
  fd = view_connect (f);
  unsigned char cut[6] = { 0, 0, 0, 9, 11, 0 };
  assert_int_equal (write_all (fd, cut, 6), 0);
  struct pollfd p = { .fd = fd, .events = POLLIN };
  assert_int_equal (poll (&p, 1, 4000), 1);
  char c;
  assert_int_equal (read (fd, &c, 1), 0);
  close (fd);
  /* No sign request was told for any of these. */
  pthread_mutex_lock (&f->lock);
  assert_int_equal (f->n_signs, 0);
  pthread_mutex_unlock (&f->lock);
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_fingerprint),
    cmocka_unit_test (test_messages),
    cmocka_unit_test_setup_teardown (test_openssh_through_view, setup_agent, teardown_agent),
    cmocka_unit_test_setup_teardown (test_refused_locally, setup_agent, teardown_agent),
    cmocka_unit_test_setup_teardown (test_denied_sign_never_reaches_agent, setup_agent, teardown_agent),
    cmocka_unit_test_setup_teardown (test_agent_gone, setup_agent, teardown_agent),
    cmocka_unit_test_setup_teardown (test_agent_backlog_full, setup_agent, teardown_agent),
    cmocka_unit_test_setup_teardown (test_malformed_closes, setup_agent, teardown_agent),
  };
  return unit_tests_status (cmocka_run_group_tests (tests, NULL, NULL), N_ELEMENTS (tests));
}
