/* `haven doctor`: what this host or container offers haven, and what
 * each policy gets here (doctor_report.h for what is printed). */
#ifndef HAVEN_DOCTOR_CMD_H
#define HAVEN_DOCTOR_CMD_H

/* Returns the exit status: 0 (a report, whatever it says), 2 for bad
 * options (said on stderr with the usage). */
int hv_cmd_doctor (int argc, char **argv);
#endif
