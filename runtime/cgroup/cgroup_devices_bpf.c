#include "config.h"
#include "cgroup_devices_bpf.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "utils.h"

/* Instruction encoders, after the kernel's BPF_* instruction macros. */
#define INSN(c, d, s, o, i) ((struct bpf_insn){ .code = (c), .dst_reg = (d), .src_reg = (s), .off = (o), .imm = (i) })
#define LDX_W(dst, src, off) INSN (BPF_LDX | BPF_MEM | BPF_W, dst, src, off, 0)
#define ALU32_IMM(op, dst, imm) INSN (BPF_ALU | (op) | BPF_K, dst, 0, 0, imm)
#define MOV32_REG(dst, src) INSN (BPF_ALU | BPF_MOV | BPF_X, dst, src, 0, 0)
#define JMP_IMM(op, dst, imm) INSN (BPF_JMP | (op) | BPF_K, dst, 0, 0, imm)
#define JA() INSN (BPF_JMP | BPF_JA, 0, 0, 0, 0)
#define EXIT() INSN (BPF_JMP | BPF_EXIT, 0, 0, 0, 0)

/* Registers: R1 the context, then a scratch register; R2 the device type,
 * R3 the requested access, R4 major, R5 minor. */
enum
{
  R0 = BPF_REG_0,
  R1 = BPF_REG_1,
  R_TYPE = BPF_REG_2,
  R_ACCESS = BPF_REG_3,
  R_MAJOR = BPF_REG_4,
  R_MINOR = BPF_REG_5,
};

/* Enough for any real config (Docker's has about 20 rules) and far below
 * the 16-bit jump offsets' reach. */
#define MAX_RULES 1000

/* A program being assembled: jumps name a label, resolved at the end. */
struct asm_prog
{
  struct bpf_insn *v;
  size_t n, cap;
  size_t *fix_at, *fix_label; /* jump instruction, label it targets */
  size_t n_fix;
  size_t *label_at;
  size_t n_labels;
};

static void
emit (struct asm_prog *p, struct bpf_insn insn)
{
  if (p->n == p->cap)
    {
      p->cap = p->cap ? p->cap * 2 : 64;
      p->v = xrealloc (p->v, p->cap * sizeof (*p->v));
    }
  p->v[p->n++] = insn;
}

static size_t
new_label (struct asm_prog *p)
{
  p->label_at = xrealloc (p->label_at, (p->n_labels + 1) * sizeof (*p->label_at));
  p->label_at[p->n_labels] = SIZE_MAX;
  return p->n_labels++;
}

static void
place_label (struct asm_prog *p, size_t label)
{
  p->label_at[label] = p->n;
}

/* A jump to `label`, its offset filled in by resolve(). */
static void
emit_jump (struct asm_prog *p, struct bpf_insn insn, size_t label)
{
  p->fix_at = xrealloc (p->fix_at, (p->n_fix + 1) * sizeof (*p->fix_at));
  p->fix_label = xrealloc (p->fix_label, (p->n_fix + 1) * sizeof (*p->fix_label));
  p->fix_at[p->n_fix] = p->n;
  p->fix_label[p->n_fix++] = label;
  emit (p, insn);
}

static int
resolve (struct asm_prog *p, hv_error **err)
{
  for (size_t i = 0; i < p->n_fix; i++)
    {
      size_t at = p->fix_at[i], target = p->label_at[p->fix_label[i]];
      if (target == SIZE_MAX || target <= at || target - at - 1 > INT16_MAX)
        return hv_error_set (err, 0, "device program: jump from %zu out of range", at);
      p->v[at].off = (int16_t) (target - at - 1);
    }
  return 0;
}

static void
asm_free (struct asm_prog *p)
{
  free (p->v);
  free (p->fix_at);
  free (p->fix_label);
  free (p->label_at);
}

