/* The warm pool: after the first create of a policy with pool=true, the
 * service keeps --pool-size pristine sandboxes of it, made by makers in
 * the background (at most two at once, so a burst of refills does not
 * starve the creates that wait).  A claim takes the oldest; nothing ever
 * ran in it, and it is handed out once (it leaves the pool as it is
 * claimed).  An entry older than --pool-max-age is remade; the pool of a
 * policy is dropped when a file of its chain changed (or a file that
 * would now be found first appeared): checked at claim, by stat alone. */
#include "config.h"

#include <errno.h>
#include <string.h>
#include <sys/stat.h>

#include "policy.h"
#include "policy_load.h"
#include "service_pool.h"
#include "service_sandbox.h"
#include "utils.h"

#define POOL_MAKERS_MAX 2
#define POOL_RETRY_MS 10000
/* After a claim, a pool that still holds a sandbox is refilled this much
 * later: the maker (a fork, then the sandbox's set-up) competes for the
 * CPUs with the command the claimant is about to run, on the path the
 * pool is there to make fast.  An empty pool is refilled at once. */
#define POOL_QUIET_MS 30

static void
chain_stat (struct svc_chain_stat *c)
{
  struct stat st;
  c->exists = stat (c->path, &st) == 0;
  if (!c->exists)
    return;
  c->dev = st.st_dev;
  c->ino = st.st_ino;
  c->size = st.st_size;
  c->mtime = st.st_mtim;
  c->ctime = st.st_ctim;
}

static bool
chain_same (const struct svc_chain_stat *a, const struct svc_chain_stat *b)
{
  return a->exists == b->exists
         && (!a->exists
             || (a->dev == b->dev && a->ino == b->ino && a->size == b->size && a->mtime.tv_sec == b->mtime.tv_sec
                 && a->mtime.tv_nsec == b->mtime.tv_nsec && a->ctime.tv_sec == b->ctime.tv_sec
                 && a->ctime.tv_nsec == b->ctime.tv_nsec));
}

static void
chain_add (struct svc_pool *p, const char *path)
{
  p->chain = xrealloc (p->chain, (p->n_chain + 1) * sizeof (*p->chain));
  struct svc_chain_stat *c = &p->chain[p->n_chain++];
  *c = (struct svc_chain_stat){ .path = xstrdup (path) };
  chain_stat (c);
}

/* The files the policy was read from, and the directories a name is
 * looked up in (a policy added to one of them can shadow a name of the
 * chain: the directory's mtime changes). */
static int
chain_record (struct svc_pool *p, hv_error **err)
{
  cleanup_policy hv_policy *pol = NULL;
  if (hv_policy_load (p->policy, &pol, err) < 0)
    return -1;
  for (size_t i = 0; i < pol->files.n; i++)
    chain_add (p, pol->files.v[i]);
  char **dirs = hv_policy_search_path ();
  for (size_t i = 0; dirs[i]; i++)
    {
      chain_add (p, dirs[i]);
      free (dirs[i]);
    }
  free (dirs);
  return 0;
}

static bool
chain_changed (const struct svc_pool *p)
{
  for (size_t i = 0; i < p->n_chain; i++)
    {
      struct svc_chain_stat now = { .path = p->chain[i].path };
      chain_stat (&now);
      if (!chain_same (&now, &p->chain[i]))
        return true;
    }
  return false;
}

static struct svc_pool *
pool_find (struct svc *s, const char *policy)
{
  for (struct svc_pool *p = s->pools; p; p = p->next)
    if (strcmp (p->policy, policy) == 0)
      return p;
  return NULL;
}

static void
pool_release (struct svc_pool *p)
{
  for (size_t i = 0; i < p->n_chain; i++)
    free (p->chain[i].path);
  free (p->chain);
  free (p->policy);
  free (p->config);
  free (p);
}

static void
pool_free (struct svc *s, struct svc_pool *p)
{
  for (struct svc_pool **pp = &s->pools; *pp; pp = &(*pp)->next)
    if (*pp == p)
      {
        *pp = p->next;
        break;
      }
  for (struct svc_sandbox *x = s->sandboxes; x;)
    if (x->pool == p)
      {
        svc_sandbox_destroy (s, x, NULL, "its pool was dropped");
        x = s->sandboxes;
      }
    else
      x = x->next;
  for (struct svc_maker *m = s->makers; m;)
    if (m->pool == p)
      {
        svc_maker_abort (s, m);
        m = s->makers;
      }
    else
      m = m->next;
  pool_release (p);
}

