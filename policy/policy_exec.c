/* What may be executed: allow_exec resolves names to binaries (and their
 * ELF interpreter); block_shell lists every executable in the system bin
 * directories except shells.  Landlock rules attach to inodes, so a shell
 * reached through another name (symlink or hard link) is still refused,
 * and a copy made by the agent is not executable at all. */
#include "config.h"

#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "policy.h"
#include "policy_exec.h"
#include "utils.h"

/* PT_INTERP of an ELF executable (the dynamic loader), if any. */
static char *
elf_interpreter (const char *path)
{
  cleanup_close int fd = open (path, O_RDONLY | O_CLOEXEC);
  Elf64_Ehdr eh;
  if (fd < 0 || pread (fd, &eh, sizeof (eh), 0) != sizeof (eh) || memcmp (eh.e_ident, ELFMAG, SELFMAG) != 0
      || eh.e_ident[EI_CLASS] != ELFCLASS64)
    return NULL;
  for (int i = 0; i < eh.e_phnum && i < 64; i++)
    {
      Elf64_Phdr ph;
      if (pread (fd, &ph, sizeof (ph), (off_t) (eh.e_phoff + (uint64_t) i * eh.e_phentsize)) != sizeof (ph))
        return NULL;
      if (ph.p_type == PT_INTERP && ph.p_filesz > 1 && ph.p_filesz < PATH_MAX)
        {
          char *interp = xmalloc0 (ph.p_filesz + 1);
          if (pread (fd, interp, ph.p_filesz, (off_t) ph.p_offset) != (ssize_t) ph.p_filesz)
            {
              free (interp);
              return NULL;
            }
          char *real = realpath (interp, NULL);
          free (interp);
          return real;
        }
    }
  return NULL;
}

static char *
which (const char *name, const char *path_env)
{
  if (strchr (name, '/'))
    return realpath (name, NULL);
  cleanup_free char *copy = xstrdup (path_env ? path_env : "/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin");
  char *save = NULL;
  for (char *dir = strtok_r (copy, ":", &save); dir; dir = strtok_r (NULL, ":", &save))
    {
      cleanup_free char *candidate = xasprintf ("%s/%s", dir, name);
      if (access (candidate, X_OK) == 0)
        return realpath (candidate, NULL);
    }
  return NULL;
}

/* The interpreter of a "#!" script and, for "#!/usr/bin/env NAME", the
 * program env runs, canonical; *is_script false when REAL is none. */
static int
script_interpreters (const char *real, const char *path_env, char **interp, char **via_env, bool *is_script)
{
  *interp = *via_env = NULL;
  *is_script = false;
  cleanup_close int fd = open (real, O_RDONLY | O_CLOEXEC);
  char head[256];
  ssize_t n = fd >= 0 ? read (fd, head, sizeof (head) - 1) : -1;
  if (n <= 2 || head[0] != '#' || head[1] != '!')
    return 0;
  *is_script = true;
  head[n] = '\0';
  head[strcspn (head, "\n")] = '\0';
  char *save = NULL;
  char *word = strtok_r (head + 2, " \t", &save);
  if (word == NULL)
    return 0;
  *interp = realpath (word, NULL);
  const char *base = strrchr (word, '/') ? strrchr (word, '/') + 1 : word;
  if (strcmp (base, "env") == 0)
    {
      char *arg;
      while ((arg = strtok_r (NULL, " \t", &save)) && arg[0] == '-')
        ;
      if (arg)
        *via_env = which (arg, path_env);
    }
  return 0;
}

/* REAL and what it needs to run: its ELF interpreter (the loader), or,
 * for a script, nothing more: the interpreter of an allowed script must
 * be allowed by name itself.  Allowing it silently would allow every
 * program in that language, "#!/bin/sh" a shell. */
