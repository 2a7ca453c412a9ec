/* Unit tests of the cgroup value conversions (cgroup_values.c), the device
 * rule list (cgroup_devices.c) and the eBPF device program generator
 * (cgroup_devices_bpf.c).  The generated program is run by a small
 * interpreter of the instructions it uses and compared with the rule
 * list's reference verdict on every device, access and rule set tried. */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "cgroup_devices.h"
#include "cgroup_devices_bpf.h"
#include "cgroup_resources.h"
#include "cgroup_values.h"
#include "sd_bus_lib.h"

static void
expect_error (int rc, hv_error **err, const char *expected)
{
  assert_int_equal (rc, -1);
  assert_non_null (*err);
  if (strcmp ((*err)->msg, expected) != 0)
    fail_msg ("expected \"%s\"\n          got \"%s\"", expected, (*err)->msg);
  hv_error_free (err);
}

/* ------------------------------------------------------------------ */
/* Conversions                                                         */
/* ------------------------------------------------------------------ */

static void
test_shares_to_weight (void **state)
{
  (void) state;
  assert_int_equal (hv_cg_shares_to_weight (0), 0); /* unset */
  assert_int_equal (hv_cg_shares_to_weight (1), 1);
  assert_int_equal (hv_cg_shares_to_weight (2), 1);
  assert_int_equal (hv_cg_shares_to_weight (1024), 100); /* default to default */
  assert_int_equal (hv_cg_shares_to_weight (262144), 10000);
  assert_int_equal (hv_cg_shares_to_weight (1000000), 10000);
  /* Values of runc's curve (its test suite's awk formula). */
  assert_int_equal (hv_cg_shares_to_weight (100), 17);
  assert_int_equal (hv_cg_shares_to_weight (512), 59);
  assert_int_equal (hv_cg_shares_to_weight (2048), 174);
  /* Monotonic over the whole range. */
  for (uint64_t s = 3, prev = 1; s < 262144; s = s * 3 / 2 + 1)
    {
      uint64_t w = hv_cg_shares_to_weight (s);
      assert_true (w >= prev && w >= 1 && w <= 10000);
      prev = w;
    }
}

static void
test_blkio_to_io_weight (void **state)
{
  (void) state;
  assert_int_equal (hv_cg_blkio_to_io_weight (0), 0);
  assert_int_equal (hv_cg_blkio_to_io_weight (10), 1);
  assert_int_equal (hv_cg_blkio_to_io_weight (100), 910);
  assert_int_equal (hv_cg_blkio_to_io_weight (500), 4950);
  assert_int_equal (hv_cg_blkio_to_io_weight (1000), 10000);
  /* Out of blkio's range: clamped rather than wrapped. */
  assert_int_equal (hv_cg_blkio_to_io_weight (5), 1);
  assert_int_equal (hv_cg_blkio_to_io_weight (5000), 10000);
}

static void
set_memory (oci_resources *r, bool limit_set, int64_t limit, bool swap_set, int64_t swap)
{
  memset (r, 0, sizeof (*r));
  r->present = r->memory.present = true;
  r->memory.limit = (oci_opt_i64){ limit_set, limit };
  r->memory.swap = (oci_opt_i64){ swap_set, swap };
}

static const char *
swap_v2 (bool limit_set, int64_t limit, bool swap_set, int64_t swap)
{
  static char buf[32];
  oci_resources r;
  hv_error *err = NULL;
  set_memory (&r, limit_set, limit, swap_set, swap);
  if (hv_cg_swap_v2 (&r, buf, sizeof (buf), &err) < 0)
    {
      snprintf (buf, sizeof (buf), "error");
      hv_error_free (&err);
    }
  return buf;
}