struct svc_sandbox *
svc_pool_claim (struct svc *s, const char *policy)
{
  struct svc_pool *p = pool_find (s, policy);
  if (p == NULL)
    return NULL;
  if (chain_changed (p))
    {
      svc_log (s, false, "policy %s changed: its pool is dropped", policy);
      pool_free (s, p);
      return NULL;
    }
  uint64_t now = svc_now_ms ();
  struct svc_sandbox *best = NULL;
  for (struct svc_sandbox *x = s->sandboxes; x; x = x->next)
    if (x->pool == p && now - x->created_ms < (uint64_t) s->o->pool_max_age_s * 1000
        && (best == NULL || x->created_ms < best->created_ms))
      best = x;
  if (best)
    {
      best->pool = NULL; /* out of the pool: never handed out again */
      s->pool_quiet_until = now + POOL_QUIET_MS;
    }
  return best;
}

void
svc_pool_want (struct svc *s, const char *policy, const char *config)
{
  if (s->o->pool_size == 0 || pool_find (s, policy))
    return;
  struct svc_pool *p = xmalloc0 (sizeof (*p));
  p->policy = xstrdup (policy);
  p->config = xstrdup (config ? config : "");
  cleanup_error hv_error *err = NULL;
  if (chain_record (p, &err) < 0)
    {
      svc_log (s, false, "no pool for %s: %s", policy, err->msg);
      pool_release (p);
      return;
    }
  p->next = s->pools;
  s->pools = p;
  svc_log (s, false, "pool of %s: %u sandboxes", policy, s->o->pool_size);
}

/* A refill's maker is done: its sandbox waits in the pool. */
static void
pool_maker_made (struct svc *s, struct svc_maker *mk, struct svc_sandbox *x, hv_error *err)
{
  (void) err;
  struct svc_pool *p = mk->pool;
  if (x == NULL)
    {
      /* A policy whose sandboxes cannot be made now is not retried in a loop. */
      p->retry_ms = svc_now_ms () + POOL_RETRY_MS;
      return;
    }
  x->pool = p;
  x->pooled = true;
  x->idle_timeout_s = 0;
  p->retry_ms = 0;
  const char *config = hv_sandbox_config (x->sb);
  if (config && strcmp (config, p->config) != 0)
    {
      /* Made from another compile than the pool's first (the policy's
       * outside world changed: home state, the environment): the newest
       * is what a fresh create would give now. */
      free (p->config);
      p->config = xstrdup (config);
    }
  svc_log (s, true, "sandbox %s (%s) made for the pool", x->id, p->policy);
}

static unsigned
pool_makers (struct svc *s)
{
  unsigned n = 0;
  for (struct svc_maker *m = s->makers; m; m = m->next)
    n += m->pool != NULL;
  return n;
}

void
svc_pool_refill (struct svc *s)
{
  if (s->stopping)
    return;
  uint64_t now = svc_now_ms ();
  unsigned makers = pool_makers (s);
  for (struct svc_pool *p = s->pools; p && makers < POOL_MAKERS_MAX; p = p->next)
    {
      if (p->retry_ms > now)
        continue;
      unsigned ready = 0;
      for (struct svc_sandbox *x = s->sandboxes; x; x = x->next)
        ready += x->pool == p;
      if (ready > 0 && now < s->pool_quiet_until)
        continue;
      unsigned have = p->making + ready;
      while (have < s->o->pool_size && makers < POOL_MAKERS_MAX)
        {
          struct svc_maker *mk = xmalloc0 (sizeof (*mk));
          svc_new_id (s, mk->id);
          mk->policy = xstrdup (p->policy);
          mk->pool = p;
          mk->made = pool_maker_made;
          cleanup_error hv_error *err = NULL;
          if (svc_maker_start (s, mk, &err) < 0)
            {
              svc_log (s, false, "pool of %s: %s", p->policy, err->msg);
              svc_maker_free (mk);
              p->retry_ms = now + POOL_RETRY_MS;
              break;
            }
          p->making++;
          have++;
          makers++;
        }
    }
}

void
svc_pool_age_check (struct svc *s, uint64_t now, uint64_t *next)
{
  uint64_t max = (uint64_t) s->o->pool_max_age_s * 1000;
  for (struct svc_sandbox *x = s->sandboxes, *nx; x; x = nx)
    {
      nx = x->next;
      if (x->pool == NULL)
        continue;
      if (now - x->created_ms >= max)
        {
          svc_sandbox_destroy (s, x, NULL, "older than --pool-max-age");
          *next = now;
          return;
        }
      if (x->created_ms + max < *next)
        *next = x->created_ms + max;
    }
}

void
svc_pool_free_all (struct svc *s)
{
  while (s->pools)
    pool_free (s, s->pools);
}
