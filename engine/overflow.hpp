// overflow.hpp: a context's stack overflow becomes a message naming the option to raise.
//
// Every context stack has a PROT_NONE guard page below it (RecordingStack). A SIGSEGV (or
// SIGBUS) whose address is in or just below the guard page of the context running on the
// faulting thread prints
//   mrengine: context stack overflow (stack size N KiB); raise --stack-size
// (or --small-stack-size, for a spark's context) and aborts. The handler runs on an alternate
// signal stack, since the faulting stack has no room left; every engine and backup thread has
// one. Any other fault, and a SIGSEGV or SIGBUS that was sent (raise, kill), goes to the action
// that was installed before MR_init: its handler, or what the default or ignore would do (a sent
// one under the default action kills the process, an ignored one is ignored).
#ifndef MR_ENGINE_OVERFLOW_HPP
#define MR_ENGINE_OVERFLOW_HPP

#include <signal.h>

namespace mr::engine {

struct Context;

namespace overflow {

// The context running on the calling thread (an engine's current context, or a backup
// thread's), or nullptr. Must be async-signal-safe: the handler calls it.
using ContextOnThisThread = const Context *(*)();

// Install the handler for SIGSEGV and SIGBUS, keeping the previous actions; `on_this_thread`
// tells it whose stack overflowed. Called by MR_init's thread before any engine thread exists.
void install(ContextOnThisThread on_this_thread);
// Put the previous actions back (unless someone replaced ours meanwhile). Called when the runtime
// is freed (a shutdown, or a start that failed) once every engine and backup thread has been
// joined.
void uninstall();

// An alternate signal stack for the calling thread, and the one it replaced.
struct AltStack {
  void *mem = nullptr;
  stack_t old{};
};
// Give the calling thread an alternate signal stack (false if it cannot be had; the thread
// then dies of a bare SIGSEGV on overflow). Called by the thread itself.
bool altstack_on(AltStack &a);
// Put the thread's previous alternate stack back and free ours. Called by the same thread.
void altstack_off(AltStack &a);

}  // namespace overflow
}  // namespace mr::engine

#endif
