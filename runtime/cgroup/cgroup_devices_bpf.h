/* Device rules on cgroup v2: an eBPF program of type
 * BPF_PROG_TYPE_CGROUP_DEVICE generated from the rule list
 * (cgroup_devices.h), loaded with the bpf() system call and attached to
 * the container's cgroup (BPF_CGROUP_DEVICE, BPF_F_ALLOW_MULTI).  The
 * kernel runs it on every mknod and open of a device node by a process of
 * the cgroup or its descendants; it returns 1 to allow, 0 to deny.
 *
 * The program evaluates each requested access (mknod, read, write) in
 * turn, trying the rules that carry it from the last to the first: the
 * first to match the device type, major and minor decides (deny: return
 * 0; allow: next access); no match allows.  After the last access it
 * returns 1. */
#ifndef HAVEN_CGROUP_DEVICES_BPF_H
#define HAVEN_CGROUP_DEVICES_BPF_H

#include <linux/bpf.h>
#include <stddef.h>

#include "cgroup_devices.h"
#include "error.h"

/* Generate the program (no system call): *out holds *n_out instructions. */
int hv_dev_bpf_generate (const struct hv_dev_rule *rules, size_t n, struct bpf_insn **out, size_t *n_out,
                         hv_error **err);
/* Load the program for `rules`, attach it to the cgroup directory and
 * detach the device programs attached there before (update): the new one
 * is in place before the old ones go, so no access slips through. */
int hv_dev_bpf_apply (const char *cgroup_dir, const struct hv_dev_rule *rules, size_t n, hv_error **err);
/* How many device programs are attached directly to the cgroup. */
int hv_dev_bpf_count (const char *cgroup_dir, size_t *count, hv_error **err);
#endif
