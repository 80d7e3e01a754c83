// fatal.hpp: stopping the program with a message (doc/gomp.md, "What is supported").
#ifndef MR_GOMP_FATAL_HPP
#define MR_GOMP_FATAL_HPP

namespace mrg {

// Stop the program: an entry point (or a variant of one) this runtime does not implement.
[[noreturn]] void unsupported(const char *symbol, const char *detail = nullptr);
// Stop the program: a misuse or an internal failure.
[[noreturn]] void die(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

}  // namespace mrg

#endif
