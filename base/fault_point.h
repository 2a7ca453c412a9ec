/* Named fault points: a test hook that stops the runtime where a crash
 * could leave something behind (tests/integration/test_faults.sh). */
#ifndef HAVEN_FAULT_POINT_H
#define HAVEN_FAULT_POINT_H

/* The environment variable naming the point at which to die. */
#define HV_FAULT_ENV "HAVEN_TEST_KILL_AT"

/* If $HAVEN_TEST_KILL_AT is NAME, raise SIGKILL on this process. */
void hv_fault_point (const char *name);

#endif
