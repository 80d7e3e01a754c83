// fatal.hpp: stopping the process when an invariant breaks or the runtime is misused.
#ifndef MR_ENGINE_FATAL_HPP
#define MR_ENGINE_FATAL_HPP

namespace mr::engine {

// Print "mrengine: <printf-formatted message>" on stderr and abort. Any thread.
[[noreturn]] void fatal(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

// Print "mrengine: warning: <message>" on stderr unless `quiet`, and go on. Any thread.
void warning(bool quiet, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

}  // namespace mr::engine

// A cheap self-check that stays on in release builds: the message is constant, the test is
// a compare on a path that is not hot.
#define MR_CHECK(cond, msg)                                                                       \
  do {                                                                                            \
    if (__builtin_expect(!(cond), 0)) ::mr::engine::fatal("%s (%s:%d)", msg, __FILE__, __LINE__); \
  } while (0)

// Debug-only assertion (configure --enable-debug).
#ifdef MR_DEBUG
#define MR_DASSERT(cond, msg) MR_CHECK(cond, msg)
#else
#define MR_DASSERT(cond, msg) ((void)0)
#endif

#endif
