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

static void
add_binary (oci_strv *exec, const char *real)
{
  oci_strv_push_unique (exec, real);
  cleanup_free char *interp = elf_interpreter (real);
  if (interp)
    oci_strv_push_unique (exec, interp);
  /* A script's interpreter must be executable too. */
  cleanup_close int fd = open (real, O_RDONLY | O_CLOEXEC);
  char head[256];
  ssize_t n = fd >= 0 ? read (fd, head, sizeof (head) - 1) : -1;
  if (n > 2 && head[0] == '#' && head[1] == '!')
    {
      head[n] = '\0';
      char *p = head + 2;
      while (*p == ' ')
        p++;
      p[strcspn (p, " \n")] = '\0';
      cleanup_free char *ireal = realpath (p, NULL);
      if (ireal && strcmp (ireal, real) != 0)
        add_binary (exec, ireal);
    }
}

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

int
hv_policy_exec_paths (const hv_policy *p, const char *path_env, oci_strv *exec, hv_error **err)
{
  if (p->allow_exec.n == 0 && !p->block_shell.value)
    {
      oci_strv_push_unique (exec, "/");
      return 0;
    }
  if (p->allow_exec.n > 0)
    {
      for (size_t i = 0; i < p->allow_exec.n; i++)
        {
          cleanup_free char *real = which (p->allow_exec.v[i], path_env);
          if (real == NULL)
            return hv_error_set (err, 0, "%s: process.allow_exec: \"%s\" not found in PATH", p->file ? p->file : "policy",
                                 p->allow_exec.v[i]);
          add_binary (exec, real);
          for (size_t t = 0; t < N_ELEMENTS (toolchains); t++)
            if (strcmp (toolchains[t].tool, p->allow_exec.v[i]) == 0)
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
                      cleanup_free char *hr = which (helper, path_env);
                      if (hr)
                        add_binary (exec, hr);
                    }
                }
        }
      return 0;
    }
  /* block_shell alone: everything executable in the bin directories but
   * the shells, compared by inode. */
  struct stat shell_st[32];
  size_t n_shells = 0;
  static const char *const shell_names[] = { "sh", "bash", "dash", "zsh", "ksh", "mksh", "fish", "csh", "tcsh",
                                             "ash", "busybox", "rbash", NULL };
  static const char *const bin_dirs[] = { "/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin",
                                          NULL };
  for (size_t d = 0; bin_dirs[d]; d++)
    for (size_t s = 0; shell_names[s] && n_shells < N_ELEMENTS (shell_st); s++)
      {
        cleanup_free char *path = xasprintf ("%s/%s", bin_dirs[d], shell_names[s]);
        if (stat (path, &shell_st[n_shells]) == 0)
          n_shells++;
      }
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
      DIR *dir = opendir (real_dir);
      if (dir == NULL)
        continue;
      struct dirent *de;
      while ((de = readdir (dir)))
        {
          if (de->d_name[0] == '.')
            continue;
          cleanup_free char *path = xasprintf ("%s/%s", real_dir, de->d_name);
          struct stat st;
          if (stat (path, &st) < 0 || !S_ISREG (st.st_mode) || !(st.st_mode & 0111))
            continue;
          bool shell = false;
          for (size_t sh = 0; sh < n_shells && !shell; sh++)
            shell = st.st_ino == shell_st[sh].st_ino && st.st_dev == shell_st[sh].st_dev;
          /* Landlock rules refuse links in their paths (a planted one
           * must not extend rights): the program's real path. */
          char real[PATH_MAX];
          if (!shell && realpath (path, real))
            oci_strv_push_unique (exec, real);
        }
      closedir (dir);
    }
  oci_strv_free (&seen_dirs);
  /* Helper programs live under the library directories. */
  static const char *const lib_dirs[] = { "/usr/lib", "/usr/libexec", "/usr/local/lib", "/lib64", "/opt", NULL };
  for (size_t d = 0; lib_dirs[d]; d++)
    {
      char real[PATH_MAX];
      if (realpath (lib_dirs[d], real))
        oci_strv_push_unique (exec, real);
    }
  return 0;
}
