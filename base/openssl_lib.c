/* OpenSSL loaded on first use (openssl_lib.h says why). */
#include "config.h"

/* The real declarations, without openssl_lib.h's call macros: this file
 * takes the addresses. */
#define HV_OPENSSL_LIB_NO_CALLS
#include "openssl_lib.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

/* The soname: the ABI the headers (OpenSSL 3) describe; libssl.so.3
 * brings libcrypto.so.3, and dlsym on its handle searches both. */
#define LIBSSL "libssl.so.3"

struct hv_openssl_lib hv_openssl;

static pthread_once_t once = PTHREAD_ONCE_INIT;
static char failure[512]; /* empty: loaded */

static void
load (void)
{
  /* Never unloaded: the pointers stay valid for the process's life.  The
   * search path is the dynamic linker's, the one a linked libssl would
   * have come from. */
  void *h = dlopen (LIBSSL, RTLD_NOW | RTLD_LOCAL);
  if (h == NULL)
    {
      const char *why = dlerror ();
      snprintf (failure, sizeof (failure), "cannot load %s (%s); install libssl3", LIBSSL,
                why ? why : "unknown error");
      return;
    }
  struct hv_openssl_lib l;
#define HV_OPENSSL_LOAD(name)                                                                                        \
  if ((l.name = (__typeof__ (l.name)) dlsym (h, #name)) == NULL)                                                     \
    {                                                                                                                \
      snprintf (failure, sizeof (failure), "%s has no " #name " (not OpenSSL 3?)", LIBSSL);                          \
      dlclose (h);                                                                                                   \
      return;                                                                                                        \
    }
  HV_OPENSSL_FUNCTIONS (HV_OPENSSL_LOAD)
#undef HV_OPENSSL_LOAD
  hv_openssl = l;
}

int
hv_openssl_load (hv_error **err)
{
  pthread_once (&once, load);
  if (failure[0])
    return hv_error_set (err, 0, "OpenSSL: %s", failure);
  return 0;
}
