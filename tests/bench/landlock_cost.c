/* Benchmark (not a test): what one Landlock domain adds to open+close, by
 * rule layout, on the host (no namespaces, no seccomp): each setting runs
 * in a fresh child that applies its ruleset, then times 5 x 30000
 * open(PATH, O_RDONLY)+close and prints its best ns per operation.
 * Settings alternate, ROUNDS times; tests/bench/README.md has figures.
 *
 *   landlock_cost ROUNDS PATH SETTING...
 *
 * SETTING:  none       no Landlock
 *           haven      haven run's default: every right of ABI 5 handled,
 *                      read+execute on /, write on 7 directories (9 rules)
 *           one        the same rights, one rule (read+execute on /)
 *           etc        one, plus read+execute on /etc (a shorter walk?)
 *           notrunc-*  the same without TRUNCATE handled: an experiment
 *                      only (haven must not drop it, it would weaken the
 *                      rules), to show why every open walks to the root */
#define _GNU_SOURCE
#include <fcntl.h>
#include <linux/landlock.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef LANDLOCK_ACCESS_FS_TRUNCATE
#define LANDLOCK_ACCESS_FS_TRUNCATE (1ULL << 14)
#endif
#define ALL_RIGHTS ((1ULL << 16) - 1) /* ABI 5: bits 0..15 */
#define READ_RIGHTS (LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_READ_DIR)

static double
now_ns (void)
{
  struct timespec t;
  clock_gettime (CLOCK_MONOTONIC, &t);
  return (double) t.tv_sec * 1e9 + (double) t.tv_nsec;
}

static void
add_rule (int ruleset, const char *path, unsigned long long rights)
{
  int fd = open (path, O_PATH | O_CLOEXEC);
  if (fd < 0)
    return;
  struct landlock_path_beneath_attr a = { .allowed_access = rights, .parent_fd = fd };
  if (syscall (SYS_landlock_add_rule, ruleset, LANDLOCK_RULE_PATH_BENEATH, &a, 0) < 0)
    perror (path);
  close (fd);
}

static void
apply (const char *setting)
{
  unsigned long long handled = ALL_RIGHTS;
  if (strncmp (setting, "notrunc-", 8) == 0)
    handled &= ~LANDLOCK_ACCESS_FS_TRUNCATE;
  struct landlock_ruleset_attr ra = { .handled_access_fs = handled };
  int rs = (int) syscall (SYS_landlock_create_ruleset, &ra, sizeof (ra), 0);
  if (rs < 0)
    {
      perror ("landlock_create_ruleset");
      exit (1);
    }
  unsigned long long rx = (READ_RIGHTS | LANDLOCK_ACCESS_FS_EXECUTE) & handled;
  if (strstr (setting, "haven"))
    {
      static const char *const writable[] = { "/dev", "/proc", "/run", "/tmp", "/var/tmp", "/root", "/home" };
      add_rule (rs, "/", READ_RIGHTS);
      for (size_t i = 0; i < sizeof (writable) / sizeof (writable[0]); i++)
        add_rule (rs, writable[i], handled & ~LANDLOCK_ACCESS_FS_EXECUTE);
      add_rule (rs, "/", LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_READ_FILE);
    }
  else if (strstr (setting, "one"))
    add_rule (rs, "/", rx);
  else if (strstr (setting, "etc"))
    {
      add_rule (rs, "/", rx);
      add_rule (rs, "/etc", rx);
    }
  if (prctl (PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 || syscall (SYS_landlock_restrict_self, rs, 0) < 0)
    {
      perror ("landlock_restrict_self");
      exit (1);
    }
}

int
main (int argc, char **argv)
{
  if (argc < 4)
    {
      fprintf (stderr, "usage: landlock_cost ROUNDS PATH SETTING...\n");
      return 2;
    }
  int rounds = atoi (argv[1]);
  const char *path = argv[2];
  for (int r = 0; r < rounds; r++)
    for (int s = 3; s < argc; s++)
      {
        pid_t pid = fork ();
        if (pid < 0)
          return 1;
        if (pid == 0)
          {
            if (strcmp (argv[s], "none") != 0)
              apply (argv[s]);
            double best = 1e18;
            for (int k = 0; k < 5; k++)
              {
                double t0 = now_ns ();
                for (int i = 0; i < 30000; i++)
                  {
                    int fd = open (path, O_RDONLY | O_CLOEXEC);
                    if (fd < 0)
                      {
                        perror (path);
                        _exit (1);
                      }
                    close (fd);
                  }
                double d = (now_ns () - t0) / 30000;
                if (d < best)
                  best = d;
              }
            printf ("%s %.1f\n", argv[s], best);
            fflush (stdout);
            _exit (0);
          }
        int st;
        waitpid (pid, &st, 0);
        if (!WIFEXITED (st) || WEXITSTATUS (st) != 0)
          return 1;
      }
  return 0;
}
