/* The JSON the API answers with: a run's result, a streamed run's lines,
 * errors (docs/api.md).  A command's output is whatever bytes it wrote;
 * the answer must stay JSON whatever they are (yajl writes bytes through
 * unchecked), and a client must be able to get them back exactly. */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "base64.h"
#include "json_gen.h"
#include "service_api.h"
#include "utf8.h"

/* yajl_gen with its defaults: no beautify, and it does not validate
 * UTF-8 (every string written here is made valid first). */
static yajl_gen
gen_new (void)
{
  yajl_gen g = yajl_gen_alloc (NULL);
  if (g == NULL)
    abort ();
  return g;
}

/* A string from arbitrary bytes: invalid UTF-8 as U+FFFD (NUL bytes stay,
 * escaped by yajl as \u0000). */
static void
put_text (yajl_gen g, const char *s, size_t len)
{
  size_t n;
  cleanup_free char *clean = hv_utf8_sanitize (s ? s : "", s ? len : 0, &n);
  yajl_gen_string (g, (const unsigned char *) clean, n);
}

/* "NAME": TEXT and, when the bytes are not valid UTF-8 (the text then
 * lost some), "NAME_b64": the bytes. */
static void
put_output (yajl_gen g, const char *name, const char *s, size_t len)
{
  if (s == NULL)
    len = 0;
  jg_str (g, name);
  put_text (g, s, len);
  if (len > 0 && !hv_utf8_valid (s, len))
    {
      cleanup_free char *key = xasprintf ("%s_b64", name);
      cleanup_free char *b64 = hv_base64_encode (s, len);
      jg_kv (g, key, b64);
    }
}

static void
put_bool (yajl_gen g, const char *key, bool v)
{
  jg_str (g, key);
  yajl_gen_bool (g, v);
}

char *
hv_api_run_result_json (const struct hv_api_run_result *r)
{
  yajl_gen g = gen_new ();
  yajl_gen_map_open (g);
  jg_str (g, "exit_code");
  yajl_gen_integer (g, r->exit_code);
  put_bool (g, "timed_out", r->timed_out);
  /* Microseconds are more than a clock here measures; yajl_gen_double
   * writes NaN and infinities as nothing at all (no JSON). */
  double d = isfinite (r->duration_s) && r->duration_s > 0 ? r->duration_s : 0;
  if (d > 1e12)
    d = 1e12; /* keeps "%.6f" within num */
  char num[64];
  int n = snprintf (num, sizeof (num), "%.6f", d);
  jg_str (g, "duration_s");
  yajl_gen_number (g, num, (size_t) n);
  put_output (g, "stdout", r->stdout_data, r->stdout_len);
  put_bool (g, "stdout_truncated", r->stdout_truncated);
  put_output (g, "stderr", r->stderr_data, r->stderr_len);
  put_bool (g, "stderr_truncated", r->stderr_truncated);
  yajl_gen_map_close (g);
  return jg_finish (g);
}

char *
hv_api_stream_line (const char *stream, const char *data, size_t len)
{
  yajl_gen g = gen_new ();
  yajl_gen_map_open (g);
  jg_str (g, "stream");
  put_text (g, stream, stream ? strlen (stream) : 0);
  put_output (g, "data", data, len);
  yajl_gen_map_close (g);
  cleanup_free char *line = jg_finish (g);
  return xasprintf ("%s\n", line);
}

char *
hv_api_error_json (const char *code, const char *message)
{
  yajl_gen g = gen_new ();
  yajl_gen_map_open (g);
  jg_str (g, "error");
  yajl_gen_map_open (g);
  jg_str (g, "code");
  put_text (g, code, code ? strlen (code) : 0);
  jg_str (g, "message");
  put_text (g, message, message ? strlen (message) : 0);
  yajl_gen_map_close (g);
  yajl_gen_map_close (g);
  return jg_finish (g);
}
