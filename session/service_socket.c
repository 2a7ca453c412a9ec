#include "config.h"

#include <stdlib.h>
#include <unistd.h>

#include "service_socket.h"
#include "utils.h"

char *
hv_service_default_socket (void)
{
  if (geteuid () == 0)
    return xstrdup ("/run/haven/haven.sock");
  const char *rt = getenv ("XDG_RUNTIME_DIR");
  if (rt && rt[0] == '/')
    return xasprintf ("%s/haven/haven.sock", rt);
  return xasprintf ("/run/user/%u/haven/haven.sock", (unsigned) geteuid ());
}
