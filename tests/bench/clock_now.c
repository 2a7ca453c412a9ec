/* Prints CLOCK_MONOTONIC in nanoseconds, read as the program's first act:
 * service-bench.sh runs it as a sandbox's first command and subtracts the
 * caller's reading taken just before it asked for the sandbox, so the
 * difference is the time to the command's first instruction (plus this
 * program's own start, small when it is linked statically).  The clock is
 * the host's inside the sandbox unless a time namespace offsets it: the
 * bench checks that before it trusts the difference. */
#include <stdio.h>
#include <time.h>

int
main (void)
{
  struct timespec ts;
  if (clock_gettime (CLOCK_MONOTONIC, &ts) != 0)
    return 1;
  printf ("%lld\n", (long long) ts.tv_sec * 1000000000LL + ts.tv_nsec);
  return 0;
}
