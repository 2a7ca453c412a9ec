/* Fuzz target of the audit trail's records and of `haven audit`'s reader.
 *
 * Writers (runtime/audit/audit_notify.c, egress_audit.c): the strings a sandbox
 * controls (a process's comm, a refused DNS name, the names of a denied
 * address, the container id and policy name an engine passes, a pod's
 * namespace, name, uid and container name) come from
 * the input, cut at NUL bytes, with the notification's numbers from its
 * first bytes.  Each record must be exactly one line that yajl parses
 * (strictly: valid UTF-8) back to the strings written, sanitized
 * (hv_audit_utf8_sanitize: unchanged when they were valid UTF-8, which
 * sanitizing twice checks), and `haven audit` must read and format it.
 *
 * Reader (cli/audit_view.c): the input's lines themselves, as a trail a
 * sandbox could have shaped, are parsed, matched and formatted, and
 * their "time" fields and the input as a --since value are parsed. */
#include "config.h"

#include <linux/seccomp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <yajl/yajl_tree.h>

#include "audit_notify.h"
#include "audit_trail.h"
#include "audit_view.h"
#include "egress_audit.h"
#include "fuzz_util.h"

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

enum
{
  F_POLICY,
  F_CONTAINER,
  F_PROCESS,
  F_COMM,
  F_QNAME,
  F_WHY,
  F_NAME0,
  F_NAME1,
  F_NAME2,
  F_COUNT
};

static char *fields[F_COUNT];

static size_t
names_for (void *data, int family, const uint8_t addr[16], const char **names, size_t max)
{
  (void) data, (void) family, (void) addr;
  size_t n = 0;
  for (int i = F_NAME0; i <= F_NAME2 && n < max; i++)
    names[n++] = fields[i];
  return n;
}

/* v is the string s became in a record. */
static void
check_string (const char *what, yajl_val v, const char *s)
{
  if (!YAJL_IS_STRING (v))
    fuzz_fail ("%s: not a string in the record", what);
  char *clean = hv_audit_utf8_sanitize (s);
  char *twice = hv_audit_utf8_sanitize (clean);
  if (strcmp (clean, twice) != 0)
    fuzz_fail ("%s: sanitizing is not idempotent", what);
  const char *got = YAJL_GET_STRING (v);
  if (got == NULL || strcmp (got, clean) != 0)
    fuzz_fail ("%s: the record holds another string", what);
  free (twice);
  free (clean);
}

static yajl_val
get (yajl_val root, const char *key)
{
  const char *path[] = { key, NULL };
  return yajl_tree_get (root, path, yajl_t_any);
}

static void
check_common (yajl_val root, const char *event)
{
  const char *e = YAJL_GET_STRING (get (root, "event"));
  if (e == NULL || strcmp (e, event) != 0)
    fuzz_fail ("record of event %s out of order", event);
  check_string ("policy", get (root, "policy"), fields[F_POLICY]);
  if (fields[F_CONTAINER][0])
    check_string ("container", get (root, "container"), fields[F_CONTAINER]);
  else if (get (root, "container") != NULL)
    fuzz_fail ("a container in haven run's record");
  /* A pod's container (write_records names one whenever there is a
   * container): its pod, from strings a pod spec chose. */
  yajl_val pod = get (root, "pod");
  if (fields[F_CONTAINER][0])
    {
      if (!YAJL_IS_OBJECT (pod))
        fuzz_fail ("a pod's container's record without its pod");
      check_string ("pod.namespace", get (pod, "namespace"), fields[F_NAME0]);
      check_string ("pod.name", get (pod, "name"), fields[F_NAME1]);
      check_string ("pod.uid", get (pod, "uid"), fields[F_NAME2]);
      check_string ("pod.container", get (pod, "container"), fields[F_CONTAINER]);
    }
  else if (pod != NULL)
    fuzz_fail ("a pod in haven run's record");
}

/* Every line of the trail: one JSON object, and one `haven audit` reads. */
static void
check_trail (int fd)
{
  static const char *const events[] = { "denied", "dns-refused", "net-denied", "denials-suppressed" };
  size_t len;
  char *text = fuzz_read_all (fd, &len);
  if (strlen (text) != len)
    fuzz_fail ("a NUL byte in the trail");
  size_t n = 0;
  for (char *line = text, *nl; *line; line = nl + 1, n++)
    {
      nl = strchr (line, '\n');
      if (nl == NULL)
        fuzz_fail ("the trail's last line has no newline");
      *nl = '\0';
      if (n >= 4)
        fuzz_fail ("more lines than records");
      char ebuf[256];
      yajl_val root = yajl_tree_parse (line, ebuf, sizeof (ebuf));
      if (!YAJL_IS_OBJECT (root))
        fuzz_fail ("record %zu is not a JSON object: %s\n%s", n, ebuf, line);
      check_common (root, events[n]);
      switch (n)
        {
        case 0:
          check_string ("process", get (root, "process"), fields[F_PROCESS]);
          check_string ("comm", get (root, "comm"), fields[F_COMM]);
          break;
        case 1:
          check_string ("name", get (root, "name"), fields[F_QNAME]);
          check_string ("why", get (root, "why"), fields[F_WHY]);
          break;
        case 2:
          {
            yajl_val names = get (root, "names");
            if (!YAJL_IS_ARRAY (names) || names->u.array.len != 3)
              fuzz_fail ("net-denied without its 3 names");
            for (size_t i = 0; i < 3; i++)
              check_string ("names[]", names->u.array.values[i], fields[F_NAME0 + i]);
          }
          break;
        }
      yajl_tree_free (root);
      /* haven audit skips lines longer than this, by design. */
      if (strlen (line) > HV_AUDIT_VIEW_MAX_LINE)
        continue;
      struct hv_audit_record rec;
      if (hv_audit_record_parse (line, &rec) < 0)
        fuzz_fail ("haven audit does not read record %zu:\n%s", n, line);
      if (rec.event == NULL || strcmp (rec.event, events[n]) != 0)
        fuzz_fail ("haven audit reads another event");
      char *shown = hv_audit_record_format (&rec);
      if (shown == NULL || strchr (shown, '\n') != NULL)
        fuzz_fail ("haven audit shows record %zu on other than one line", n);
      free (shown);
      hv_audit_record_release (&rec);
    }
  if (n != 4)
    fuzz_fail ("%zu lines for 4 records", n);
  free (text);
}

