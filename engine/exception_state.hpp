// exception_state.hpp: the C++ runtime's exception state of the code running on a thread, which
// goes with each context across its switches.
//
// The C++ ABI keeps it per OS thread (__cxa_get_globals): the stack of exceptions being handled
// (what `throw;` rethrows, what std::current_exception returns, what the end of a handler pops
// and frees) and the count of exceptions thrown and not yet caught (std::uncaught_exceptions).
// Contexts interleave on a thread and move between threads, so a context that leaves inside a
// handler (or while an exception unwinds) takes its state with it and puts it back wherever it
// resumes: leave_context (switch.hpp) takes it before every switch away from a context and puts
// it back once the context runs again. A stack that is not a context's (a scheduler, a backup
// thread's loop) runs with the empty state, which is also what a context starting a task finds.
#ifndef MR_ENGINE_EXCEPTION_STATE_HPP
#define MR_ENGINE_EXCEPTION_STATE_HPP

namespace mr::engine {

// The fields of the ABI's __cxa_eh_globals (libstdc++'s and libc++abi's, on every target of
// doc/platforms.md; a 32-bit ARM EHABI target would have a third).
struct ExceptionState {
  void *caught = nullptr;  // the innermost exception being handled (__cxa_exception *)
  unsigned int uncaught = 0;
};

// The calling thread's state, which is left empty. Called by a context about to switch away.
ExceptionState exceptions_take() noexcept;

// Make s the calling thread's state (whose own is empty). Called by a context that has just
// resumed, maybe on another thread than the one it left.
void exceptions_put(const ExceptionState &s) noexcept;

}  // namespace mr::engine

#endif
