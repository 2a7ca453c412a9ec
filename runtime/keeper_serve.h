/* The keeper's loop, run by a container's init in keeper mode (keeper.h)
 * once it is everything the config's process would be but its program. */
#ifndef HAVEN_KEEPER_SERVE_H
#define HAVEN_KEEPER_SERVE_H

/* Serve requests on keeper_fd until the caller's end closes, then exit
 * (with every command still running killed, when we are not the pid 1
 * whose end does that).  default_cwd: a request's cwd when it names none.
 * Closes every fd but stdio and keeper_fd first. */
__attribute__ ((noreturn)) void hv_keeper_serve (int keeper_fd, const char *default_cwd);

#endif