static void
test_swap_v2 (void **state)
{
  (void) state;
  assert_string_equal (swap_v2 (true, 100, true, 300), "200");
  assert_string_equal (swap_v2 (true, 100, true, 100), "0"); /* no swap */
  assert_string_equal (swap_v2 (true, 100, true, -1), "max");
  assert_string_equal (swap_v2 (true, 100, false, 0), "");     /* swap untouched */
  assert_string_equal (swap_v2 (true, -1, false, 0), "max");   /* unlimited memory: swap too */
  assert_string_equal (swap_v2 (true, -1, true, 500), "500");  /* taken as is */
  assert_string_equal (swap_v2 (false, 0, true, 500), "error"); /* no limit to subtract */
  assert_string_equal (swap_v2 (true, 300, true, 100), "error");
  assert_string_equal (swap_v2 (true, -5, true, 100), "error");

  oci_resources r;
  hv_error *err = NULL;
  char buf[32];
  set_memory (&r, true, 300, true, 100);
  expect_error (hv_cg_swap_v2 (&r, buf, sizeof (buf), &err), &err,
                "memory.swap 100 is below memory.limit 300 (swap counts memory+swap)");
  set_memory (&r, false, 0, true, 100);
  expect_error (hv_cg_swap_v2 (&r, buf, sizeof (buf), &err), &err,
                "memory.swap 100 needs a memory.limit (v2 limits swap apart from memory)");
  set_memory (&r, false, 0, false, 0);
  r.memory.swappiness = (oci_opt_u64){ true, 101 };
  expect_error (hv_cg_check_memory (&r, &err), &err, "memory.swappiness 101 is out of range 0-100");
}

static void
test_cpu_max (void **state)
{
  (void) state;
  oci_resources r;
  memset (&r, 0, sizeof (r));
  assert_null (hv_cg_cpu_max (&r));
  r.cpu.quota = (oci_opt_i64){ true, 50000 };
  char *s = hv_cg_cpu_max (&r);
  assert_string_equal (s, "50000 100000");
  free (s);
  r.cpu.period = (oci_opt_u64){ true, 250000 };
  s = hv_cg_cpu_max (&r);
  assert_string_equal (s, "50000 250000");
  free (s);
  r.cpu.quota = (oci_opt_i64){ true, -1 };
  s = hv_cg_cpu_max (&r);
  assert_string_equal (s, "max 250000");
  free (s);
  r.cpu.quota = (oci_opt_i64){ true, 0 };
  r.cpu.period = (oci_opt_u64){ true, 0 };
  assert_null (hv_cg_cpu_max (&r)); /* zeros mean unset, as in runc */
}

static void
test_io_max_lines (void **state)
{
  (void) state;
  oci_blkio_device rbps[] = { { 8, 0, { 0 }, { 0 }, 1048576 }, { 8, 16, { 0 }, { 0 }, 0 } };
  oci_blkio_device wbps[] = { { 8, 16, { 0 }, { 0 }, 2048 } };
  oci_blkio_device riops[] = { { 8, 0, { 0 }, { 0 }, 100 }, { 8, 0, { 0 }, { 0 }, 120 } };
  oci_blkio_device wiops[] = { { 259, 3, { 0 }, { 0 }, 7 } };
  oci_resources r;
  memset (&r, 0, sizeof (r));
  r.block_io.throttle_read_bps = (oci_blkio_devices){ 2, rbps };
  r.block_io.throttle_write_bps = (oci_blkio_devices){ 1, wbps };
  r.block_io.throttle_read_iops = (oci_blkio_devices){ 2, riops };
  r.block_io.throttle_write_iops = (oci_blkio_devices){ 1, wiops };
  char **lines = hv_cg_io_max_lines (&r);
  /* One line per device, in order of appearance; keys in a fixed order;
   * rate 0 = no limit; a later entry for the same key wins. */
  assert_string_equal (lines[0], "8:0 rbps=1048576 riops=120");
  assert_string_equal (lines[1], "8:16 rbps=max wbps=2048");
  assert_string_equal (lines[2], "259:3 wiops=7");
  assert_null (lines[3]);
  for (size_t i = 0; lines[i]; i++)
    free (lines[i]);
  free (lines);
  memset (&r, 0, sizeof (r));
  lines = hv_cg_io_max_lines (&r);
  assert_null (lines[0]);
  free (lines);
}