/* One rule, for the access section ending at `next_access`. */
static void
emit_rule (struct asm_prog *p, const struct hv_dev_rule *r, size_t next_access)
{
  size_t next_rule = new_label (p);
  if (r->type != 'a')
    {
      emit_jump (p, JMP_IMM (BPF_JNE, R_TYPE, r->type == 'b' ? BPF_DEVCG_DEV_BLOCK : BPF_DEVCG_DEV_CHAR), next_rule);
      if (r->major >= 0)
        emit_jump (p, JMP_IMM (BPF_JNE, R_MAJOR, (int32_t) r->major), next_rule);
      if (r->minor >= 0)
        emit_jump (p, JMP_IMM (BPF_JNE, R_MINOR, (int32_t) r->minor), next_rule);
    }
  if (r->allow)
    emit_jump (p, JA (), next_access);
  else
    {
      emit (p, ALU32_IMM (BPF_MOV, R0, 0));
      emit (p, EXIT ());
    }
  place_label (p, next_rule);
}

int
hv_dev_bpf_generate (const struct hv_dev_rule *rules, size_t n, struct bpf_insn **out, size_t *n_out, hv_error **err)
{
  static const unsigned accesses[] = { HV_DEV_MKNOD, HV_DEV_READ, HV_DEV_WRITE };
  if (n > MAX_RULES)
    return hv_error_set (err, 0, "%zu device rules: at most %d are supported", n, MAX_RULES);
  for (size_t i = 0; i < n; i++)
    if (rules[i].major > INT32_MAX || rules[i].minor > INT32_MAX)
      return hv_error_set (err, 0, "device rule %lld:%lld: number out of range", (long long) rules[i].major,
                           (long long) rules[i].minor);
  struct asm_prog p = { 0 };
  /* struct bpf_cgroup_dev_ctx { u32 access_type; u32 major; u32 minor; }
   * with access_type = access << 16 | type. */
  emit (&p, LDX_W (R_TYPE, R1, 0));
  emit (&p, ALU32_IMM (BPF_AND, R_TYPE, 0xFFFF));
  emit (&p, LDX_W (R_ACCESS, R1, 0));
  emit (&p, ALU32_IMM (BPF_RSH, R_ACCESS, 16));
  emit (&p, LDX_W (R_MAJOR, R1, 4));
  emit (&p, LDX_W (R_MINOR, R1, 8));
  for (size_t a = 0; a < N_ELEMENTS (accesses); a++)
    {
      size_t next_access = new_label (&p);
      /* Skip the section unless this access is requested. */
      emit (&p, MOV32_REG (R1, R_ACCESS));
      emit (&p, ALU32_IMM (BPF_AND, R1, (int32_t) accesses[a]));
      emit_jump (&p, JMP_IMM (BPF_JEQ, R1, 0), next_access);
      for (size_t i = n; i-- > 0;)
        {
          if (!(rules[i].access & accesses[a]))
            continue;
          emit_rule (&p, &rules[i], next_access);
          /* A type "a" rule matches everything: earlier rules are
           * unreachable, and the verifier refuses unreachable code. */
          if (rules[i].type == 'a')
            break;
        }
      place_label (&p, next_access);
    }
  emit (&p, ALU32_IMM (BPF_MOV, R0, 1));
  emit (&p, EXIT ());
  if (resolve (&p, err) < 0)
    {
      asm_free (&p);
      return -1;
    }
  *out = steal_pointer (&p.v);
  *n_out = p.n;
  asm_free (&p);
  return 0;
}

static int
sys_bpf (int cmd, union bpf_attr *attr)
{
  return (int) syscall (SYS_bpf, cmd, attr, sizeof (*attr));
}

static int
load (const struct bpf_insn *insns, size_t n, hv_error **err)
{
  union bpf_attr attr;
  memset (&attr, 0, sizeof (attr));
  attr.prog_type = BPF_PROG_TYPE_CGROUP_DEVICE;
  attr.insns = (uint64_t) (uintptr_t) insns;
  attr.insn_cnt = (uint32_t) n;
  /* The program calls no helper, so the license only has to be there. */
  attr.license = (uint64_t) (uintptr_t) "GPL";
  int fd = sys_bpf (BPF_PROG_LOAD, &attr);
  if (fd >= 0)
    return fd;
  int e = errno;
  if (e == EPERM || e == ENOSYS)
    return hv_error_set (err, e, "load the device eBPF program");
  /* Load again with the verifier's log to say why. */
  cleanup_free char *log = xmalloc0 (65536);
  attr.log_buf = (uint64_t) (uintptr_t) log;
  attr.log_size = 65536;
  attr.log_level = 1;
  fd = sys_bpf (BPF_PROG_LOAD, &attr);
  if (fd >= 0)
    return fd;
  size_t l = strlen (log);
  while (l > 0 && log[l - 1] == '\n')
    log[--l] = '\0';
  const char *last = strrchr (log, '\n');
  return hv_error_set (err, e, "load the device eBPF program (verifier: %s)",
                       l ? (last ? last + 1 : log) : "no log");
}

