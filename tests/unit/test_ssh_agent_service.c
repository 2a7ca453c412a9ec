/* Unit tests of the ssh-agent view in the monitor (runtime/monitor/
 * ssh_agent_service.c): its annotation read strictly, the agent taken from
 * $SSH_AUTH_SOCK only, the directory its socket is bound in checked, and
 * the trail's records of sign requests, served through the monitor's
 * service runner against a stand-in agent. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "audit_trail.h"
#include "haven_annotations.h"
#include "ssh_agent_service.h"
#include "tmp_tree.h"
#include "unix_socket.h"
#include "utils.h"

/* The fingerprints of the blobs "KEY" and "OTHER". */
static hv_ssh_fingerprint fp_key, fp_other;

struct world
{
  char *dir;     /* holds the view's directory "v" (0700) and the agent */
  char *vdir;
  char agent[PATH_MAX];
  int agent_fd; /* the stand-in agent's listener */
  pthread_t agent_thread;
  int agent_requests;
};

/* The stand-in agent: each connection gets one SIGN_RESPONSE. */
static void *
agent_main (void *p)
{
  struct world *w = p;
  for (;;)
    {
      int c = accept4 (w->agent_fd, NULL, NULL, SOCK_CLOEXEC);
      if (c < 0)
        return NULL;
      unsigned char *msg = NULL;
      size_t len;
      hv_error *err = NULL;
      if (hv_ssh_agent_read_msg (c, 2000, &msg, &len, &err) == 1)
        {
          w->agent_requests++;
          static const unsigned char answer[] = { 0, 0, 0, 8, HV_SSH_AGENT_SIGN_RESPONSE, 0, 0, 0, 3, 's', 'i', 'g' };
          write_all (c, answer, sizeof answer);
        }
      hv_error_free (&err);
      free (msg);
      close (c);
    }
}

static int
setup (void **state)
{
  struct world *w = calloc (1, sizeof *w);
  w->dir = tree_make ("sshsvc");
  w->vdir = xasprintf ("%s/v", w->dir);
  assert_int_equal (mkdir (w->vdir, 0700), 0);
  snprintf (w->agent, sizeof w->agent, "%s/agent.sock", w->dir);
  hv_error *err = NULL;
  w->agent_fd = hv_unix_listen (w->agent, 8, &err);
  assert_true (w->agent_fd >= 0);
  assert_int_equal (pthread_create (&w->agent_thread, NULL, agent_main, w), 0);
  setenv ("SSH_AUTH_SOCK", w->agent, 1);
  *state = w;
  return 0;
}

static int
teardown (void **state)
{
  struct world *w = *state;
  shutdown (w->agent_fd, SHUT_RDWR);
  pthread_join (w->agent_thread, NULL);
  close (w->agent_fd);
  tree_remove (w->dir);
  free (w->vdir);
  free (w);
  return 0;
}

/* Prepare with the annotation's text: the result, and the service in *s. */
static int
prepare (const char *json, hv_ssh_agent_service **s, hv_error **err)
{
  oci_kv kv = { (char *) HV_SSH_AGENT_VIEW_ANNOTATION, (char *) json };
  oci_spec spec;
  memset (&spec, 0, sizeof spec);
  spec.annotations = (oci_kv_list){ .n = json ? 1 : 0, .v = &kv };
  return hv_ssh_agent_service_prepare (&spec, s, err);
}

static void
expect_refused (const char *json, const char *message)
{
  hv_ssh_agent_service *s = NULL;
  hv_error *err = NULL;
  if (prepare (json, &s, &err) == 0)
    fail_msg ("taken: %s", json);
  assert_null (s);
  if (strstr (err->msg, message) == NULL)
    fail_msg ("expected \"%s\"\n     got \"%s\"", message, err->msg);
  hv_error_free (&err);
}

