/* System call arguments compared the way the kernel reads them. */
#ifndef HAVEN_SECCOMP_ARGS_H
#define HAVEN_SECCOMP_ARGS_H

#include <seccomp.h>
#include <stddef.h>

/* The most comparisons one OCI comparison can turn into (one per bit). */
#define HV_SCMP_MAX_ALTERNATIVES 33

/* Bits of argument ARG of system call NAME that the kernel reads
 * (0xffffffff for an int, 0xffff for a umode_t), or ~0 when it reads all
 * 64 (or the argument is not in the table). */
uint64_t hv_seccomp_arg_width_mask (const char *name, unsigned arg);

/* Rewrite comparison CMP of an argument that the kernel reads through
 * MASK into comparisons that hold exactly when CMP holds for the value
 * the kernel sees; their OR is the condition.  Returns how many were
 * written to ALT (0: the condition can never hold). */
size_t hv_seccomp_narrow_cmp (const struct scmp_arg_cmp *cmp, uint64_t mask,
                              struct scmp_arg_cmp alt[HV_SCMP_MAX_ALTERNATIVES]);

#endif