static void
test_page_sizes (void **state)
{
  (void) state;
  static const char *const good[] = { "2MB", "1GB", "64KB", "16GB", "32MB" };
  static const char *const bad[] = { "", "MB", "2M", "2mb", "2MBB", "2 MB", "../2MB", "2MB/x", "2XB", "99999999999MB" };
  hv_error *err = NULL;
  for (size_t i = 0; i < sizeof (good) / sizeof (good[0]); i++)
    assert_int_equal (hv_cg_check_page_size (good[i], &err), 0);
  for (size_t i = 0; i < sizeof (bad) / sizeof (bad[0]); i++)
    {
      assert_int_equal (hv_cg_check_page_size (bad[i], &err), -1);
      hv_error_free (&err);
    }
  expect_error (hv_cg_check_page_size ("2M", &err), &err, "page size \"2M\" is not of the form 2MB, 1GB or 64KB");
}

static void
test_unified_keys (void **state)
{
  (void) state;
  static const char *const good[] = { "memory.high", "io.max", "cpu.weight.nice", "hugetlb.2MB.max",
                                      "cgroup.max.depth", "cgroup.max.descendants", "memory.oom.group" };
  hv_error *err = NULL;
  for (size_t i = 0; i < sizeof (good) / sizeof (good[0]); i++)
    if (hv_cg_check_unified_key (good[i], &err) < 0)
      fail_msg ("%s refused: %s", good[i], err->msg);
  expect_error (hv_cg_check_unified_key ("cgroup.procs", &err), &err,
                "unified key \"cgroup.procs\" is managed by the runtime and cannot be set");
  static const char *const core[] = { "cgroup.threads", "cgroup.subtree_control", "cgroup.type", "cgroup.kill",
                                      "cgroup.freeze", "cgroup.events" };
  for (size_t i = 0; i < sizeof (core) / sizeof (core[0]); i++)
    {
      assert_int_equal (hv_cg_check_unified_key (core[i], &err), -1);
      hv_error_free (&err);
    }
  expect_error (hv_cg_check_unified_key ("../memory.max", &err), &err,
                "unified key \"../memory.max\" must be a file name (no slashes)");
  expect_error (hv_cg_check_unified_key ("..", &err), &err, "unified key \"..\" must be a file name (no slashes)");
  expect_error (hv_cg_check_unified_key ("", &err), &err, "unified key \"\" must be a file name (no slashes)");
  expect_error (hv_cg_check_unified_key ("memory", &err), &err,
                "unified key \"memory\" must be in the form CONTROLLER.PARAMETER");
  expect_error (hv_cg_check_unified_key (".high", &err), &err,
                "unified key \".high\" must be in the form CONTROLLER.PARAMETER");
  expect_error (hv_cg_check_unified_key ("memory.", &err), &err,
                "unified key \"memory.\" must be in the form CONTROLLER.PARAMETER");
  expect_error (hv_cg_check_unified_key ("memory high", &err), &err,
                "unified key \"memory high\" contains a character no cgroup file name has");
}

static void
test_names_and_rdma (void **state)
{
  (void) state;
  hv_error *err = NULL;
  assert_int_equal (hv_cg_check_name ("rdma device", "mlx5_0", &err), 0);
  expect_error (hv_cg_check_name ("network interface", "eth0 1\nlo", &err), &err,
                "network interface name \"eth0 1\nlo\" contains whitespace or control characters");
  expect_error (hv_cg_check_name ("rdma device", "", &err), &err, "rdma device name is empty");
  oci_rdma_limit l = { (char *) "mlx5_0", { true, 2 }, { false, 0 } };
  char *s = hv_cg_rdma_line (&l);
  assert_string_equal (s, "mlx5_0 hca_handle=2");
  free (s);
  l.hca_objects = (oci_opt_u64){ true, 1000 };
  s = hv_cg_rdma_line (&l);
  assert_string_equal (s, "mlx5_0 hca_handle=2 hca_object=1000");
  free (s);
  l.hca_handles.set = l.hca_objects.set = false;
  assert_null (hv_cg_rdma_line (&l));
}