static int
add_binary (oci_strv *exec, const char *real, const char *name, const oci_strv *allowed, const char *path_env,
            const char *file, hv_error **err)
{
  oci_strv_push_unique (exec, real);
  cleanup_free char *interp = elf_interpreter (real);
  if (interp)
    oci_strv_push_unique (exec, interp);
  cleanup_free char *script_interp = NULL, *via_env = NULL;
  bool is_script;
  script_interpreters (real, path_env, &script_interp, &via_env, &is_script);
  if (!is_script)
    return 0;
  if (script_interp == NULL || !oci_strv_contains (allowed, script_interp))
    return hv_error_set (err, 0,
                         "%s: process.allow_exec: \"%s\" is a script run by %s, which allow_exec does not name: "
                         "allowing the script would allow its interpreter for any command (add the interpreter "
                         "by name if that is meant)",
                         file, name, script_interp ? script_interp : "an interpreter that was not found");
  if (via_env && !oci_strv_contains (allowed, via_env))
    return hv_error_set (err, 0,
                         "%s: process.allow_exec: \"%s\" is a script run through env by %s, which allow_exec "
                         "does not name (add it by name if that is meant)",
                         file, name, via_env);
  return 0;
}

static const char *const shell_names[] = { "sh", "bash", "dash", "zsh", "ksh", "mksh", "fish", "csh", "tcsh",
                                           "ash", "busybox", "rbash", NULL };
static const char *const bin_dirs[] = { "/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin",
                                        NULL };

/* Compilers run helpers of their own. */
static const struct
{
  const char *tool;
  const char *const helpers[6];
} toolchains[] = {
  { "gcc", { "/usr/lib/gcc", "/usr/libexec/gcc", "as", "ld", NULL } },
  { "cc", { "/usr/lib/gcc", "/usr/libexec/gcc", "as", "ld", NULL } },
  { "g++", { "/usr/lib/gcc", "/usr/libexec/gcc", "as", "ld", NULL } },
  { "clang", { "/usr/lib/llvm", "as", "ld", NULL } },
};

/* A compiler's own helper programs, when the compiler NAME is allowed. */
static void
add_toolchain_helpers (oci_strv *exec, const char *name, const char *path_env)
{
  for (size_t t = 0; t < N_ELEMENTS (toolchains); t++)
    if (strcmp (toolchains[t].tool, name) == 0)
      for (size_t h = 0; toolchains[t].helpers[h]; h++)
        {
          const char *helper = toolchains[t].helpers[h];
          if (helper[0] == '/')
            {
              if (access (helper, F_OK) == 0)
                oci_strv_push_unique (exec, helper);
            }
          else
            {
              /* Toolchain helpers are ELF programs, named here. */
              cleanup_free char *hr = which (helper, path_env);
              if (hr)
                {
                  oci_strv_push_unique (exec, hr);
                  cleanup_free char *hinterp = elf_interpreter (hr);
                  if (hinterp)
                    oci_strv_push_unique (exec, hinterp);
                }
            }
        }
}

/* allow_exec: the programs it names, what they need to run, and nothing
 * else. */
static int
allow_exec_paths (const hv_policy *p, const char *path_env, oci_strv *exec, hv_error **err)
{
  const char *file = p->file ? p->file : "policy";
  /* Every name first: a script's interpreter may come later. */
  cleanup_strv oci_strv allowed = { 0 };
  for (size_t i = 0; i < p->allow_exec.n; i++)
    {
      char *real = which (p->allow_exec.v[i], path_env);
      if (real == NULL)
        return hv_error_set (err, 0, "%s: process.allow_exec: \"%s\" not found in PATH", file, p->allow_exec.v[i]);
      oci_strv_push (&allowed, real);
      free (real);
    }
  for (size_t i = 0; i < p->allow_exec.n; i++)
    {
      if (add_binary (exec, allowed.v[i], p->allow_exec.v[i], &allowed, path_env, file, err) < 0)
        return -1;
      add_toolchain_helpers (exec, p->allow_exec.v[i], path_env);
    }
  return 0;
}

