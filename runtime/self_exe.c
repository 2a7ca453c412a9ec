#include "config.h"
#include "self_exe.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef MFD_EXEC
#define MFD_EXEC 0x0010U
#endif

extern char **environ;

#define REQUIRED_SEALS (F_SEAL_SEAL | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE)

int
hv_ensure_sealed_self (char **argv, hv_error **err)
{
  cleanup_close int self = open ("/proc/self/exe", O_RDONLY | O_CLOEXEC);
  if (self < 0)
    return hv_error_set (err, errno, "open /proc/self/exe");
  int seals = fcntl (self, F_GET_SEALS);
  if (seals >= 0 && (seals & REQUIRED_SEALS) == REQUIRED_SEALS)
    return 0;
  struct stat st;
  if (fstat (self, &st) < 0)
    return hv_error_set (err, errno, "stat /proc/self/exe");
  cleanup_close int mfd = memfd_create ("haven-runc", MFD_CLOEXEC | MFD_ALLOW_SEALING | MFD_EXEC);
  if (mfd < 0 && errno == EINVAL)
    mfd = memfd_create ("haven-runc", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (mfd < 0)
    return hv_error_set (err, errno, "memfd_create");
  off_t off = 0;
  while (off < st.st_size)
    {
      ssize_t n = sendfile (mfd, self, &off, (size_t) (st.st_size - off));
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        return hv_error_set (err, n < 0 ? errno : EIO, "copy runtime binary to memfd");
    }
  if (fcntl (mfd, F_ADD_SEALS, REQUIRED_SEALS) < 0)
    return hv_error_set (err, errno, "seal runtime copy");
  /* The copy has no path: remember where the program lives (haven finds
   * the policies shipped next to it). */
  char self_path[4096];
  ssize_t l = readlink ("/proc/self/exe", self_path, sizeof (self_path) - 1);
  if (l > 0)
    {
      self_path[l] = '\0';
      setenv ("_HAVEN_EXE", self_path, 1);
    }
  fexecve (mfd, argv, environ);
  return hv_error_set (err, errno, "re-exec from sealed copy");
}
