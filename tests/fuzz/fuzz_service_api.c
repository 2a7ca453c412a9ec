/* Fuzz target of the service's API parsing and answers (session/service/
 * service_api_*.c): every request comes from some process of the user.
 *
 * The first byte picks the method (bits 0-2: GET, POST, PUT, DELETE,
 * HEAD, PATCH, get, "") and where the rest is cut in two for the answers
 * (bits 3-7: at that many 32nds of it).  The rest is, all at once:
 *  - a request target (up to its first NUL): hv_api_route fails exactly
 *    when it sets an error, and then leaves no id or path; a route names
 *    an id of [A-Za-z0-9_-]{1,64} exactly when it is a sandbox's, a path
 *    exactly for files (and maybe for list), relative, without an empty,
 *    "." or ".." component; an id and path written again with every byte
 *    percent-encoded route again to the same; a limit (1 to
 *    HV_API_DENIALS_MAX) exactly for denials;
 *  - a create body and a run body: each parser fails exactly when it sets
 *    an error ("request body: ..."), and what it takes keeps the bounds
 *    docs/api.md gives (policy non-empty, project absolute, argv not
 *    empty, env names, cwd, the keeper's request size, time and output
 *    limits);
 *  - the two halves as a run's stdout and stderr, a stream line's name
 *    and data, an error's code and message, and the error messages above:
 *    every answer is JSON that yajl reads strictly (valid UTF-8), a
 *    stream line is one line, and each *_b64 is there exactly when the
 *    bytes are not UTF-8 and decodes to them exactly.
 * Built with libFuzzer by build.sh, and with gcc by make check as a
 * replay of the committed corpus (fuzz_corpus_driver.c). */
#include "config.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yajl/yajl_tree.h>

#include "base64.h"
#include "fuzz_util.h"
#include "keeper.h"
#include "service_api.h"
#include "utf8.h"
#include "utils.h"

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

static yajl_val
json_of (const char *text, const char *what)
{
  char ebuf[256];
  if (!hv_utf8_valid (text, strlen (text)))
    fuzz_fail ("%s: not UTF-8: %s", what, text);
  yajl_val v = yajl_tree_parse (text, ebuf, sizeof (ebuf));
  if (v == NULL || !YAJL_IS_OBJECT (v))
    fuzz_fail ("%s: not a JSON object (%s): %s", what, ebuf, text);
  return v;
}

static yajl_val
member (yajl_val obj, const char *key)
{
  const char *path[] = { key, NULL };
  return yajl_tree_get (obj, path, yajl_t_any);
}

/* obj.key is the text of bytes s[0..len) and obj.key_b64 is there exactly
 * when they are not UTF-8, holding them. */
static void
check_output (yajl_val obj, const char *key, const char *s, size_t len)
{
  yajl_val v = member (obj, key);
  if (v == NULL || !YAJL_IS_STRING (v))
    fuzz_fail ("no string %s", key);
  cleanup_free char *clean = hv_utf8_sanitize (s, len, NULL);
  /* The tree's strings end at a NUL: compare as far as that. */
  if (strcmp (v->u.string, clean) != 0)
    fuzz_fail ("%s is not the bytes made UTF-8", key);
  cleanup_free char *b64_key = xasprintf ("%s_b64", key);
  yajl_val b = member (obj, b64_key);
  bool valid = hv_utf8_valid (s, len);
  if ((b != NULL) == valid)
    fuzz_fail ("%s %s for %s UTF-8", b64_key, b ? "given" : "missing", valid ? "valid" : "invalid");
  if (b)
    {
      cleanup_free unsigned char *bytes = NULL;
      size_t n;
      if (!YAJL_IS_STRING (b) || hv_base64_decode (b->u.string, strlen (b->u.string), &bytes, &n) < 0 || n != len
          || memcmp (bytes, s, len) != 0)
        fuzz_fail ("%s does not hold the bytes", b64_key);
    }
}

static void
check_error_json (const char *code, const char *msg)
{
  cleanup_free char *text = hv_api_error_json (code, msg);
  yajl_val v = json_of (text, "error");
  const char *path[] = { "error", "message", NULL };
  yajl_val m = yajl_tree_get (v, path, yajl_t_string);
  cleanup_free char *clean = hv_utf8_sanitize (msg, strlen (msg), NULL);
  if (m == NULL || strcmp (m->u.string, clean) != 0)
    fuzz_fail ("error message changed");
  yajl_tree_free (v);
}

