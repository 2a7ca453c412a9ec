/* The exit statuses haven gives of its own, beside the command's: the
 * four that timeout(1), env(1), nohup(1) and the shell agree on, so that
 * a caller (a script, an agent, an engine) can tell haven's answer from
 * the command's without knowing haven. */
#ifndef HAVEN_EXIT_STATUS_H
#define HAVEN_EXIT_STATUS_H

enum hv_exit_status
{
  /* The command ran past its time limit and was killed (timeout(1)):
   * `haven run` under a policy's timeout. */
  HV_EXIT_TIMEOUT = 124,
  /* haven itself failed, or refused to start the command (timeout(1) and
   * env(1) use it for their own failures): any error of `haven` that is
   * not one of the two below. */
  HV_EXIT_HAVEN_FAILED = 125,
  /* The command was found but could not be executed: denied (EACCES,
   * EPERM), not a program (ENOEXEC), a directory, as a shell and env(1)
   * report it.  Set on the error with hv_error_set_exit_status. */
  HV_EXIT_CANNOT_EXECUTE = 126,
  /* The command (or its interpreter or loader) was not found (ENOENT), as
   * a shell and env(1) report it; also what a forked child exits with
   * when it could not exec the program it was made for, as system(3)
   * reports a shell it could not run. */
  HV_EXIT_NOT_FOUND = 127,
};
#endif