static void
test_annotation (void **state)
{
  struct world *w = *state;
  hv_ssh_agent_service *s = NULL;
  hv_error *err = NULL;
  assert_int_equal (prepare (NULL, &s, &err), 0);
  assert_null (s);

  char json[1024];
  snprintf (json, sizeof json, "{\"dir\": \"%s\", \"keys\": [\"%s\"]}", w->vdir, fp_key);
  if (prepare (json, &s, &err) < 0)
    fail_msg ("%s", err->msg);
  assert_non_null (s);
  assert_int_equal (s->n_keys, 1);
  assert_string_equal (s->keys[0], fp_key);
  assert_string_equal (s->upstream, w->agent);
  struct stat st;
  cleanup_free char *sock = xasprintf ("%s/%s", w->vdir, HV_SSH_AGENT_VIEW_SOCKET_NAME);
  assert_int_equal (stat (sock, &st), 0);
  assert_true (S_ISSOCK (st.st_mode));
  hv_ssh_agent_service_free (s);
  unlink (sock);

  expect_refused ("[]", "annotations[\"run.haven.ssh-agent-view\"]");
  expect_refused ("{\"dir\": \"/x\", \"keys\": [], \"upstream\": \"/run/docker.sock\"}", "upstream: unknown field");
  expect_refused ("{\"keys\": []}", "dir: required field is missing");
  snprintf (json, sizeof json, "{\"dir\": \"relative\", \"keys\": [\"%s\"]}", fp_key);
  expect_refused (json, "dir: \"relative\" is not an absolute path");
  snprintf (json, sizeof json, "{\"dir\": \"%s\"}", w->vdir);
  expect_refused (json, "keys: required field is missing");
  snprintf (json, sizeof json, "{\"dir\": \"%s\", \"keys\": []}", w->vdir);
  expect_refused (json, "expected 1 to 32 keys");
  snprintf (json, sizeof json, "{\"dir\": \"%s\", \"keys\": [\"SHA256:x\"]}", w->vdir);
  expect_refused (json, "keys[0]: expected a fingerprint");
  snprintf (json, sizeof json, "{\"dir\": \"%s\", \"keys\": [\"%s\", 1]}", w->vdir, fp_key);
  expect_refused (json, "keys[1]: expected a fingerprint");
  snprintf (json, sizeof json, "{\"dir\": \"%s\", \"keys\": [\"%s\", \"%s\"]}", w->vdir, fp_key, fp_key);
  expect_refused (json, "is listed twice");

  /* The agent from the environment only, and a socket. */
  snprintf (json, sizeof json, "{\"dir\": \"%s\", \"keys\": [\"%s\"]}", w->vdir, fp_key);
  unsetenv ("SSH_AUTH_SOCK");
  expect_refused (json, "needs SSH_AUTH_SOCK, an absolute path, in the runtime's environment (it is not set)");
  setenv ("SSH_AUTH_SOCK", w->vdir, 1);
  expect_refused (json, "is not a socket");
  setenv ("SSH_AUTH_SOCK", w->agent, 1);

  /* The directory: only ours, reached through no link. */
  assert_int_equal (chmod (w->vdir, 0755), 0);
  expect_refused (json, "is not a directory of yours that only you can enter");
  assert_int_equal (chmod (w->vdir, 0700), 0);
  cleanup_free char *link = xasprintf ("%s/link", w->dir);
  assert_int_equal (symlink (w->vdir, link), 0);
  snprintf (json, sizeof json, "{\"dir\": \"%s\", \"keys\": [\"%s\"]}", link, fp_key);
  expect_refused (json, ".dir: ");
}