static void
test_wanted_controllers (void **state)
{
  (void) state;
  oci_resources r;
  memset (&r, 0, sizeof (r));
  char **v = hv_cg_wanted_controllers (&r);
  assert_string_equal (v[0], "cpu");
  assert_string_equal (v[1], "io");
  assert_string_equal (v[2], "memory");
  assert_string_equal (v[3], "pids");
  assert_null (v[4]);
  hv_cg_controllers_free (v);

  oci_hugepage_limit h = { (char *) "2MB", 1 };
  oci_kv kv[] = { { (char *) "misc.max", (char *) "x" }, { (char *) "memory.high", (char *) "1" },
                  { (char *) "cgroup.max.depth", (char *) "2" }, { (char *) "misc.min", (char *) "y" } };
  r.cpu.cpus = (char *) "0";
  r.n_hugepage_limits = 1;
  r.hugepage_limits = &h;
  r.n_rdma = 1;
  r.unified = (oci_kv_list){ 4, kv };
  v = hv_cg_wanted_controllers (&r);
  static const char *const expected[] = { "cpu", "io", "memory", "pids", "cpuset", "hugetlb", "rdma", "misc", NULL };
  for (size_t i = 0; expected[i]; i++)
    assert_string_equal (v[i], expected[i]);
  assert_null (v[8]);
  hv_cg_controllers_free (v);
}

static int64_t
size_of (const char *s)
{
  int64_t v = -99;
  if (hv_cg_parse_size (s, &v) < 0)
    return -99;
  return v;
}

static void
test_parse_size (void **state)
{
  (void) state;
  assert_int_equal (size_of ("0"), 0);
  assert_int_equal (size_of ("-1"), -1);
  assert_int_equal (size_of ("1048576"), 1048576);
  assert_int_equal (size_of ("512k"), 524288);
  assert_int_equal (size_of ("64m"), 67108864);
  assert_int_equal (size_of ("64M"), 67108864);
  assert_int_equal (size_of ("64MB"), 67108864);
  assert_int_equal (size_of ("64MiB"), 67108864);
  assert_int_equal (size_of ("1g"), 1073741824);
  assert_int_equal (size_of ("1.5g"), 1610612736);
  assert_int_equal (size_of ("2t"), 2199023255552LL);
  assert_int_equal (size_of ("100b"), 100);
  assert_int_equal (size_of ("1 k"), 1024);
  assert_int_equal (size_of (""), -99);
  assert_int_equal (size_of ("-2"), -99);
  assert_int_equal (size_of ("m"), -99);
  assert_int_equal (size_of ("1q"), -99);
  assert_int_equal (size_of ("1.g"), -99);
  assert_int_equal (size_of ("99999999999999999999"), -99);
  assert_int_equal (size_of ("9000000p"), -99); /* beyond int64 */
}

/* ------------------------------------------------------------------ */
/* Device rules                                                        */
/* ------------------------------------------------------------------ */

#define N_DEFAULTS 12

