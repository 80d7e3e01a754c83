/* check_stacks.c: context stacks are mrengine's own (engine/stack.hpp). When the address space
 * runs out, MR_spawn returns MR_ENOMEM (with one warning naming the limits) instead of stopping
 * the process, and everything spawned before still runs and the runtime shuts down cleanly; the
 * same when the process runs out of mappings (vm.max_map_count); a stack costs one mapping where
 * the kernel has MADV_GUARD_INSTALL (Linux 6.13), two elsewhere. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "mrengine.h"
#include "testutil.h"

static MR_Future release;
static atomic_int ran;
static void waits(void *arg) {
  (void)arg;
  MR_future_wait(&release);
  atomic_fetch_add(&ran, 1);
}

/* Lines of /proc/self/maps: the process's mappings. */
static long mappings(void) {
  FILE *f = fopen("/proc/self/maps", "r");
  long n = 0;
  int c;
  ck_assert_ptr_nonnull(f);
  while ((c = fgetc(f)) != EOF) n += c == '\n';
  fclose(f);
  return n;
}

/* Does this kernel install guard regions without a mapping (6.13 and later)? */
static int kernel_has_guard_advice(void) {
  struct utsname u;
  int major = 0, minor = 0;
  ck_assert_int_eq(uname(&u), 0);
  ck_assert_int_eq(sscanf(u.release, "%d.%d", &major, &minor), 2);
  return major > 6 || (major == 6 && minor >= 13);
}

START_TEST(test_enomem_not_abort) {
  struct rlimit old, low;
  int spawned = 0, rc = 0;
  mr_test_start(2, "--stack-size=1024");
  MR_future_init(&release);
  atomic_store(&ran, 0);
  ck_assert_int_eq(getrlimit(RLIMIT_AS, &old), 0);
  low = old;
  low.rlim_cur = 2048ull << 20; /* 2 GiB: room for about 1,500 1 MiB stacks at most */
  ck_assert_int_eq(setrlimit(RLIMIT_AS, &low), 0);
  while (spawned < 100000 && (rc = MR_spawn(waits, NULL, NULL)) == 0) spawned++;
  ck_assert_int_eq(rc, MR_ENOMEM);
  ck_assert_int_gt(spawned, 100);
  ck_assert_int_eq(MR_spawn(waits, NULL, NULL), MR_ENOMEM); /* and stays so */
  ck_assert_int_eq(setrlimit(RLIMIT_AS, &old), 0);
  MR_future_signal(&release, 1);
  ck_assert_int_eq(MR_shutdown(), 0);
  ck_assert_int_eq(atomic_load(&ran), spawned);
}
END_TEST

/* Use up the process's mappings with pages that cannot merge, then give one back: a stack can
 * then be mapped, but a guard made by splitting it (mprotect) cannot. */
enum { MAX_FILLERS = 70000 };
static void *fillers[MAX_FILLERS];
static int nfillers;
static void fill_mappings(void) {
  nfillers = 0;
  while (nfillers < MAX_FILLERS) {
    void *p = mmap(NULL, 4096, (nfillers & 1) ? PROT_READ : PROT_NONE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) break;
    fillers[nfillers++] = p;
  }
  ck_assert_int_lt(nfillers, MAX_FILLERS); /* the limit was met */
  munmap(fillers[--nfillers], 4096);
}
static void free_mappings(void) {
  while (nfillers > 0) munmap(fillers[--nfillers], 4096);
}

START_TEST(test_out_of_mappings) {
  int spawned = 0, rc = 0;
  mr_test_start(2, "--stack-size=64");
  MR_future_init(&release);
  atomic_store(&ran, 0);
  fill_mappings();
  while (spawned < 1000 && (rc = MR_spawn(waits, NULL, NULL)) == 0) spawned++;
  free_mappings();
  ck_assert_int_eq(rc, MR_ENOMEM);
  ck_assert_int_eq(MR_spawn(waits, NULL, NULL), 0); /* mappings are back: so are stacks */
  spawned++;
  MR_future_signal(&release, 1);
  ck_assert_int_eq(MR_shutdown(), 0);
  ck_assert_int_eq(atomic_load(&ran), spawned);
}
END_TEST

