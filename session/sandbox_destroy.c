/* The end of a sandbox (hv_sandbox_destroy), and what sandboxes of a
 * killed service left (hv_sandbox_clean_leftovers). */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "container.h"
#include "log.h"
#include "run_leftovers.h"
#include "run_steps.h"
#include "runtime.h"
#include "safe_path.h"
#include "sandbox_priv.h"
#include "state.h"
#include "utils.h"

/* How deep a scratch workspace is emptied: the sandbox chose its depth,
 * and each level holds a descriptor.  A deeper tree stays (and is named). */
#define WORKSPACE_MAX_DEPTH 256

int
hv_sandbox_remove_workspace (const char *scratch_dir, const char *label)
{
  cleanup_close int dfd = hv_open_host_nofollow (scratch_dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (dfd < 0)
    return errno == ENOENT ? 0 : -1;
  return hv_remove_tree_at (dfd, label, WORKSPACE_MAX_DEPTH);
}

struct prefix_match
{
  const char *prefix;
  bool exact;
};

/* A service's container: its label starts with the prefix (or is it). */
static pid_t
sandbox_owner (const char *name, void *data)
{
  const struct prefix_match *p = data;
  bool match = p->exact ? strcmp (name, p->prefix) == 0 : str_has_prefix (name, p->prefix);
  return match ? -1 : 0;
}

/* Bundles <parent>/haven-sandbox-<prefix...> of ours, and scratch
 * workspaces <scratch_dir>/<prefix...>. */
static void
remove_dirs (const char *dir, const char *name_prefix, const struct prefix_match *p, int max_depth)
{
  cleanup_close int dfd = hv_open_host_nofollow (dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd < 0)
    return;
  DIR *d = fdopendir (dup (dfd));
  if (d == NULL)
    return;
  size_t plen = strlen (name_prefix);
  struct dirent *de;
  while ((de = readdir (d)))
    {
      if (strncmp (de->d_name, name_prefix, plen) != 0 || sandbox_owner (de->d_name + plen, (void *) p) == 0)
        continue;
      struct stat st;
      if (fstatat (dfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISDIR (st.st_mode) || st.st_uid != geteuid ())
        continue;
      hv_log (HV_LOG_DEBUG, "removing %s/%s, left by a sandbox", dir, de->d_name);
      if (hv_remove_tree_at (dfd, de->d_name, max_depth) < 0)
        hv_log (HV_LOG_WARNING, "could not remove all of %s/%s", dir, de->d_name);
    }
  closedir (d);
}

static void
clean (const struct prefix_match *p, const char *scratch_dir)
{
  cleanup_free char *state_root = hv_default_state_root ();
  hv_leftover_containers_clean (state_root, sandbox_owner, (void *) p);
  remove_dirs (hv_run_bundle_parent (), HV_SANDBOX_BUNDLE_PREFIX, p, 4);
  if (scratch_dir)
    remove_dirs (scratch_dir, "", p, WORKSPACE_MAX_DEPTH);
}

void
hv_sandbox_remove_leftover (const char *label, const char *scratch_dir)
{
  struct prefix_match p = { label, true };
  clean (&p, scratch_dir);
}

void
hv_sandbox_clean_leftovers (const char *prefix, const char *scratch_dir)
{
  if (prefix == NULL || prefix[0] == '\0')
    return; /* every container of the state root is no service's leftover */
  struct prefix_match p = { prefix, false };
  clean (&p, scratch_dir);
}

static void
note_error (oci_strv *notes, const char *what, hv_error *e)
{
  if (e)
    oci_strv_pushf (notes, "%s: %s", what, e->msg);
}

/* Init's pidfd is readable once it has exited; it is the caller's child
 * (a subreaper's) since the maker exited: reaped here when so. */
static void
wait_init (hv_sandbox *sb)
{
  struct pollfd pfd = { .fd = sb->r.fds[HV_SBR_PIDFD], .events = POLLIN };
  while (poll (&pfd, 1, 5000) < 0 && errno == EINTR)
    ;
  waitpid (sb->r.init_pid, NULL, WNOHANG);
}

int
hv_sandbox_destroy (hv_sandbox *sb, oci_strv *notes, hv_error **err)
{
  if (sb == NULL)
    return 0;
  oci_strv own_notes = { 0 };
  if (notes == NULL)
    notes = &own_notes;
  int ret = 0;
  struct hv_runtime rt = { .root = sb->r.state_root };
  cleanup_container hv_container *c = NULL;
  cleanup_error hv_error *lerr = NULL;
  if (hv_container_load (&rt, sb->r.id, &c, &lerr) == 0)
    {
      /* Every process of its cgroup at once, not only init: none is left
       * to act while the others go. */
      cleanup_error hv_error *kerr = NULL;
      hv_container_kill (&rt, c, SIGKILL, true, &kerr);
    }
  else
    note_error (notes, "load the sandbox's state", lerr);
  /* The keeper ends on its socket's hang-up too. */
  close (sb->r.fds[HV_SBR_KEEPER]);
  sb->r.fds[HV_SBR_KEEPER] = -1;
  wait_init (sb);
  if (c)
    {
      cleanup_error hv_error *derr = NULL;
      if (hv_container_delete (&rt, c, true, &derr) < 0)
        note_error (notes, "delete the sandbox's container", derr);
    }
  hv_pasta_stop (&sb->pasta);
  struct hv_sandbox_making *mk = sb->making;
  if (mk->guard)
    {
      /* What the guard says (quarantined, notes) goes into notes, for the
       * caller to answer with, not onto the service's stderr. */
      cleanup_free char *said = NULL;
      size_t said_len = 0;
      FILE *out = open_memstream (&said, &said_len);
      if (out)
        hv_project_guard_report_to (mk->guard, out);
      cleanup_error hv_error *gerr = NULL;
      if (hv_project_guard_check (mk->guard, &gerr) < 0)
        {
          *err = steal_pointer (&gerr);
          ret = -1;
        }
      if (out)
        {
          hv_project_guard_report_to (mk->guard, stderr);
          fclose (out);
          for (char *line = said, *save = NULL; (line = strtok_r (line, "\n", &save)); line = NULL)
            oci_strv_push (notes, str_has_prefix (line, "haven: ") ? line + 7 : line);
        }
    }
  if (!sb->r.scratch)
    {
      cleanup_error hv_error *perr = NULL;
      if (hv_project_links_check (sb->rules, sb->r.workspace, &mk->links, notes, &perr) < 0)
        {
          if (ret == 0)
            {
              *err = steal_pointer (&perr);
              ret = -1;
            }
          else
            note_error (notes, "project links", perr);
        }
    }
  hv_audit_end (&sb->audit, 0);
  hv_run_bundle_remove (sb->r.bundle);
  if (sb->r.scratch && hv_sandbox_remove_workspace (mk->scratch_dir, mk->label) < 0)
    oci_strv_pushf (notes, "the scratch workspace %s was not all removed (deeper than %d levels, or a mount)",
                    sb->r.workspace, WORKSPACE_MAX_DEPTH);
  /* The sandbox and its mounts are gone: the next run may use the
   * layers (the home state's lock closes with the record). */
  hv_sandbox_record_release (&sb->r);
  hv_policy_free (sb->rules);
  hv_project_guard_free (mk->guard);
  free (mk->label);
  free (mk->workspace);
  free (mk->scratch_dir);
  free (mk);
  free (sb);
  oci_strv_free (&own_notes);
  return ret;
}