static void
test_rules_build (void **state)
{
  (void) state;
  oci_linux l;
  memset (&l, 0, sizeof (l));
  struct hv_dev_rule *rules = NULL;
  assert_int_equal (hv_dev_rules_build (&l, &rules), 0); /* no rules: no device cgroup */
  assert_null (rules);

  oci_device_rule cfg[] = {
    { false, NULL, { 0 }, { 0 }, (char *) "rwm" },                         /* deny all */
    { true, (char *) "c", { true, 10 }, { true, 200 }, (char *) "rw" },    /* tun */
    { true, (char *) "b", { true, -1 }, { false, 0 }, (char *) "m" },      /* negative = any */
    { false, (char *) "a", { true, 1 }, { true, 3 }, (char *) "r" },       /* "a" is everything */
  };
  oci_device devs[] = {
    { (char *) "/dev/fuse", 'c', 10, 229, { 0 }, { 0 }, { 0 } },
    { (char *) "/dev/fifo", 'p', 0, 0, { 0 }, { 0 }, { 0 } },
    { (char *) "/dev/u", 'u', 4, 64, { 0 }, { 0 }, { 0 } },
  };
  l.resources.n_devices = 4;
  l.resources.devices = cfg;
  l.n_devices = 3;
  l.devices = devs;
  size_t n = hv_dev_rules_build (&l, &rules);
  assert_int_equal (n, 4 + N_DEFAULTS + 2);
  char line[96];
  static const char *const expected[] = { "a", "c 10:200 rw", "b *:* m", "a", "c *:* m", "b *:* m", "c 10:200 rwm",
                                          "c 1:3 rwm", "c 1:5 rwm", "c 1:7 rwm",
                                          "c 1:8 rwm", "c 1:9 rwm", "c 5:0 rwm", "c 5:1 rwm", "c 5:2 rwm",
                                          "c 136:* rwm", "c 10:229 rwm", "c 4:64 rwm" };
  for (size_t i = 0; i < n; i++)
    {
      hv_dev_rule_v1_line (&rules[i], line, sizeof (line));
      assert_string_equal (line, expected[i]);
    }
  assert_false (rules[0].allow);
  assert_int_equal (rules[3].access, HV_DEV_ALL);
  assert_int_equal (rules[3].major, -1);
  assert_true (rules[4].allow);
  free (rules);
}

static void
test_rules_semantics (void **state)
{
  (void) state;
  const struct hv_dev_rule deny_all_allow_some[] = {
    { false, 'a', -1, -1, HV_DEV_ALL },
    { true, 'c', 1, 3, HV_DEV_ALL },
    { true, 'c', 10, -1, HV_DEV_READ },
    { false, 'c', 10, 200, HV_DEV_READ }, /* later deny wins for this device */
    { true, 'b', -1, -1, HV_DEV_MKNOD },
  };
  size_t n = sizeof (deny_all_allow_some) / sizeof (deny_all_allow_some[0]);
  const struct hv_dev_rule *r = deny_all_allow_some;
  assert_true (hv_dev_rules_allow (r, n, 'c', 1, 3, HV_DEV_READ | HV_DEV_WRITE));
  assert_false (hv_dev_rules_allow (r, n, 'c', 1, 5, HV_DEV_READ));
  assert_false (hv_dev_rules_allow (r, n, 'b', 1, 3, HV_DEV_READ));
  assert_true (hv_dev_rules_allow (r, n, 'c', 10, 229, HV_DEV_READ));
  assert_false (hv_dev_rules_allow (r, n, 'c', 10, 229, HV_DEV_READ | HV_DEV_WRITE)); /* each access must pass */
  assert_false (hv_dev_rules_allow (r, n, 'c', 10, 200, HV_DEV_READ));
  assert_true (hv_dev_rules_allow (r, n, 'b', 8, 0, HV_DEV_MKNOD));
  assert_false (hv_dev_rules_allow (r, n, 'b', 8, 0, HV_DEV_READ));

  /* Allow-all first, then holes. */
  const struct hv_dev_rule allow_all_deny_some[] = {
    { true, 'a', -1, -1, HV_DEV_ALL },
    { false, 'c', 1, 3, HV_DEV_WRITE },
    { false, 'b', -1, -1, HV_DEV_ALL },
  };
  r = allow_all_deny_some;
  n = 3;
  assert_true (hv_dev_rules_allow (r, n, 'c', 1, 3, HV_DEV_READ));
  assert_false (hv_dev_rules_allow (r, n, 'c', 1, 3, HV_DEV_WRITE));
  assert_false (hv_dev_rules_allow (r, n, 'b', 7, 0, HV_DEV_MKNOD));
  assert_true (hv_dev_rules_allow (r, n, 'c', 4, 1, HV_DEV_ALL));

  /* Without a wildcard rule, unmatched accesses are allowed (a v1 cgroup
   * inherits its parent's allow-all list). */
  const struct hv_dev_rule no_wildcard[] = { { false, 'c', 1, 3, HV_DEV_ALL } };
  assert_false (hv_dev_rules_allow (no_wildcard, 1, 'c', 1, 3, HV_DEV_READ));
  assert_true (hv_dev_rules_allow (no_wildcard, 1, 'c', 1, 5, HV_DEV_READ));
}

