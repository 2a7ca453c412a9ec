/* Runs a command where clone3 answers ENOSYS, as on a kernel before 5.3
 * or under a seccomp profile that hides it (Docker's, haven's agent
 * profile): tests that haven-runc falls back to clone(2) and still puts
 * the container in its cgroup.
 *
 *   without_clone3 COMMAND [ARGS...] */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

int
main (int argc, char **argv)
{
  if (argc < 2)
    {
      fprintf (stderr, "usage: without_clone3 COMMAND [ARGS...]\n");
      return 2;
    }
  struct sock_filter insns[] = {
    BPF_STMT (BPF_LD | BPF_W | BPF_ABS, offsetof (struct seccomp_data, arch)),
    BPF_JUMP (BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
    BPF_STMT (BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    BPF_STMT (BPF_LD | BPF_W | BPF_ABS, offsetof (struct seccomp_data, nr)),
    BPF_JUMP (BPF_JMP | BPF_JEQ | BPF_K, __NR_clone3, 0, 1),
    BPF_STMT (BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS),
    BPF_STMT (BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
  };
  struct sock_fprog prog = { .len = sizeof (insns) / sizeof (insns[0]), .filter = insns };
  if (prctl (PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 || prctl (PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) < 0)
    {
      perror ("without_clone3: seccomp");
      return 1;
    }
  execvp (argv[1], argv + 1);
  perror (argv[1]);
  return 127;
}
