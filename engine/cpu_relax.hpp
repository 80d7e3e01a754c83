// cpu_relax.hpp: the hint a spinning thread gives its core between two polls of a shared word,
// for the engine's steal rounds and libmrgomp's barriers and locks. Header-only and guarded per
// architecture, so that both libraries build on x86 and arm64 alike.
#ifndef MR_ENGINE_CPU_RELAX_HPP
#define MR_ENGINE_CPU_RELAX_HPP

namespace mr::engine {

// One spin-wait hint: x86's pause (lets the sibling hyperthread run and avoids the memory-order
// flush on loop exit), arm64's yield; elsewhere only a compiler barrier, so that the poll is
// re-read.
inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__) || defined(__arm__)
  __asm__ __volatile__("yield" ::: "memory");
#else
  __asm__ __volatile__("" ::: "memory");
#endif
}

}  // namespace mr::engine

#endif