/* ------------------------------------------------------------------ */
/* The eBPF program, run by an interpreter of what the generator emits */
/* ------------------------------------------------------------------ */

static int
run_prog (const struct bpf_insn *p, size_t n, uint32_t access_type, uint32_t major, uint32_t minor)
{
  uint32_t ctx[3] = { access_type, major, minor };
  uint64_t reg[11] = { 0 };
  bool ctx_reg[11] = { false };
  ctx_reg[1] = true;
  size_t pc = 0;
  for (size_t steps = 0; steps < 100000; steps++)
    {
      assert_true (pc < n);
      const struct bpf_insn *i = &p[pc++];
      uint8_t cls = BPF_CLASS (i->code), op = BPF_OP (i->code);
      switch (cls)
        {
        case BPF_LDX:
          assert_int_equal (i->code, BPF_LDX | BPF_MEM | BPF_W);
          assert_true (ctx_reg[i->src_reg]);
          assert_true (i->off >= 0 && i->off <= 8 && i->off % 4 == 0);
          reg[i->dst_reg] = ctx[i->off / 4];
          ctx_reg[i->dst_reg] = false;
          break;
        case BPF_ALU:
          {
            uint32_t src = BPF_SRC (i->code) == BPF_X ? (uint32_t) reg[i->src_reg] : (uint32_t) i->imm;
            uint32_t dst = (uint32_t) reg[i->dst_reg];
            assert_false (BPF_SRC (i->code) == BPF_X && ctx_reg[i->src_reg]);
            if (op == BPF_MOV)
              dst = src;
            else if (op == BPF_AND)
              dst &= src;
            else if (op == BPF_RSH)
              dst >>= src;
            else
              fail_msg ("unexpected ALU op %#x", i->code);
            reg[i->dst_reg] = dst; /* 32-bit ops zero the upper half */
            ctx_reg[i->dst_reg] = false;
            break;
          }
        case BPF_JMP:
          if (op == BPF_EXIT)
            {
              assert_true (reg[0] == 0 || reg[0] == 1);
              return (int) reg[0];
            }
          if (op == BPF_JA)
            pc += (size_t) i->off;
          else
            {
              assert_int_equal (BPF_SRC (i->code), BPF_K);
              int64_t imm = i->imm;
              bool eq = reg[i->dst_reg] == (uint64_t) imm;
              if (op != BPF_JEQ && op != BPF_JNE)
                fail_msg ("unexpected jump %#x", i->code);
              if ((op == BPF_JEQ) == eq)
                pc += (size_t) i->off;
            }
          assert_true (i->off >= 0);
          break;
        default:
          fail_msg ("unexpected instruction class %#x", cls);
        }
    }
  fail_msg ("program did not end");
  return -1;
}

/* Every device of a small universe, every access combination: the
 * program must agree with the reference. */
static void
check_program (const struct hv_dev_rule *rules, size_t n)
{
  struct bpf_insn *prog = NULL;
  size_t n_insns = 0;
  hv_error *err = NULL;
  if (hv_dev_bpf_generate (rules, n, &prog, &n_insns, &err) < 0)
    fail_msg ("generate: %s", err->msg);
  static const char types[] = { 'c', 'b' };
  for (size_t t = 0; t < 2; t++)
    for (uint32_t major = 0; major < 4; major++)
      for (uint32_t minor = 0; minor < 4; minor++)
        for (unsigned access = 1; access <= HV_DEV_ALL; access++)
          {
            uint32_t type = types[t] == 'b' ? BPF_DEVCG_DEV_BLOCK : BPF_DEVCG_DEV_CHAR;
            int got = run_prog (prog, n_insns, access << 16 | type, major, minor);
            bool want = hv_dev_rules_allow (rules, n, types[t], major, minor, access);
            if (got != (int) want)
              fail_msg ("%c %u:%u access %u: program says %d, rules say %d", types[t], major, minor, access, got,
                        want);
          }
  free (prog);
}

