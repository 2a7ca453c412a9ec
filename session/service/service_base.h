/* The service's state and the helpers every part of it uses.  Everything
 * lives in one process and one thread: no locks, and nothing here may
 * block.
 *
 * The parts, each using only those above it in this list (each file's
 * header declares what it gives the parts that may use it):
 *   service_base.c      this header's helpers: the clock, the log, buffers,
 *                       forgetting a freed object's poll slots, the signals
 *   service_reply.c     the HTTP answers: queued, sent, a request done
 *   service_run.c       commands in a sandbox: start, pipes, exits, answers
 *   service_files.c     the files API
 *   service_sandbox.c   sandboxes' lives: makers, ids, keepers, destroy,
 *                       idle timeouts, reaping
 *   service_pool.c      the warm pool
 *   service_handlers.c  create, list, get, delete
 *   service_conn.c      connections: reading requests, routing them
 *   service.c           the socket and the poll loop
 * Where a lower part must reach a higher one, it calls a function the
 * higher one left in the object: a request answered reads the
 * connection's next (svc_conn.read_next), a maker done tells whoever
 * started it (svc_maker.made). */
#ifndef HAVEN_SERVICE_BASE_H
#define HAVEN_SERVICE_BASE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "error.h"
#include "http_message.h"
#include "oci_spec.h"
#include "sandbox.h"
#include "service_opts.h"
#include "service_api.h"

#define SVC_ID_LEN 12 /* "hvs-" + 8 hex */
#define SVC_LABEL_PREFIX "hvs-"
#define SVC_PREFIX_LEN 8 /* "hvs-" + 4 hex of the socket's path: this service's sandboxes */
/* Connections at once: beyond, new ones wait in the listen backlog (the
 * descriptors are the sandboxes' too). */
#define SVC_CONNS_MAX 256
#define SVC_ENDED_KEEP 256 /* ids of sandboxes whose keeper ended, remembered for their 404 */

struct svc_buf
{
  char *data;
  size_t len, cap;
};
void svc_buf_add (struct svc_buf *b, const void *data, size_t len);
void svc_buf_drop (struct svc_buf *b, size_t n); /* take n bytes off the front */
void svc_buf_free (struct svc_buf *b);

struct svc;
struct svc_conn;
struct svc_run;
struct svc_pool;

struct svc_sandbox
{
  struct svc_sandbox *next;
  char id[SVC_ID_LEN + 1];
  hv_sandbox *sb;
  char *policy; /* as the request named it */
  pid_t init_pid; /* its init (a child of ours once its maker exited): not reaped by the sweep */
  bool pooled;  /* came from the pool (or waits in it, while pool != NULL) */
  bool project;
  struct svc_pool *pool; /* waiting in this pool: not claimed yet */
  uint64_t created_ms, active_ms; /* monotonic */
  uint32_t idle_timeout_s;
  struct svc_conn *owner; /* destroy_on_disconnect: the connection that created it */
  unsigned runs;          /* running */
  uint32_t next_run_id;
};

/* A sandbox being made: for a create request waiting on it (conn), or a
 * pool's refill (pool). */
struct svc_maker
{
  struct svc_maker *next;
  struct hv_sandbox_maker m;
  char id[SVC_ID_LEN + 1];
  char *policy;
  char *project; /* a project directory, or NULL: a scratch workspace */
  struct svc_conn *conn;
  struct svc_pool *pool;
  bool destroy_on_disconnect;
  uint32_t idle_timeout_s;
  bool want_pool; /* a create that may start a pool of its policy once made */
  /* Whoever started it (the pool's refill, a create): told when it is
   * done, with the sandbox made (x, in the service's list) or, x NULL, why
   * not (err).  mk is freed after. */
  void (*made) (struct svc *s, struct svc_maker *mk, struct svc_sandbox *x, hv_error *err);
};

