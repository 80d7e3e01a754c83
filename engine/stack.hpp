// stack.hpp: the stacks contexts run on, mapped by mrengine itself so that every call is checked
// and a stack that cannot be had is an error its caller returns (MR_ENOMEM), never an abort.
//
// One anonymous mapping per stack, with a guard region in its lowest page: on Linux 6.13 and
// later the guard is installed by madvise(MADV_GUARD_INSTALL), which adds no mapping, so a stack
// costs at most one entry of vm.max_map_count (stacks mapped one after the other merge into
// one); where the kernel refuses that, the page is made PROT_NONE with mprotect, which splits the
// mapping in two (two entries per stack, so about 32,000 stacks at the default limit of 65,530).
#ifndef MR_ENGINE_STACK_HPP
#define MR_ENGINE_STACK_HPP

#include <boost/context/stack_context.hpp>

#include <cstddef>

namespace mr::engine {

// Map a stack of at least `bytes` usable bytes (rounded up to whole pages) with a guard page
// below them, in Boost.Context's form (sp is the top; size counts the guard page too). Returns
// false with *out untouched when the kernel refuses, after one warning per process that names the
// limit that was met (vm.max_map_count, RLIMIT_AS or the overcommit policy) unless `quiet`.
// Any thread.
bool stack_map(std::size_t bytes, bool quiet, boost::context::stack_context *out);

// Unmap a stack stack_map made. Any thread.
void stack_unmap(const boost::context::stack_context &s) noexcept;

// How stacks are guarded in this process: true once a guard was installed by madvise (one
// mapping per stack), false while mprotect is used (two). For the tests and the benchmark.
bool stack_guard_is_madvise();

}  // namespace mr::engine

#endif