static void
write_records (const uint8_t *data, size_t size)
{
  struct seccomp_notif req = { 0 };
  size_t head = size < sizeof (req) ? size : sizeof (req);
  memcpy (&req, data, head);
  fuzz_split_n (data + head, size - head, "", 1, fields, NULL, F_COUNT);
  int fd = memfd_create ("trail", MFD_CLOEXEC);
  if (fd < 0)
    fuzz_fail ("memfd_create");
  struct hv_audit_trail t;
  hv_audit_trail_init (&t, fd, fields[F_POLICY], fields[F_CONTAINER][0] ? fields[F_CONTAINER] : NULL);
  struct hv_audit_pod pod = { .pod_namespace = fields[F_NAME0], .name = fields[F_NAME1], .uid = fields[F_NAME2],
                              .container = fields[F_CONTAINER] };
  if (fields[F_CONTAINER][0])
    t.pod = &pod;
  hv_audit_trail_denied (&t, &req, fields[F_PROCESS], fields[F_COMM]);
  hv_egress_audit_refused (&t, fields[F_QNAME], (uint16_t) req.data.nr, fields[F_WHY]);
  hv_egress_denial d = { .family = req.data.arch & 1 ? AF_INET6 : AF_INET,
                         .protocol = (hv_egress_l4) (req.pid % 5),
                         .port = (uint16_t) req.id };
  memcpy (d.addr, req.data.args, sizeof (d.addr));
  hv_egress_audit_denied (&t, &d, names_for, NULL);
  /* A summary naming the fuzzed strings as keys (any bytes). */
  hv_denial_summary sum = { .count = req.data.args[5], .repeats = req.data.args[4], .unrecorded_new = req.id,
                            .n_named = 2, .overruns = req.data.args[3] & 0xff, .per_second = 20 };
  sum.named[0].key = fields[F_QNAME];
  sum.named[0].count = req.data.args[2];
  sum.named[1].key = fields[F_COMM];
  sum.named[1].count = 1;
  hv_egress_audit_suppressed (&t, &sum);
  check_trail (fd);
  hv_audit_trail_release (&t);
  close (fd);
  fuzz_free_parts (fields, F_COUNT);
}

/* Nesting of a parsed value (1 for a scalar). */
static size_t
depth_of (yajl_val v)
{
  size_t d = 0;
  if (YAJL_IS_OBJECT (v))
    for (size_t i = 0; i < v->u.object.len; i++)
      {
        size_t k = depth_of (v->u.object.values[i]);
        d = k > d ? k : d;
      }
  else if (YAJL_IS_ARRAY (v))
    for (size_t i = 0; i < v->u.array.len; i++)
      {
        size_t k = depth_of (v->u.array.values[i]);
        d = k > d ? k : d;
      }
  else
    return 1;
  return d + 1;
}

/* The input as a trail `haven audit` reads: line by line. */
static void
read_trail (const uint8_t *data, size_t size)
{
  char *text = malloc (size + 1);
  memcpy (text, data, size);
  text[size] = '\0';
  struct hv_audit_filter f = { .has_since = true, .since = 1000000000 };
  oci_strv_push (&f.events, "denied");
  oci_strv_push (&f.events, "execute");
  oci_strv_push (&f.containers, "abc");
  /* A pod, and a pod's container (audit_view.c's pod_matches). */
  oci_strv_push (&f.containers, "ns/pod");
  oci_strv_push (&f.containers, "ns/pod/box");
  for (char *line = text, *nl; line; line = nl ? nl + 1 : NULL)
    {
      nl = strchr (line, '\n');
      if (nl)
        *nl = '\0';
      time_t since, sec;
      long nsec;
      hv_error *err = NULL;
      if (hv_audit_parse_since (line, 1700000000, &since, &err) < 0)
        hv_error_free (&err);
      hv_audit_parse_time (line, &sec, &nsec);
      struct hv_audit_record rec;
      if (hv_audit_record_parse (line, &rec) < 0)
        continue;
      /* The reader refuses deeper lines before yajl builds a tree that
       * is freed recursively. */
      if (depth_of (rec.root) > HV_AUDIT_VIEW_MAX_DEPTH + 1)
        fuzz_fail ("a record nested %zu deep was read", depth_of (rec.root));
      hv_audit_record_matches (&rec, &f);
      char *shown = hv_audit_record_format (&rec);
      if (shown == NULL || strchr (shown, '\n') != NULL)
        fuzz_fail ("haven audit shows a record on other than one line:\n%s", shown ? shown : "(null)");
      free (shown);
      hv_audit_record_release (&rec);
    }
  oci_strv_free (&f.events);
  oci_strv_free (&f.containers);
  free (text);
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  write_records (data, size);
  read_trail (data, size);
  return 0;
}