struct svc_conn
{
  struct svc_conn *next;
  int fd;
  bool dead;       /* to be closed (the loop frees it) */
  bool left;       /* what depends on it was let go (svc_conn_gone) */
  bool close_after; /* close once out is written */
  /* Written and shut down for writing: what the peer still sends is read
   * and dropped until it closes, or this time (monotonic ms); closing with
   * unread input would reset the connection and lose the answer. */
  uint64_t drain_until;
  size_t drained;
  hv_http_parser *parser;
  struct svc_buf in, body, out;
  char *method, *target;
  bool have_head;
  bool busy;        /* a request is being answered (a maker or a run holds it) */
  bool keep_alive;
  struct svc_run *run;     /* the run answering this connection */
  struct svc_maker *maker; /* the maker answering it */
  /* The reader's (service_conn.c): once a request is answered
   * (svc_request_done), read and answer the next one. */
  void (*read_next) (struct svc *s, struct svc_conn *c);
};

struct svc_run
{
  struct svc_run *next;
  struct svc_sandbox *sb; /* NULL once the sandbox is gone */
  struct svc_conn *conn;  /* NULL once the client left (the run is killed) */
  uint32_t run_id;
  int in_fd, out_fd, err_fd;
  char *stdin_data;
  size_t stdin_len, stdin_off;
  struct svc_buf out, err;
  uint64_t max_output;
  bool out_trunc, err_trunc;
  bool stream;
  /* Streaming: the last bytes of a read that start a character the next
   * read may complete, held back so that a line never splits one. */
  char out_tail[4], err_tail[4];
  size_t out_tail_len, err_tail_len;
  bool exited, killed, timed_out;
  bool done; /* answered (or no one to answer): freed by svc_run_reap */
  int status;
  uint64_t start_ms, deadline_ms;
  oci_strv argv;
};

struct svc_chain_stat
{
  char *path;
  bool exists;
  dev_t dev;
  ino_t ino;
  off_t size;
  struct timespec mtime, ctime;
};

struct svc_pool
{
  struct svc_pool *next;
  char *policy;
  char *config; /* the compiled config its entries were made from */
  struct svc_chain_stat *chain;
  size_t n_chain;
  unsigned making;
  uint64_t retry_ms; /* after a maker failed: no refill before this */
};

/* What a polled descriptor belongs to (service.c's loop). */
struct svc_slot
{
  int kind;
  void *ptr; /* NULL: forgotten (svc_forget) */
};

struct svc
{
  const struct hv_service_opts *o;
  char *socket_path;
  char *scratch_dir;
  /* The first half of every id: what a service killed on this socket
   * left is removed at the next start on it, and only that (services on
   * other sockets keep theirs). */
  char id_prefix[SVC_PREFIX_LEN + 1];
  int listen_fd, signal_fd;
  uid_t uid;
  bool stopping;
  unsigned n_conns;
  uint64_t accept_pause_until; /* out of descriptors: accept again after this */
  uint64_t pool_quiet_until;   /* a claim's first requests come before a refill's maker (service_pool.c) */
  struct svc_conn *conns;
  struct svc_sandbox *sandboxes;
  struct svc_maker *makers;
  struct svc_run *runs;
  struct svc_pool *pools;
  char ended[SVC_ENDED_KEEP][SVC_ID_LEN + 1];
  size_t n_ended;
  struct svc_slot *slots; /* of the poll whose results are being handled */
  size_t n_slots;
};

uint64_t svc_now_ms (void);
/* An object freed while the poll's results are handled: its later poll
 * slots are skipped. */
void svc_forget (struct svc *s, void *ptr);
void svc_log (struct svc *s, bool verbose_only, const char *fmt, ...) __attribute__ ((format (printf, 3, 4)));
/* Fork-safe windows: signals the service takes through its signalfd are
 * blocked, and a child forked meanwhile would inherit the mask (a command
 * in a sandbox with SIGCHLD and SIGTERM blocked).  Around calls that fork
 * (makers, destroy), they are unblocked; a SIGTERM meanwhile sets a flag. */
void svc_signals_open (void);
void svc_signals_close (struct svc *s);
/* Blocks them and opens the signalfd; SIGTERM and SIGINT in an open
 * window set the flag svc_signals_close reads. */
int svc_signals_init (struct svc *s, hv_error **err);

#endif