/* Ids of the device programs attached to the cgroup itself. */
static int
query (int cgfd, uint32_t **ids, size_t *n, hv_error **err)
{
  uint32_t cap = 16;
  *ids = NULL;
  *n = 0;
  for (int attempt = 0; attempt < 8; attempt++, cap *= 4)
    {
      union bpf_attr attr;
      memset (&attr, 0, sizeof (attr));
      free (*ids);
      *ids = xmalloc0 (cap * sizeof (**ids));
      attr.query.target_fd = (uint32_t) cgfd;
      attr.query.attach_type = BPF_CGROUP_DEVICE;
      attr.query.prog_ids = (uint64_t) (uintptr_t) *ids;
      attr.query.prog_cnt = cap;
      if (sys_bpf (BPF_PROG_QUERY, &attr) == 0)
        {
          *n = attr.query.prog_cnt;
          return 0;
        }
      if (errno != ENOSPC)
        {
          int e = errno;
          free (*ids);
          *ids = NULL;
          return hv_error_set (err, e, "query the cgroup's device programs");
        }
    }
  free (*ids);
  *ids = NULL;
  return hv_error_set (err, ENOSPC, "query the cgroup's device programs");
}

static int
open_cgroup (const char *dir, hv_error **err)
{
  int fd = open (dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0)
    return hv_error_set (err, errno, "open cgroup %s", dir);
  return fd;
}

int
hv_dev_bpf_count (const char *cgroup_dir, size_t *count, hv_error **err)
{
  cleanup_close int cgfd = open_cgroup (cgroup_dir, err);
  cleanup_free uint32_t *ids = NULL;
  if (cgfd < 0)
    return -1;
  return query (cgfd, &ids, count, err);
}

int
hv_dev_bpf_apply (const char *cgroup_dir, const struct hv_dev_rule *rules, size_t n, hv_error **err)
{
  cleanup_free struct bpf_insn *insns = NULL;
  cleanup_free uint32_t *old = NULL;
  size_t n_insns, n_old = 0;
  if (hv_dev_bpf_generate (rules, n, &insns, &n_insns, err) < 0)
    return -1;
  cleanup_close int cgfd = open_cgroup (cgroup_dir, err);
  if (cgfd < 0)
    return -1;
  if (query (cgfd, &old, &n_old, err) < 0)
    return -1;
  cleanup_close int prog = load (insns, n_insns, err);
  if (prog < 0)
    return -1;
  union bpf_attr attr;
  memset (&attr, 0, sizeof (attr));
  attr.target_fd = (uint32_t) cgfd;
  attr.attach_bpf_fd = (uint32_t) prog;
  attr.attach_type = BPF_CGROUP_DEVICE;
  attr.attach_flags = BPF_F_ALLOW_MULTI;
  if (sys_bpf (BPF_PROG_ATTACH, &attr) < 0)
    return hv_error_set (err, errno, "attach the device eBPF program to %s", cgroup_dir);
  for (size_t i = 0; i < n_old; i++)
    {
      memset (&attr, 0, sizeof (attr));
      attr.prog_id = old[i];
      cleanup_close int ofd = sys_bpf (BPF_PROG_GET_FD_BY_ID, &attr);
      if (ofd < 0)
        {
          if (errno == ENOENT)
            continue; /* detached meanwhile */
          return hv_error_set (err, errno, "open the old device program %u of %s", old[i], cgroup_dir);
        }
      memset (&attr, 0, sizeof (attr));
      attr.target_fd = (uint32_t) cgfd;
      attr.attach_bpf_fd = (uint32_t) ofd;
      attr.attach_type = BPF_CGROUP_DEVICE;
      if (sys_bpf (BPF_PROG_DETACH, &attr) < 0 && errno != ENOENT)
        return hv_error_set (err, errno, "detach the old device program %u from %s", old[i], cgroup_dir);
    }
  return 0;
}
