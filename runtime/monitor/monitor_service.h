/* A service the per-container monitor serves on a listening socket (the
 * model API gateway's listener, made in the sandbox's network namespace
 * and held only by the monitor).
 *
 * The monitor's loop is single-threaded and must never wait on a client:
 * a connection may stream a response for minutes.  So each service has an
 * accept thread, and each connection a thread of its own that runs the
 * handler and ends with it.  Bounds: at most max_conns connections at once
 * (one more is accepted and closed at once: the sandbox sees its
 * connection end, not a queue that grows), a small thread stack, and the
 * handler's own deadlines, which are what bound how long stop waits.
 *
 * Threads are created with every signal blocked: the monitor takes its
 * signals through a signalfd, which sees only signals blocked in every
 * thread, and a write to a closed connection then fails with EPIPE
 * instead of killing the monitor. */
#ifndef HAVEN_MONITOR_SERVICE_H
#define HAVEN_MONITOR_SERVICE_H

#include "error.h"

/* Serves one accepted connection; returns when done.  The runner closes
 * conn after. */
typedef void (*hv_service_handler) (int conn, void *data);
/* Told (from the accept thread) of a connection closed unserved because
 * max_conns were being served, or because no thread could be made. */
typedef void (*hv_service_refused) (const char *name, const char *reason, void *data);

typedef struct hv_monitor_service hv_monitor_service;

/* Takes listen_fd (a listening socket, any family): it is the service's
 * from then on, closed by stop, or here on an error.  An accept thread
 * serves each connection in a thread of its own, at most max_conns at
 * once (more are closed at once, and refused_fn, if set, is told).
 * Threads are created from the caller's thread, which must be in the
 * monitor's own namespaces (not inside the sandbox's netns). */
hv_monitor_service *hv_monitor_service_start (const char *name, int listen_fd, unsigned max_conns,
                                              hv_service_handler fn, void *data, hv_error **err);
/* The same, with refused_fn (NULL: none). */
hv_monitor_service *hv_monitor_service_start_full (const char *name, int listen_fd, unsigned max_conns,
                                                   hv_service_handler fn, hv_service_refused refused_fn,
                                                   void *data, hv_error **err);

/* Connections being served now. */
unsigned hv_monitor_service_active (hv_monitor_service *s);

/* Stop accepting (listener closed: the sandbox's connects are refused
 * from then on), wait for the connection threads (their own deadlines
 * bound them), free.  NULL is fine. */
void hv_monitor_service_stop (hv_monitor_service *s);
#endif