/* A sign request for blob on a new connection to the view: the answer's type. */
static int
sign (struct world *w, const char *blob)
{
  cleanup_free char *sock = xasprintf ("%s/%s", w->vdir, HV_SSH_AGENT_VIEW_SOCKET_NAME);
  hv_error *err = NULL;
  int fd = hv_unix_connect (sock, &err);
  assert_true (fd >= 0);
  unsigned char m[64];
  size_t n = 4, bl = strlen (blob);
  m[n++] = HV_SSH_AGENTC_SIGN_REQUEST;
  m[n++] = 0, m[n++] = 0, m[n++] = 0, m[n++] = (unsigned char) bl;
  memcpy (m + n, blob, bl);
  n += bl;
  static const unsigned char rest[] = { 0, 0, 0, 1, 'd', 0, 0, 0, 0 };
  memcpy (m + n, rest, sizeof rest);
  n += sizeof rest;
  m[0] = 0, m[1] = 0, m[2] = 0, m[3] = (unsigned char) (n - 4);
  assert_int_equal (write_all (fd, m, n), 0);
  unsigned char *answer = NULL;
  size_t len;
  assert_int_equal (hv_ssh_agent_read_msg (fd, 5000, &answer, &len, &err), 1);
  int type = answer[0];
  free (answer);
  close (fd);
  return type;
}

static void
test_records (void **state)
{
  struct world *w = *state;
  cleanup_free char *trail_path = xasprintf ("%s/trail.jsonl", w->dir);
  int tfd = open (trail_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
  assert_true (tfd >= 0);
  struct hv_audit_trail trail;
  hv_audit_trail_init (&trail, tfd, "pol", "ctr");
  char json[1024];
  snprintf (json, sizeof json, "{\"dir\": \"%s\", \"keys\": [\"%s\"]}", w->vdir, fp_key);
  hv_ssh_agent_service *s = NULL;
  hv_error *err = NULL;
  if (prepare (json, &s, &err) < 0 || hv_ssh_agent_service_start (s, &trail, &err) < 0)
    fail_msg ("%s", err->msg);
  assert_int_equal (sign (w, "KEY"), HV_SSH_AGENT_SIGN_RESPONSE);
  assert_int_equal (sign (w, "OTHER"), HV_SSH_AGENT_FAILURE);
  /* The agent saw the allowed request only. */
  assert_int_equal (w->agent_requests, 1);
  /* Past the trail's cap: counted, one record at the end. */
  trail.capped = true;
  assert_int_equal (sign (w, "OTHER"), HV_SSH_AGENT_FAILURE);
  assert_int_equal (sign (w, "KEY"), HV_SSH_AGENT_SIGN_RESPONSE);
  hv_ssh_agent_service_stop (s);
  /* Stopped: the sandbox's connects are refused. */
  cleanup_free char *sock = xasprintf ("%s/%s", w->vdir, HV_SSH_AGENT_VIEW_SOCKET_NAME);
  assert_true (hv_unix_connect (sock, &err) < 0);
  hv_error_free (&err);
  hv_ssh_agent_service_free (s);
  close (tfd);
  hv_audit_trail_release (&trail);

  char *text = tree_read (w->dir, "trail.jsonl");
  char want[512];
  snprintf (want, sizeof want, "\"event\":\"ssh-sign\",\"policy\":\"pol\",\"container\":\"ctr\",\"key\":\"%s\",\"allowed\":true,\"seq\":",
            fp_key);
  assert_non_null (strstr (text, want));
  snprintf (want, sizeof want, "\"event\":\"ssh-sign\",\"policy\":\"pol\",\"container\":\"ctr\",\"key\":\"%s\",\"allowed\":false,\"seq\":",
            fp_other);
  assert_non_null (strstr (text, want));
  assert_non_null (strstr (text, "\"event\":\"ssh-sign-suppressed\",\"policy\":\"pol\",\"container\":\"ctr\",\"count\":2,\"seq\":"));
  /* Three lines: nothing of the data signed. */
  size_t lines = 0;
  for (const char *c = text; *c; c++)
    lines += *c == '\n';
  assert_int_equal (lines, 3);
  free (text);
}

int
main (void)
{
  hv_ssh_key_fingerprint ((const unsigned char *) "KEY", 3, fp_key);
  hv_ssh_key_fingerprint ((const unsigned char *) "OTHER", 5, fp_other);
  const struct CMUnitTest tests[] = {
    cmocka_unit_test_setup_teardown (test_annotation, setup, teardown),
    cmocka_unit_test_setup_teardown (test_records, setup, teardown),
  };
  return cmocka_run_group_tests (tests, NULL, NULL);
}