/* The shells in the bin directories (at most N), as stat results. */
static size_t
find_shells (struct stat *shell_st, size_t n)
{
  size_t n_shells = 0;
  for (size_t d = 0; bin_dirs[d]; d++)
    for (size_t s = 0; shell_names[s] && n_shells < n; s++)
      {
        cleanup_free char *path = xasprintf ("%s/%s", bin_dirs[d], shell_names[s]);
        if (stat (path, &shell_st[n_shells]) == 0)
          n_shells++;
      }
  return n_shells;
}

/* Every executable file in the directory REAL_DIR but the shells. */
static void
add_programs_but_shells (oci_strv *exec, const char *real_dir, const struct stat *shell_st, size_t n_shells)
{
  DIR *dir = opendir (real_dir);
  if (dir == NULL)
    return;
  struct dirent *de;
  while ((de = readdir (dir)))
    {
      if (de->d_name[0] == '.')
        continue;
      cleanup_free char *path = xasprintf ("%s/%s", real_dir, de->d_name);
      /* Not a link: REAL_DIR is canonical, so PATH is the real path and
       * the stat without following is the stat.  realpath, a readlink
       * per component, only for the links (a third of /usr/bin). */
      struct stat st;
      if (fstatat (dirfd (dir), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
        continue;
      bool link = S_ISLNK (st.st_mode);
      if (link && stat (path, &st) < 0)
        continue;
      if (!S_ISREG (st.st_mode) || !(st.st_mode & 0111))
        continue;
      bool shell = false;
      for (size_t sh = 0; sh < n_shells && !shell; sh++)
        shell = st.st_ino == shell_st[sh].st_ino && st.st_dev == shell_st[sh].st_dev;
      if (shell)
        continue;
      /* Landlock rules refuse links in their paths (a planted one
       * must not extend rights): the program's real path. */
      char real[PATH_MAX];
      if (!link)
        oci_strv_push (exec, path); /* block_shell_paths removes the copies */
      else if (realpath (path, real))
        oci_strv_push (exec, real);
    }
  closedir (dir);
}

/* block_shell alone: everything executable in the bin directories but
 * the shells, compared by inode. */
static void
block_shell_paths (oci_strv *exec)
{
  struct stat shell_st[32];
  size_t n_shells = find_shells (shell_st, N_ELEMENTS (shell_st));
  /* /bin is /usr/bin on merged-/usr systems: list each real directory once. */
  oci_strv seen_dirs = { 0 };
  for (size_t d = 0; bin_dirs[d]; d++)
    {
      char real_dir[PATH_MAX];
      if (realpath (bin_dirs[d], real_dir) == NULL)
        continue;
      bool seen = false;
      for (size_t i = 0; i < seen_dirs.n && !seen; i++)
        seen = strcmp (seen_dirs.v[i], real_dir) == 0;
      if (seen)
        continue;
      oci_strv_push (&seen_dirs, real_dir);
      add_programs_but_shells (exec, real_dir, shell_st, n_shells);
    }
  oci_strv_free (&seen_dirs);
  /* Helper programs live under the library directories. */
  static const char *const lib_dirs[] = { "/usr/lib", "/usr/libexec", "/usr/local/lib", "/lib64", "/opt", NULL };
  for (size_t d = 0; lib_dirs[d]; d++)
    {
      char real[PATH_MAX];
      if (realpath (lib_dirs[d], real))
        oci_strv_push (exec, real);
    }
  /* A thousand programs and more, some reached by several names: the
   * copies go in one sort, not a scan of the list per program. */
  oci_strv_dedup (exec);
}

int
hv_policy_exec_paths (const hv_policy *p, const char *path_env, oci_strv *exec, hv_error **err)
{
  if (p->allow_exec.n == 0 && !p->block_shell.value)
    {
      oci_strv_push_unique (exec, "/");
      return 0;
    }
  if (p->allow_exec.n > 0)
    return allow_exec_paths (p, path_env, exec, err);
  block_shell_paths (exec);
  return 0;
}

/* Is PATH (canonical) WRITABLE[i] or below one? */
static bool
under_writable (const char *path, const oci_strv *writable)
{
  for (size_t i = 0; i < writable->n; i++)
    {
      size_t l = strlen (writable->v[i]);
      if (strncmp (path, writable->v[i], l) == 0 && (path[l] == '/' || path[l] == '\0' || l == 1))
        return true;
    }
  return false;
}

static bool
same_file (const struct stat *a, const struct stat *b)
{
  return a->st_ino == b->st_ino && a->st_dev == b->st_dev;
}

int
hv_policy_shell_masks (const hv_policy *p, const char *path_env, const oci_strv *writable, oci_strv *masked,
                       hv_error **err)
{
  (void) err;
  /* Under allow_exec too: a shell it does not name may not run, and the
   * loader would run it. */
  if (!p->block_shell.value && p->allow_exec.n == 0)
    return 0;
  struct stat allowed[64];
  size_t n_allowed = 0;
  for (size_t i = 0; i < p->allow_exec.n && n_allowed < N_ELEMENTS (allowed); i++)
    {
      cleanup_free char *real = which (p->allow_exec.v[i], path_env);
      if (real && stat (real, &allowed[n_allowed]) == 0)
        n_allowed++;
    }
  /* The directories to look in: the system's and the absolute PATH
   * entries, canonical, none the sandbox can write (what it writes there
   * is on a noexec mount, and a link it planted must not choose what is
   * masked). */
  cleanup_strv oci_strv dirs = { 0 };
  cleanup_free char *copy = xstrdup (path_env ? path_env : "");
  size_t n_fixed = 0;
  while (bin_dirs[n_fixed])
    n_fixed++;
  char *save = NULL;
  char *entry = strtok_r (copy, ":", &save);
  for (size_t d = 0; d < n_fixed || entry; d++)
    {
      const char *dir = d < n_fixed ? bin_dirs[d] : entry;
      if (d >= n_fixed)
        entry = strtok_r (NULL, ":", &save);
      char real[PATH_MAX];
      if (dir[0] != '/' || realpath (dir, real) == NULL || under_writable (real, writable))
        continue;
      oci_strv_push_unique (&dirs, real);
    }
  /* The shells, by inode: every name of one (symlink or hard link) is
   * masked, so the loader cannot map it either. */
  struct stat shells[64];
  size_t n_shells = 0;
  for (size_t d = 0; d < dirs.n; d++)
    for (size_t s = 0; shell_names[s] && n_shells < N_ELEMENTS (shells); s++)
      {
        cleanup_free char *path = xasprintf ("%s/%s", dirs.v[d], shell_names[s]);
        cleanup_free char *real = realpath (path, NULL);
        if (real == NULL || under_writable (real, writable) || stat (real, &shells[n_shells]) < 0
            || !S_ISREG (shells[n_shells].st_mode))
          continue;
        bool named = false;
        for (size_t a = 0; a < n_allowed && !named; a++)
          named = same_file (&allowed[a], &shells[n_shells]);
        if (!named)
          n_shells++;
      }
  for (size_t d = 0; d < dirs.n; d++)
    {
      DIR *dir = opendir (dirs.v[d]);
      struct dirent *de;
      while (dir && (de = readdir (dir)))
        {
          struct stat st;
          if (de->d_name[0] == '.' || fstatat (dirfd (dir), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0
              || !S_ISREG (st.st_mode))
            continue;
          for (size_t sh = 0; sh < n_shells; sh++)
            if (same_file (&st, &shells[sh]))
              {
                cleanup_free char *path = xasprintf ("%s/%s", dirs.v[d], de->d_name);
                oci_strv_push_unique (masked, path);
                break;
              }
        }
      if (dir)
        closedir (dir);
    }
  return 0;
}