static void
test_bpf_program_matches_rules (void **state)
{
  (void) state;
  const struct hv_dev_rule docker_like[] = {
    { false, 'a', -1, -1, HV_DEV_ALL },    { true, 'c', -1, -1, HV_DEV_MKNOD }, { true, 'b', -1, -1, HV_DEV_MKNOD },
    { true, 'c', 1, 3, HV_DEV_ALL },       { true, 'c', 2, -1, HV_DEV_READ },   { false, 'c', 2, 1, HV_DEV_READ },
    { true, 'b', 3, 3, HV_DEV_READ | HV_DEV_WRITE },
  };
  check_program (docker_like, sizeof (docker_like) / sizeof (docker_like[0]));
  const struct hv_dev_rule allow_all[] = { { true, 'a', -1, -1, HV_DEV_ALL }, { false, 'b', 1, -1, HV_DEV_WRITE } };
  check_program (allow_all, 2);
  /* A wildcard in the middle makes what precedes it unreachable. */
  const struct hv_dev_rule middle[] = {
    { true, 'c', 1, 1, HV_DEV_ALL }, { false, 'a', -1, -1, HV_DEV_ALL }, { true, 'c', 2, 2, HV_DEV_READ } };
  check_program (middle, 3);
  check_program (NULL, 0);

  /* Random rule sets (fixed seed): 300 sets of up to 12 rules. */
  unsigned seed = 12345;
  for (int set = 0; set < 300; set++)
    {
      struct hv_dev_rule rules[12];
      size_t n = (size_t) (rand_r (&seed) % 13);
      for (size_t i = 0; i < n; i++)
        {
          int k = rand_r (&seed);
          rules[i].allow = k & 1;
          rules[i].type = (k >> 1) % 7 == 0 ? 'a' : (k >> 4) & 1 ? 'c' : 'b';
          rules[i].major = (k >> 5) % 5 - 1;
          rules[i].minor = (k >> 8) % 5 - 1;
          rules[i].access = rules[i].type == 'a' ? HV_DEV_ALL : (unsigned) ((k >> 11) % 7 + 1);
          if (rules[i].type == 'a')
            rules[i].major = rules[i].minor = -1;
        }
      check_program (rules, n);
    }
}

static void
test_bpf_program_limits (void **state)
{
  (void) state;
  struct hv_dev_rule big = { true, 'c', 1ll << 31, 1, HV_DEV_ALL };
  struct bpf_insn *prog = NULL;
  size_t n = 0;
  hv_error *err = NULL;
  expect_error (hv_dev_bpf_generate (&big, 1, &prog, &n, &err), &err,
                "device rule 2147483648:1: number out of range");
  struct hv_dev_rule *many = calloc (1001, sizeof (*many));
  for (size_t i = 0; i < 1001; i++)
    many[i] = (struct hv_dev_rule){ true, 'c', 1, (int64_t) i, HV_DEV_ALL };
  expect_error (hv_dev_bpf_generate (many, 1001, &prog, &n, &err), &err, "1001 device rules: at most 1000 are supported");
  /* 1000 rules still fit the 16-bit jump offsets. */
  assert_int_equal (hv_dev_bpf_generate (many, 1000, &prog, &n, &err), 0);
  assert_true (n > 1000);
  free (prog);
  free (many);
}

/* ------------------------------------------------------------------ */
/* What a rootless container without a cgroup may still run with       */
/* ------------------------------------------------------------------ */

static const char *
first_limit (const char *json)
{
  static char name[64];
  oci_resources *r = NULL;
  hv_error *err = NULL;
  if (oci_resources_parse (json, strlen (json), "test", &r, &err) < 0)
    fail_msg ("%s: %s", json, err->msg);
  const char *f = hv_cgroup_first_limit (r);
  snprintf (name, sizeof (name), "%s", f ? f : "(none)");
  oci_resources_free (r);
  return name;
}

