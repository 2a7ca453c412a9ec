/* The service's state, shared by its parts: the loop and the socket
 * (service.c), connections and HTTP (service_conn.c), sandboxes and their
 * makers (service_sandbox.c), runs (service_run.c), the pool
 * (service_pool.c), the files API (service_files.c).  Everything lives in
 * one process and one thread: no locks, and nothing here may block. */
#ifndef HAVEN_SERVICE_INTERNAL_H
#define HAVEN_SERVICE_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "error.h"
#include "http_message.h"
#include "oci_spec.h"
#include "sandbox.h"
#include "service.h"
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
  struct svc_conn *conns;
  struct svc_sandbox *sandboxes;
  struct svc_maker *makers;
  struct svc_run *runs;
  struct svc_pool *pools;
  char ended[SVC_ENDED_KEEP][SVC_ID_LEN + 1];
  size_t n_ended;
};

uint64_t svc_now_ms (void);
/* An object freed while the poll's results are handled: its later poll
 * slots are skipped. */
void svc_forget (void *ptr);
void svc_log (struct svc *s, bool verbose_only, const char *fmt, ...) __attribute__ ((format (printf, 3, 4)));
/* Fork-safe windows: signals the service takes through its signalfd are
 * blocked, and a child forked meanwhile would inherit the mask (a command
 * in a sandbox with SIGCHLD and SIGTERM blocked).  Around calls that fork
 * (makers, destroy), they are unblocked; a SIGTERM meanwhile sets a flag. */
void svc_signals_open (void);
void svc_signals_close (struct svc *s);

/* service_conn.c */
void svc_conn_accept (struct svc *s);
void svc_conn_input (struct svc *s, struct svc_conn *c);
void svc_conn_output (struct svc *s, struct svc_conn *c);
void svc_conn_gone (struct svc *s, struct svc_conn *c); /* the peer left */
void svc_conn_free (struct svc *s, struct svc_conn *c);
void svc_reply (struct svc_conn *c, int status, const char *content_type, const char *body, size_t len);
void svc_reply_json (struct svc_conn *c, int status, char *json); /* takes json */
void svc_reply_error (struct svc_conn *c, int status, const char *code, const char *fmt, ...)
    __attribute__ ((format (printf, 4, 5)));
void svc_request_done (struct svc *s, struct svc_conn *c); /* the answer is queued: read the next request */
void svc_chunk (struct svc_conn *c, const char *data, size_t len); /* one chunk; len 0: the last */

/* service_sandbox.c */
void svc_handle_create (struct svc *s, struct svc_conn *c);
void svc_handle_list (struct svc *s, struct svc_conn *c);
void svc_handle_get (struct svc *s, struct svc_conn *c, const char *id);
void svc_handle_delete (struct svc *s, struct svc_conn *c, const char *id);
/* The sandbox named id, or NULL after answering 404 (ended or unknown). */
struct svc_sandbox *svc_sandbox_find (struct svc *s, struct svc_conn *c, const char *id);
void svc_sandbox_destroy (struct svc *s, struct svc_sandbox *x, oci_strv *notes, const char *why);
void svc_sandbox_ended (struct svc *s, struct svc_sandbox *x); /* its keeper is gone */
void svc_maker_done (struct svc *s, struct svc_maker *mk);
int svc_maker_start (struct svc *s, struct svc_maker *mk, hv_error **err);
void svc_maker_abort (struct svc *s, struct svc_maker *mk);
void svc_new_id (struct svc *s, char id[SVC_ID_LEN + 1]);
unsigned svc_user_count (struct svc *s); /* sandboxes and creates that count against max_sandboxes */
void svc_idle_check (struct svc *s, uint64_t now, uint64_t *next);
void svc_reap (struct svc *s);

/* service_run.c */
void svc_handle_run (struct svc *s, struct svc_conn *c, struct svc_sandbox *x);
void svc_run_keeper_input (struct svc *s, struct svc_sandbox *x); /* events from the keeper */
void svc_run_io (struct svc *s, struct svc_run *r, int fd, short revents);
void svc_run_timers (struct svc *s, uint64_t now, uint64_t *next);
void svc_run_client_gone (struct svc *s, struct svc_run *r);
void svc_run_sandbox_gone (struct svc *s, struct svc_sandbox *x); /* fail its runs */
void svc_run_reap (struct svc *s); /* free runs that are finished and answered */

/* service_pool.c */
/* A pristine sandbox of policy, or NULL (none, or the pool was stale). */
struct svc_sandbox *svc_pool_claim (struct svc *s, const char *policy);
/* After the first create of a policy: keep a pool of it. */
void svc_pool_want (struct svc *s, const char *policy, const char *config);
void svc_pool_made (struct svc *s, struct svc_pool *p, struct svc_sandbox *x);
void svc_pool_refill (struct svc *s);
void svc_pool_age_check (struct svc *s, uint64_t now, uint64_t *next);
void svc_pool_free_all (struct svc *s);
void svc_pool_maker_failed (struct svc_pool *p);
unsigned svc_pool_makers (struct svc *s);

/* service_files.c */
void svc_handle_file_put (struct svc *s, struct svc_conn *c, struct svc_sandbox *x, const char *path);
void svc_handle_file_get (struct svc *s, struct svc_conn *c, struct svc_sandbox *x, const char *path);
void svc_handle_file_list (struct svc *s, struct svc_conn *c, struct svc_sandbox *x, const char *path);

#endif