static bool
id_ok (const char *id)
{
  size_t n = strlen (id);
  if (n < 1 || n > HV_API_ID_MAX)
    return false;
  for (const char *c = id; *c; c++)
    if (!((*c >= 'A' && *c <= 'Z') || (*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9') || *c == '_' || *c == '-'))
      return false;
  return true;
}

static void
check_relative (const char *p)
{
  if (p[0] == '\0' || p[0] == '/')
    fuzz_fail ("path not relative: \"%s\"", p);
  for (const char *seg = p;;)
    {
      const char *end = strchrnul (seg, '/');
      size_t n = (size_t) (end - seg);
      if (n == 0 || (n == 1 && seg[0] == '.') || (n == 2 && seg[0] == '.' && seg[1] == '.'))
        fuzz_fail ("path with an empty, . or .. component: %s", p);
      if (!*end)
        break;
      seg = end + 1;
    }
}

/* Every byte as %XX. */
static void
put_encoded (FILE *f, const char *s)
{
  for (; *s; s++)
    fprintf (f, "%%%02X", (unsigned char) *s);
}

static void
check_route (const char *method, const char *target)
{
  struct hv_api_target t;
  hv_error *err = NULL;
  int r = hv_api_route (method, target, &t, &err);
  if ((r < 0) != (err != NULL) || (r != 0 && r != -1))
    fuzz_fail ("route: %d with%s an error", r, err ? "" : "out");
  if (r < 0)
    {
      if (t.sandbox_id || t.path)
        fuzz_fail ("route: a refusal left an id or a path");
      check_error_json ("bad_request", err->msg);
      hv_error_free (&err);
      return;
    }
  bool has_id = t.route >= HV_API_SANDBOX_GET && t.route <= HV_API_SANDBOX_DENIALS;
  bool file = t.route == HV_API_FILE_GET || t.route == HV_API_FILE_PUT;
  bool denials = t.route == HV_API_SANDBOX_DENIALS;
  if (denials ? t.limit < 1 || t.limit > HV_API_DENIALS_MAX : t.limit != 0)
    fuzz_fail ("route %d with limit %u", (int) t.route, t.limit);
  if (t.route > HV_API_SANDBOX_DENIALS || (t.sandbox_id != NULL) != has_id || (has_id && !id_ok (t.sandbox_id)))
    fuzz_fail ("route %d with id %s", (int) t.route, t.sandbox_id ? t.sandbox_id : "(none)");
  if ((file && t.path == NULL) || (t.path && t.route != HV_API_FILE_LIST && !file))
    fuzz_fail ("route %d with path %s", (int) t.route, t.path ? t.path : "(none)");
  if (t.path)
    check_relative (t.path);
  if (has_id)
    {
      /* Written again, every byte escaped: the same route, id and path. */
      char *again = NULL;
      size_t len = 0;
      FILE *f = open_memstream (&again, &len);
      fputs ("/v1/sandboxes/", f);
      put_encoded (f, t.sandbox_id);
      if (t.route == HV_API_SANDBOX_RUN)
        fputs ("/run", f);
      else if (file)
        {
          fputs ("/files/", f);
          put_encoded (f, t.path);
        }
      else if (denials)
        fprintf (f, "/denials?limit=%u", t.limit);
      else if (t.route == HV_API_FILE_LIST)
        {
          fputs ("/list", f);
          if (t.path)
            {
              fputs ("?path=", f);
              put_encoded (f, t.path);
            }
        }
      fclose (f);
      struct hv_api_target t2;
      if (hv_api_route (method, again, &t2, &err) < 0)
        fuzz_fail ("%s refused: %s", again, err->msg);
      if (t2.route != t.route || t2.limit != t.limit || strcmp (t2.sandbox_id, t.sandbox_id) != 0
          || (t.path == NULL) != (t2.path == NULL) || (t.path && strcmp (t.path, t2.path) != 0))
        fuzz_fail ("%s does not route as %s", again, target);
      hv_api_target_free (&t2);
      free (again);
    }
  hv_api_target_free (&t);
}

static void
check_create (const char *body, size_t len)
{
  struct hv_api_create c;
  hv_error *err = NULL;
  int r = hv_api_parse_create (body, len, &c, &err);
  if ((r < 0) != (err != NULL))
    fuzz_fail ("create: %d with%s an error", r, err ? "" : "out");
  if (r < 0)
    {
      if (c.policy || c.project || strncmp (err->msg, "request body: ", 14) != 0)
        fuzz_fail ("create refused: %s", err->msg);
      check_error_json ("bad_request", err->msg);
      hv_error_free (&err);
      return;
    }
  if (c.policy == NULL || c.policy[0] == '\0' || (c.project && c.project[0] != '/') || c.idle_timeout_s > 86400)
    fuzz_fail ("create took a body out of bounds");
  hv_api_create_free (&c);
}

static void
check_run (const char *body, size_t len)
{
  struct hv_api_run r;
  hv_error *err = NULL;
  int rc = hv_api_parse_run (body, len, &r, &err);
  if ((rc < 0) != (err != NULL))
    fuzz_fail ("run: %d with%s an error", rc, err ? "" : "out");
  if (rc < 0)
    {
      if (r.argv.v || r.env.v || r.cwd || r.stdin_data || strncmp (err->msg, "request body: ", 14) != 0)
        fuzz_fail ("run refused: %s", err->msg);
      check_error_json ("bad_request", err->msg);
      hv_error_free (&err);
      return;
    }
  if (r.argv.n == 0 || r.argv.v[0][0] == '\0' || r.argv.v[r.argv.n] != NULL)
    fuzz_fail ("run took an empty argv");
  size_t total = r.cwd ? strlen (r.cwd) + 1 : 0;
  for (size_t i = 0; i < r.argv.n; i++)
    total += strlen (r.argv.v[i]) + 1;
  for (size_t i = 0; i < r.env.n; i++)
    {
      const char *eq = strchr (r.env.v[i], '=');
      cleanup_free char *name = eq ? strndup (r.env.v[i], (size_t) (eq - r.env.v[i])) : NULL;
      if (name == NULL || !hv_env_name_valid (name))
        fuzz_fail ("run took env \"%s\"", r.env.v[i]);
      total += strlen (r.env.v[i]) + 1;
    }
  if (total > HV_KEEPER_MAX_REQUEST)
    fuzz_fail ("run took %zu bytes for the keeper", total);
  if (r.cwd && r.cwd[0] != '/')
    check_relative (r.cwd);
  if (r.cwd && r.cwd[0] == '\0')
    fuzz_fail ("run took an empty cwd");
  if (r.timeout_s > 86400 || r.max_output > 16 * 1024 * 1024 || r.stdin_len > len)
    fuzz_fail ("run took a body out of bounds");
  hv_api_run_free (&r);
}

static void
check_answers (const char *a, size_t alen, const char *b, size_t blen, uint8_t sel)
{
  struct hv_api_run_result res = {
    .exit_code = (int) sel - 128, .timed_out = sel & 1, .duration_s = (double) alen / 7.0,
    .stdout_data = a, .stdout_len = alen, .stderr_data = b, .stderr_len = blen,
    .stdout_truncated = sel & 2, .stderr_truncated = sel & 4,
  };
  cleanup_free char *text = hv_api_run_result_json (&res);
  yajl_val v = json_of (text, "result");
  check_output (v, "stdout", a, alen);
  check_output (v, "stderr", b, blen);
  yajl_val code = member (v, "exit_code");
  if (code == NULL || !YAJL_IS_INTEGER (code) || YAJL_GET_INTEGER (code) != res.exit_code)
    fuzz_fail ("exit_code lost");
  yajl_tree_free (v);

  cleanup_free char *line = hv_api_stream_line (a, b, blen);
  if (strchr (line, '\n') != line + strlen (line) - 1)
    fuzz_fail ("a stream line that is not one line: %s", line);
  v = json_of (line, "stream line");
  check_output (v, "data", b, blen);
  yajl_tree_free (v);

  check_error_json (a, b);
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  static const char *const methods[] = { "GET", "POST", "PUT", "DELETE", "HEAD", "PATCH", "get", "" };
  if (size < 1)
    return 0;
  uint8_t sel = data[0];
  const char *rest = (const char *) data + 1;
  size_t len = size - 1;
  /* Each part as its own buffer of exactly its size, so a read past the
   * end is seen (the target and the halves are NUL-terminated, as the
   * callers' are). */
  char *target = strndup (rest, len);
  char *body = malloc (len ? len : 1);
  memcpy (body, rest, len);
  size_t cut = len * (size_t) (sel >> 3) / 32;
  char *a = strndup (rest, cut);
  size_t alen = strlen (a);
  char *b = malloc (len - cut + 1);
  memcpy (b, rest + cut, len - cut);
  b[len - cut] = '\0';

  check_route (methods[sel & 7], target);
  check_create (body, len);
  check_run (body, len);
  check_answers (a, alen, b, len - cut, sel);

  free (target);
  free (body);
  free (a);
  free (b);
  return 0;
}
