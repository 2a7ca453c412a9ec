/* Fuzz target of a container's state file (runtime/state.c): the
 * input is <root>/<id>/state.json of a private state root.  Loading must
 * not crash, leak or read out of bounds; a state that loads must give the
 * `state` JSON (hv_container_state_json) and save (hv_container_save) to
 * a file that loads back to the same container, and its pid and owner
 * are the numbers in the file. */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <yajl/yajl_tree.h>

#include "fuzz_util.h"
#include "runtime.h"
#include "state.h"

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

static bool
same_str (const char *a, const char *b)
{
  return strcmp (a ? a : "", b ? b : "") == 0;
}

static void
check_same (const hv_container *a, const hv_container *b)
{
  if (!same_str (a->bundle, b->bundle) || !same_str (a->rootfs, b->rootfs) || !same_str (a->created, b->created)
      || !same_str (a->cgroup_path, b->cgroup_path) || a->systemd_cgroup != b->systemd_cgroup)
    fuzz_fail ("a saved state loads to other strings");
  if (a->pid != b->pid || a->owner != b->owner || a->start_time != b->start_time)
    fuzz_fail ("a saved state loads to other numbers: pid %d/%d owner %u/%u start %llu/%llu", a->pid, b->pid,
               a->owner, b->owner, a->start_time, b->start_time);
  if (a->annotations.n != b->annotations.n)
    fuzz_fail ("a saved state loads with %zu annotations, not %zu", b->annotations.n, a->annotations.n);
  for (size_t i = 0; i < a->annotations.n; i++)
    if (!same_str (a->annotations.v[i].key, b->annotations.v[i].key)
        || !same_str (a->annotations.v[i].value, b->annotations.v[i].value))
      fuzz_fail ("annotation %zu changed in a save and load", i);
}

/* With duplicate keys the last one counts (base/json_walk.c jw_lookup,
 * as Go's encoding/json). */
static yajl_val
last_member (yajl_val obj, const char *key)
{
  if (!YAJL_IS_OBJECT (obj))
    return NULL;
  for (size_t i = obj->u.object.len; i-- > 0;)
    if (strcmp (obj->u.object.keys[i], key) == 0)
      return obj->u.object.values[i];
  return NULL;
}

/* The numbers the file holds are the numbers loaded (a pid that does not
 * fit pid_t must fail, not load as another process). */
static void
check_numbers (const uint8_t *data, size_t size, const hv_container *c)
{
  char *text = malloc (size + 1);
  memcpy (text, data, size);
  text[size] = '\0';
  yajl_val root = yajl_tree_parse (text, NULL, 0);
  free (text);
  yajl_val pid = last_member (root, "pid");
  yajl_val owner = last_member (root, "owner");
  if (pid && YAJL_IS_INTEGER (pid) && YAJL_GET_INTEGER (pid) != (long long) c->pid)
    fuzz_fail ("pid %lld loaded as %d", YAJL_GET_INTEGER (pid), c->pid);
  if (owner && YAJL_IS_INTEGER (owner) && YAJL_GET_INTEGER (owner) != (long long) c->owner)
    fuzz_fail ("owner %lld loaded as %u", YAJL_GET_INTEGER (owner), c->owner);
  yajl_tree_free (root);
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  static char dir[128], file[160];
  const char *root = fuzz_tmpdir ();
  struct hv_runtime rt = { .root = root };
  hv_container *c = NULL, *again = NULL;
  hv_error *err = NULL;
  if (dir[0] == '\0')
    {
      snprintf (dir, sizeof (dir), "%s/fuzz", root);
      snprintf (file, sizeof (file), "%s/state.json", dir);
      mkdir (dir, 0700);
    }
  fuzz_write_file (file, data, size);
  if (hv_container_load (&rt, "fuzz", &c, &err) < 0)
    {
      if (err == NULL)
        fuzz_fail ("load failed without an error");
      hv_error_free (&err);
      return 0;
    }
  if (c == NULL || c->cgroup_path == NULL || strcmp (c->id, "fuzz") != 0)
    fuzz_fail ("loaded state without id or cgroup path");
  check_numbers (data, size, c);
  for (int s = HV_STATUS_CREATING; s <= HV_STATUS_STOPPED; s++)
    {
      char *json = hv_container_state_json (c, (enum hv_status) s, s % 2);
      char ebuf[256];
      yajl_val v = yajl_tree_parse (json, ebuf, sizeof (ebuf));
      if (v == NULL)
        fuzz_fail ("state JSON does not parse: %s\n%s", ebuf, json);
      yajl_tree_free (v);
      free (json);
    }
  if (hv_container_save (c, &err) < 0)
    fuzz_fail ("save: %s", err->msg);
  if (hv_container_load (&rt, "fuzz", &again, &err) < 0)
    fuzz_fail ("a saved state does not load: %s", err->msg);
  check_same (c, again);
  hv_container_free (again);
  hv_container_free (c);
  return 0;
}
