// stack.cpp: context stacks (stack.hpp).
#include "config.h"

#include "stack.hpp"

#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>

#include "fatal.hpp"

#ifndef MADV_GUARD_INSTALL
#define MADV_GUARD_INSTALL 102  // Linux 6.13 (uapi/asm-generic/mman-common.h)
#endif

namespace mr::engine {

namespace {

// Whether madvise guards work here: unknown (-1), yes (1), no (0). relaxed: each thread that
// finds it unknown tries once; every answer is the same.
std::atomic<int> g_madvise_guard{-1};
// One warning per process. relaxed exchange: only its atomicity matters.
std::atomic<bool> g_warned{false};

std::size_t page_size() {
  static const std::size_t p = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  return p;
}

long read_long(const char *path) {
  long v = -1;
  if (FILE *f = std::fopen(path, "r")) {
    if (std::fscanf(f, "%ld", &v) != 1) v = -1;
    std::fclose(f);
  }
  return v;
}

// What a failure to map means, in terms the user can act on.
void warn_once(bool quiet, std::size_t bytes, const char *call, int err) {
  if (quiet || g_warned.exchange(true, std::memory_order_relaxed)) return;
  const long max_maps = read_long("/proc/sys/vm/max_map_count");
  const long overcommit = read_long("/proc/sys/vm/overcommit_memory");
  struct rlimit as;
  char as_text[32] = "unlimited";
  if (getrlimit(RLIMIT_AS, &as) == 0 && as.rlim_cur != RLIM_INFINITY)
    std::snprintf(as_text, sizeof as_text, "%llu MiB",
                  static_cast<unsigned long long>(as.rlim_cur >> 20));
  warning(false,
          "cannot map a %zu KiB context stack (%s: %s): the process may have reached "
          "vm.max_map_count (%ld mappings; raise it with `sysctl -w vm.max_map_count=N`), its "
          "address-space limit RLIMIT_AS (%s; ulimit -v), or the memory the overcommit policy "
          "allows (vm.overcommit_memory=%ld); a smaller --stack-size or fewer live contexts also "
          "help. Spawns return MR_ENOMEM meanwhile",
          bytes / 1024, call, strerror(err), max_maps, as_text, overcommit);
}

// Install the guard in the lowest page of the mapping at vp. Returns 0 or errno.
int guard(void *vp) {
  // relaxed: see g_madvise_guard.
  if (g_madvise_guard.load(std::memory_order_relaxed) != 0) {
    if (madvise(vp, page_size(), MADV_GUARD_INSTALL) == 0) {
      g_madvise_guard.store(1, std::memory_order_relaxed);
      return 0;
    }
    if (errno != EINVAL) return errno;  // the advice exists but failed: no fallback hides that
    g_madvise_guard.store(0, std::memory_order_relaxed);  // an older kernel
  }
  return mprotect(vp, page_size(), PROT_NONE) == 0 ? 0 : errno;
}

}  // namespace

bool stack_map(std::size_t bytes, bool quiet, boost::context::stack_context *out) {
  const std::size_t page = page_size();
  const std::size_t total = ((bytes + page - 1) / page + 1) * page;  // + the guard page
  // MAP_NORESERVE: only touched pages take memory; MAP_STACK: a hint for the kernel (THP).
  void *vp = mmap(nullptr, total, PROT_READ | PROT_WRITE,
                  MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK, -1, 0);
  if (vp == MAP_FAILED) {
    warn_once(quiet, bytes, "mmap", errno);
    return false;
  }
  if (int err = guard(vp); err != 0) {
    munmap(vp, total);
    warn_once(quiet, bytes, "guard page", err);
    return false;
  }
  out->size = total;
  out->sp = static_cast<char *>(vp) + total;
  return true;
}

void stack_unmap(const boost::context::stack_context &s) noexcept {
  void *vp = static_cast<char *>(s.sp) - s.size;
  // The kernel merges stacks mapped one after the other into one mapping, so this can fail: when
  // s lies inside such a run and the process has no mapping left for the split. The caches are
  // therefore emptied from the lowest stack up (destroy_cached_contexts), each at a run's end.
  (void)munmap(vp, s.size);
}

bool stack_guard_is_madvise() { return g_madvise_guard.load(std::memory_order_relaxed) == 1; }

}  // namespace mr::engine
