/* The parts of host_probe_host.c that read no global state, for the
 * unit test: what haven runs in, from a root directory and an
 * environment given by the caller. */
#ifndef HAVEN_HOST_PROBE_HOST_H
#define HAVEN_HOST_PROBE_HOST_H

/* hv_probe_container's answer for the file system at root ("" for the
 * real one: its paths are then "/.dockerenv" ...) and the variables env
 * returns (NULL for one not set). */
const char *hv_probe_container_in (const char *root, const char *(*env) (const char *name));
#endif