/* Stacks mapped one after the other merge into one mapping; unmapping one from the middle of
 * such a run needs a mapping more, which the kernel refuses at the limit. 64 contexts finish
 * (and are cached) every other one first, so that each of those is in the middle of a run; with no mapping to spare, MR_shutdown still unmaps every
 * stack (from the lowest up, each at the end of its run). */
enum { RUN = 64 };
static MR_Future run_go[RUN];
static atomic_int run_started, run_finished;
static uintptr_t run_frame[RUN];
static void run_member(void *arg) {
  int i = (int)(intptr_t)arg;
  volatile char here = 0;
  run_frame[i] = (uintptr_t)&here;
  atomic_fetch_add(&run_started, 1);
  MR_future_wait(&run_go[i]);
  atomic_fetch_add(&run_finished, 1);
}

START_TEST(test_stacks_unmapped_at_the_limit) {
  long page = sysconf(_SC_PAGESIZE);
  mr_test_start(1, "--stack-size=64");
  atomic_store(&run_started, 0);
  atomic_store(&run_finished, 0);
  for (int i = 0; i < RUN; i++) {
    MR_future_init(&run_go[i]);
    ck_assert_int_eq(MR_spawn(run_member, (void *)(intptr_t)i, NULL), 0);
  }
  while (atomic_load(&run_started) < RUN) MR_sleep_for(1000000);
  for (int k = 0; k < RUN; k++) {
    MR_future_signal(&run_go[k < RUN / 2 ? 2 * k + 1 : 2 * (k - RUN / 2)], 1);
    while (atomic_load(&run_finished) <= k) MR_sleep_for(1000000);
  }
  fill_mappings();
  /* Take back the one fill_mappings left, at the same place and protection (no merge). */
  fillers[nfillers] = mmap(fillers[nfillers], 4096, (nfillers & 1) ? PROT_READ : PROT_NONE,
                           MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  ck_assert_ptr_ne(fillers[nfillers], MAP_FAILED);
  nfillers++;
  ck_assert_int_eq(MR_shutdown(), 0);
  free_mappings();
  for (int i = 0; i < RUN; i++) {
    unsigned char v;
    void *p = (void *)(run_frame[i] & ~(uintptr_t)(page - 1));
    ck_assert_msg(mincore(p, (size_t)page, &v) == -1 && errno == ENOMEM,
                  "the stack of context %d is still mapped", i);
  }
}
END_TEST

START_TEST(test_one_mapping_per_stack) {
  enum { N = 2000 };
  long before, after;
  mr_test_start(1, "--stack-size=64");
  MR_future_init(&release);
  atomic_store(&ran, 0);
  before = mappings();
  for (int i = 0; i < N; i++) ck_assert_int_eq(MR_spawn(waits, NULL, NULL), 0);
  after = mappings();
  /* Adjacent stacks may merge into fewer lines, never more than their count. (A sanitizer maps
   * memory of its own for each stack: the count is not ours there.) */
  if (MR_TEST_EXACT_RESOURCES && kernel_has_guard_advice())
    ck_assert_int_le(after - before, N + 16);
  else if (MR_TEST_EXACT_RESOURCES)
    ck_assert_int_le(after - before, 2 * N + 16);
  MR_future_signal(&release, 1);
  ck_assert_int_eq(MR_shutdown(), 0);
  ck_assert_int_eq(atomic_load(&ran), N);
}
END_TEST

int main(void) {
  Suite *s = suite_create("stacks");
  TCase *tc = mr_tcase("stacks", 60);
  tcase_add_test(tc, test_one_mapping_per_stack);
#ifndef MR_TEST_SANITIZER
  /* Not under the sanitizers: they reserve terabytes of shadow memory (an address-space limit
   * stops them) and map memory of their own as they go (out of mappings, they die). */
  mr_tcase_add_native_test(tc, test_enomem_not_abort,
                           "qemu-user accepts setrlimit(RLIMIT_AS) and applies no limit");
  tcase_add_test(tc, test_out_of_mappings);
  tcase_add_test(tc, test_stacks_unmapped_at_the_limit);
#endif
  suite_add_tcase(s, tc);
  return mr_test_run(s);
}