static void
test_first_limit (void **state)
{
  (void) state;
  /* Podman's rootless config, Docker's unset values, device rules. */
  assert_string_equal (first_limit ("{}"), "(none)");
  assert_string_equal (first_limit ("{\"pids\": {\"limit\": -1}, \"memory\": {\"limit\": 0, \"swap\": -1},"
                                    " \"cpu\": {\"shares\": 0, \"quota\": -1, \"period\": 100000},"
                                    " \"blockIO\": {\"weight\": 0}}"),
                       "(none)");
  assert_string_equal (first_limit ("{\"devices\": [{\"allow\": false, \"access\": \"rwm\"}]}"), "(none)");
  assert_string_equal (first_limit ("{\"memory\": {\"limit\": 67108864}}"), "memory.limit");
  assert_string_equal (first_limit ("{\"memory\": {\"swappiness\": 0}}"), "memory.swappiness");
  assert_string_equal (first_limit ("{\"memory\": {\"disableOOMKiller\": true}}"), "memory.disableOOMKiller");
  assert_string_equal (first_limit ("{\"cpu\": {\"quota\": 50000}}"), "cpu.quota");
  assert_string_equal (first_limit ("{\"cpu\": {\"cpus\": \"0\"}}"), "cpu.cpus");
  assert_string_equal (first_limit ("{\"pids\": {\"limit\": 100}}"), "pids.limit");
  assert_string_equal (first_limit ("{\"blockIO\": {\"throttleReadBpsDevice\": [{\"major\": 8, \"minor\": 0, "
                                    "\"rate\": 1}]}}"),
                       "blockIO.throttleReadBpsDevice");
  assert_string_equal (first_limit ("{\"unified\": {\"memory.high\": \"1G\"}}"), "unified");
}

/* The systemd driver's sd-bus comes from libsystemd.so.0 loaded on first
 * use: not mapped before (haven does not link it), every function there
 * after, and a second call is the same table. */
static bool
libsystemd_mapped (void)
{
  FILE *f = fopen ("/proc/self/maps", "re");
  assert_non_null (f);
  char line[4096];
  bool found = false;
  while (fgets (line, sizeof (line), f))
    if (strstr (line, "/libsystemd.so.0"))
      found = true;
  fclose (f);
  return found;
}

static void
test_sd_bus_loaded_on_first_use (void **state)
{
  (void) state;
  assert_false (libsystemd_mapped ());
  hv_error *err = NULL;
  const struct hv_sd_bus_lib *lib = hv_sd_bus_lib (&err);
  if (lib == NULL)
    fail_msg ("%s", err->msg);
  assert_true (libsystemd_mapped ());
#define CHECK_LOADED(name) assert_non_null (lib->name);
  HV_SD_BUS_FUNCTIONS (CHECK_LOADED)
#undef CHECK_LOADED
  assert_ptr_equal (hv_sd_bus_lib (&err), lib);
  assert_int_equal (lib->error_is_set (&SD_BUS_ERROR_NULL), 0);
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_shares_to_weight),
    cmocka_unit_test (test_sd_bus_loaded_on_first_use),
    cmocka_unit_test (test_blkio_to_io_weight),
    cmocka_unit_test (test_swap_v2),
    cmocka_unit_test (test_cpu_max),
    cmocka_unit_test (test_io_max_lines),
    cmocka_unit_test (test_page_sizes),
    cmocka_unit_test (test_unified_keys),
    cmocka_unit_test (test_names_and_rdma),
    cmocka_unit_test (test_wanted_controllers),
    cmocka_unit_test (test_parse_size),
    cmocka_unit_test (test_rules_build),
    cmocka_unit_test (test_rules_semantics),
    cmocka_unit_test (test_bpf_program_matches_rules),
    cmocka_unit_test (test_bpf_program_limits),
    cmocka_unit_test (test_first_limit),
  };
  return cmocka_run_group_tests (tests, NULL, NULL);
}
