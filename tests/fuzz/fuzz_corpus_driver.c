/* Replays a fuzz corpus through LLVMFuzzerTestOneInput without libFuzzer,
 * so make check (gcc, sanitizers) regression-tests every committed input.
 * Arguments: files or directories; none: HAVEN_FUZZ_CORPUS. */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

static int
run_file (const char *path)
{
  FILE *f = fopen (path, "rb");
  if (f == NULL)
    {
      fprintf (stderr, "%s: %s\n", path, strerror (errno));
      return -1;
    }
  static uint8_t buf[1 << 20];
  size_t n = fread (buf, 1, sizeof (buf), f);
  int bad = ferror (f) || !feof (f);
  fclose (f);
  if (bad)
    {
      fprintf (stderr, "%s: unreadable or larger than %zu bytes\n", path, sizeof (buf));
      return -1;
    }
  LLVMFuzzerTestOneInput (buf, n);
  return 0;
}

static int
run_path (const char *path, size_t *count)
{
  struct stat st;
  if (stat (path, &st) < 0)
    {
      fprintf (stderr, "%s: %s\n", path, strerror (errno));
      return -1;
    }
  if (!S_ISDIR (st.st_mode))
    {
      (*count)++;
      return run_file (path);
    }
  DIR *d = opendir (path);
  if (d == NULL)
    {
      fprintf (stderr, "%s: %s\n", path, strerror (errno));
      return -1;
    }
  int r = 0;
  struct dirent *e;
  while ((e = readdir (d)) != NULL)
    {
      if (e->d_name[0] == '.')
        continue;
      char sub[4096];
      snprintf (sub, sizeof (sub), "%s/%s", path, e->d_name);
      if (run_path (sub, count) < 0)
        r = -1;
    }
  closedir (d);
  return r;
}

int
main (int argc, char **argv)
{
  size_t count = 0;
  int r = 0;
  if (argc < 2)
    r = run_path (HAVEN_FUZZ_CORPUS, &count);
  for (int i = 1; i < argc; i++)
    if (run_path (argv[i], &count) < 0)
      r = -1;
  /* An empty corpus would make this a test that cannot fail. */
  if (r == 0 && count == 0)
    {
      fprintf (stderr, "no corpus files found\n");
      r = -1;
    }
  printf ("%zu inputs replayed\n", count);
  return r < 0 ? 1 : 0;
}
