/* A config.json built in a unit test, parsed: it must parse (the
 * message says why not).  spec_with_annotations is the smallest config
 * carrying the given annotations (the body of the JSON object: "\"k\":\"v\",...").
 * Include after cmocka.h, oci_spec.h and utils.h.  A test uses what it
 * needs (hence unused). */
#ifndef HAVEN_TESTS_OCI_SPEC_CHECK_H
#define HAVEN_TESTS_OCI_SPEC_CHECK_H

#include <string.h>

__attribute__ ((unused)) static oci_spec *
spec_parse_ok (const char *doc)
{
  oci_spec *spec = NULL;
  hv_error *err = NULL;
  if (oci_spec_parse (doc, strlen (doc), "config.json", &spec, &err) < 0)
    fail_msg ("%s: %s", doc, err->msg);
  return spec;
}

__attribute__ ((unused)) static oci_spec *
spec_with_annotations (const char *annotations_json)
{
  cleanup_free char *doc
      = xasprintf ("{\"ociVersion\":\"1.0.2\",\"root\":{\"path\":\"rootfs\"},\"annotations\":{%s}}", annotations_json);
  return spec_parse_ok (doc);
}

#endif
