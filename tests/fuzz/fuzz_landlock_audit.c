/* Fuzz target of the kernel audit records haven reads for Landlock's
 * refusals (runtime/monitor/landlock_audit.c).  Their fields hold what the
 * sandbox chose (paths, comm), and their framing is the kernel's: the
 * input is up to 16 datagrams (netlink header and record text) cut at
 * "\n--\n", each in a buffer of its exact size plus the byte the reader
 * NUL-terminates in place.  The container's init is pid 4242, made known
 * after the first datagram.  Nothing may crash, leak or read out of
 * bounds, and every record written to the trail must be one JSON line
 * that `haven audit` reads (cli/audit_view.c). */
#include "config.h"

#include <linux/netlink.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <yajl/yajl_tree.h>

#include "audit_trail.h"
#include "audit_view.h"
#include "fuzz_util.h"
#include "landlock_audit.h"

#define MAX_DATAGRAMS 16

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

static void
check_trail (int fd)
{
  size_t len;
  char *text = fuzz_read_all (fd, &len);
  if (strlen (text) != len)
    fuzz_fail ("a NUL byte in the trail");
  for (char *line = text, *nl; *line; line = nl + 1)
    {
      nl = strchr (line, '\n');
      if (nl == NULL)
        fuzz_fail ("the trail's last line has no newline");
      *nl = '\0';
      char ebuf[256];
      yajl_val root = yajl_tree_parse (line, ebuf, sizeof (ebuf));
      if (!YAJL_IS_OBJECT (root))
        fuzz_fail ("not a JSON object: %s\n%s", ebuf, line);
      yajl_tree_free (root);
      struct hv_audit_record rec;
      if (hv_audit_record_parse (line, &rec) < 0)
        fuzz_fail ("haven audit does not read:\n%s", line);
      if (strcmp (rec.event, "landlock-denied") != 0 && strcmp (rec.event, "denials-suppressed") != 0)
        fuzz_fail ("unexpected event %s", rec.event);
      char *shown = hv_audit_record_format (&rec);
      if (shown == NULL || strchr (shown, '\n') != NULL)
        fuzz_fail ("haven audit shows a record on other than one line");
      free (shown);
      hv_audit_record_release (&rec);
    }
  free (text);
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  int sv[2];
  if (socketpair (AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, sv) < 0)
    fuzz_fail ("socketpair");
  close (sv[1]);
  int fd = memfd_create ("trail", MFD_CLOEXEC);
  if (fd < 0)
    fuzz_fail ("memfd_create");
  struct hv_audit_trail t;
  hv_audit_trail_init (&t, fd, "fuzz", "c0ffee");
  /* sv[0] is owned by l: finish polls it and finds it quiet. */
  hv_landlock_audit *l
      = hv_landlock_audit_new (sv[0], "{\"execute\":\"exec: ./bin\",\"write\":\"project_writable\"}");
  char *parts[MAX_DATAGRAMS];
  size_t lens[MAX_DATAGRAMS];
  size_t n = fuzz_split_n (data, size, "\n--\n", 4, parts, lens, MAX_DATAGRAMS);
  for (size_t i = 0; i < n; i++)
    {
      size_t len = lens[i];
      char *buf = malloc (len + 1);
      memcpy (buf, parts[i], len + 1);
      hv_landlock_audit_datagram (l, &t, buf, len);
      free (buf);
      if (i == 0)
        hv_landlock_audit_attach (l, 4242);
    }
  fuzz_free_parts (parts, MAX_DATAGRAMS);
  hv_landlock_audit_tick (l, &t);
  hv_landlock_audit_finish (l, &t, 0);
  check_trail (fd);
  hv_landlock_audit_free (l);
  hv_audit_trail_release (&t);
  close (fd);
  return 0;
}
