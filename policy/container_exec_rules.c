/* allow_exec and block_shell inside an engine's container.
 *
 * The rules are the ones haven run computes on the host (policy_exec.c:
 * names resolved through PATH, ELF interpreters, every executable in the
 * bin directories but the shells), computed by a child process chrooted
 * into the container's root filesystem, so that every path and every
 * link is read the way the container will read it and none leads back to
 * the host.  The child only reads (it never executes anything from the
 * image), and is killed after a bound: a FIFO planted in the image where
 * a binary should be cannot hang the engine. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "container_exec_rules.h"
#include "file_read.h"
#include "policy_exec.h"
#include "utils.h"

#define EXEC_RULES_TIMEOUT_S 20
#define EXEC_RULES_MAX_BYTES (16u << 20)

static const char *
path_of (const oci_strv *env)
{
  const char *found = NULL;
  for (size_t i = 0; i < env->n; i++)
    if (strncmp (env->v[i], "PATH=", 5) == 0)
      found = env->v[i] + 5;
  return found;
}

static int
write_list (int fd, char tag, const oci_strv *v)
{
  for (size_t i = 0; i < v->n; i++)
    {
      if (strchr (v->v[i], '\n'))
        continue; /* not a path the rules can name; it stays unexecutable */
      cleanup_free char *line = xasprintf ("%c%s\n", tag, v->v[i]);
      if (write_all (fd, line, strlen (line)) < 0)
        return -1;
    }
  return 0;
}

static void __attribute__ ((noreturn))
rules_child (int out, const hv_policy *p, const char *rootfs, const char *path_env, const oci_strv *writable)
{
  alarm (EXEC_RULES_TIMEOUT_S);
  hv_error *err = NULL;
  cleanup_strv oci_strv exec = { 0 }, masked = { 0 };
  if (chroot (rootfs) < 0 || chdir ("/") < 0)
    {
      dprintf (out, "e chroot into %s: %s\n", rootfs, strerror (errno));
      _exit (1);
    }
  if (hv_policy_exec_paths (p, path_env, &exec, &err) < 0
      || hv_policy_shell_masks (p, path_env, writable, &masked, &err) < 0)
    {
      dprintf (out, "e%s\n", err->msg);
      _exit (1);
    }
  _exit (write_list (out, 'x', &exec) < 0 || write_list (out, 'm', &masked) < 0 ? 1 : 0);
}

static int
parse_rules (char *text, oci_strv *exec, oci_strv *masked, hv_error **err)
{
  char *save = NULL;
  for (char *line = strtok_r (text, "\n", &save); line; line = strtok_r (NULL, "\n", &save))
    if (line[0] == 'x')
      oci_strv_push (exec, line + 1);
    else if (line[0] == 'm')
      oci_strv_push (masked, line + 1);
    else if (line[0] == 'e')
      return hv_error_set (err, 0, "process: exec rules in the container: %s", line + 1);
  /* block_shell lists a thousand programs and more: one sort. */
  oci_strv_dedup (exec);
  oci_strv_dedup (masked);
  return 0;
}

int
hv_container_exec_rules (const hv_policy *p, const char *rootfs, const oci_strv *env, const oci_strv *writable,
                         oci_strv *exec, oci_strv *masked, hv_error **err)
{
  int fds[2];
  if (pipe2 (fds, O_CLOEXEC) < 0)
    return hv_error_set (err, errno, "pipe");
  fflush (NULL);
  pid_t pid = fork ();
  if (pid < 0)
    {
      close (fds[0]);
      close (fds[1]);
      return hv_error_set (err, errno, "fork");
    }
  if (pid == 0)
    {
      close (fds[0]);
      rules_child (fds[1], p, rootfs, path_of (env), writable);
    }
  close (fds[1]);
  cleanup_free char *text = NULL;
  size_t len = 0;
  int r = hv_read_fd (fds[0], "exec rules", 4096, &text, &len, err);
  close (fds[0]);
  int status = 0;
  while (waitpid (pid, &status, 0) < 0 && errno == EINTR)
    ;
  if (r < 0)
    return -1;
  if (len > EXEC_RULES_MAX_BYTES)
    return hv_error_set (err, 0, "process: exec rules in the container: more than %u bytes of paths",
                         EXEC_RULES_MAX_BYTES);
  if (parse_rules (text, exec, masked, err) < 0)
    return -1;
  if (!WIFEXITED (status) || WEXITSTATUS (status) != 0)
    return hv_error_set (err, 0, "process: exec rules in the container's root filesystem %s could not be read%s",
                         rootfs, WIFSIGNALED (status) && WTERMSIG (status) == SIGALRM ? " in time" : "");
  return 0;
}
