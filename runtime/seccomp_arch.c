#include "config.h"
#include "seccomp_arch.h"

#include <seccomp.h>
#include <string.h>
#include <sys/utsname.h>

#include "utils.h"

/* runtime-spec's name -> libseccomp's ("SCMP_ARCH_X86_64" -> "x86_64"). */
static const struct
{
  const char *oci, *scmp;
} arches[] = { { "SCMP_ARCH_X86", "x86" },         { "SCMP_ARCH_X86_64", "x86_64" },
               { "SCMP_ARCH_X32", "x32" },         { "SCMP_ARCH_ARM", "arm" },
               { "SCMP_ARCH_AARCH64", "aarch64" }, { "SCMP_ARCH_MIPS", "mips" },
               { "SCMP_ARCH_MIPS64", "mips64" },   { "SCMP_ARCH_MIPS64N32", "mips64n32" },
               { "SCMP_ARCH_MIPSEL", "mipsel" },   { "SCMP_ARCH_MIPSEL64", "mipsel64" },
               { "SCMP_ARCH_MIPSEL64N32", "mipsel64n32" }, { "SCMP_ARCH_PPC", "ppc" },
               { "SCMP_ARCH_PPC64", "ppc64" },     { "SCMP_ARCH_PPC64LE", "ppc64le" },
               { "SCMP_ARCH_S390", "s390" },       { "SCMP_ARCH_S390X", "s390x" },
               { "SCMP_ARCH_PARISC", "parisc" },   { "SCMP_ARCH_PARISC64", "parisc64" },
               { "SCMP_ARCH_RISCV64", "riscv64" }, { "SCMP_ARCH_LOONGARCH64", "loongarch64" },
               { "SCMP_ARCH_M68K", "m68k" },       { "SCMP_ARCH_SH", "sh" },
               { "SCMP_ARCH_SHEB", "sheb" } };

uint32_t
hv_seccomp_arch_token (const char *name)
{
  for (size_t i = 0; i < N_ELEMENTS (arches); i++)
    if (strcmp (arches[i].oci, name) == 0)
      return seccomp_arch_resolve_name (arches[i].scmp);
  return 0;
}

bool
hv_seccomp_arch_supported (const char *name)
{
  return hv_seccomp_arch_token (name) != 0;
}

const char *
hv_seccomp_arch_name (uint32_t token, hv_error **err)
{
  for (size_t i = 0; token != 0 && i < N_ELEMENTS (arches); i++)
    if (seccomp_arch_resolve_name (arches[i].scmp) == token)
      return arches[i].oci;
  /* The machine's name says which architecture it is, where libseccomp's
   * token is only a number. */
  struct utsname u;
  hv_error_set (err, 0, "seccomp: libseccomp's architecture 0x%x (machine %s) has no SCMP_ARCH_ name in haven's table",
                token, uname (&u) == 0 ? u.machine : "unknown");
  return NULL;
}

const char *
hv_seccomp_arch_native (hv_error **err)
{
  return hv_seccomp_arch_name (seccomp_arch_native (), err);
}
