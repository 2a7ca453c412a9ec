#include "config.h"
#include <stdio.h>
#include "oci_spec.h"
int main (int argc, char **argv)
{
  oci_spec *s = NULL;
  hv_error *err = NULL;
  if (argc > 1 && oci_spec_load (argv[1], "config.json", &s, &err) < 0)
    {
      fprintf (stderr, "%s\n", err->msg);
      return 1;
    }
  oci_spec_free (s);
  return 0;
}
