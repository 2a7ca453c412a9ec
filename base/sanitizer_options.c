/* Options of a sanitizer build (./configure --enable-sanitizers), linked
 * into every program of the tree that links base.
 *
 * glibc overwrites freed memory where haven asks it to (M_PERTURB: the
 * service and the maker of a sandbox, whose init keeps a copy of their
 * memory).  AddressSanitizer's allocator ignores M_PERTURB and keeps
 * freed blocks in a quarantine as they were, so a sanitizer build would
 * keep freed secrets that the real one does not: it fills freed memory
 * too.  Options given in ASAN_OPTIONS still apply on top of these. */
#include "config.h"

#ifdef __SANITIZE_ADDRESS__
const char *__asan_default_options (void);

const char *
__asan_default_options (void)
{
  return "max_free_fill_size=1073741824:free_fill_byte=165";
}
#endif

/* An empty unit is not ISO C: something for a build without sanitizers. */
typedef int hv_sanitizer_options_unit;
