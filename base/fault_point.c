/* hv_fault_point: SIGKILL at a named point, for the fault tests.
 *
 * Compiled into every build, because it is safe there:
 * - It only does what whoever started the runtime can do anyway: the
 *   variable is read from the runtime's own environment, which its caller
 *   (the user, an engine, an agent running `haven run`) sets, and that
 *   caller can SIGKILL the runtime at any moment.  A runtime must leave
 *   nothing behind that `delete --force` or the next `haven run` cannot
 *   remove whenever it dies; this only makes the moment reproducible.
 * - No container can set it for a runtime: the points are called only in
 *   the runtime's own process (create, start, exec, delete, run, and
 *   `haven run`'s session), never in code that runs after the clone or
 *   fork of init, of an exec'd process, of the monitor, or of pasta.  A
 *   container's environment (config.json's or process.json's process.env,
 *   `haven run`'s policy env) goes to execve of the container's process,
 *   never into the runtime's environ, and `exec` reads only its caller's.
 *   The monitor is a fork of create and never calls a point.
 * - Nothing is parsed: the name is compared with fixed strings. */
#include "config.h"
#include "fault_point.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>

void
hv_fault_point (const char *name)
{
  const char *want = getenv (HV_FAULT_ENV);
  if (want && strcmp (want, name) == 0)
    raise (SIGKILL);
}
