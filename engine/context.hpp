// context.hpp: contexts, the user-level threads that run tasks.
//
// A context is a Boost.Context fiber on a stack of ours with a guard page below it (stack.hpp),
// plus the bookkeeping the scheduler needs. A
// context that finished its task is not destroyed: it stays suspended at the top of its loop and
// goes to a free cache (its engine's, then the global one), from where it is resumed with a new
// task. The primordial context is the thread that called MR_init; it has no stack of ours and is
// bound to engine 0.
#ifndef MR_ENGINE_CONTEXT_HPP
#define MR_ENGINE_CONTEXT_HPP

#include <semaphore.h>

#include <boost/context/fiber.hpp>
#include <boost/context/stack_context.hpp>
#include <boost/intrusive/set_hook.hpp>

#include <cstddef>
#include <cstdint>
#include <new>
#include <utility>

#include "context_local.hpp"
#include "gc.hpp"
#include "sanitizer.hpp"
#include "stack.hpp"
#include "task.hpp"

namespace mr::engine {

// What a Context record stands for. REGULAR and SMALL: a context on a stack of ours of that size
// (--stack-size for MR_spawn, --small-stack-size for sparks). PRIMORDIAL: the code that called
// MR_init, on its thread's own stack. FOREIGN: not a context at all but a thread that is not an
// engine, waiting at a join or a future on its semaphore `wake` (the record lives on that
// thread's stack).
enum class ContextKind : unsigned char { REGULAR, SMALL, PRIMORDIAL, FOREIGN };

// What a trace knows of a context (trace.cpp): the thread id of its current task in trace
// `session`, the engine it last ran on, whether it runs, and when it last stopped. Written only
// by the engine running the context; handed over with the context like `fiber`.
struct TraceMark {
  std::uint32_t tid = 0;
  std::uint32_t session = 0;
  int engine = -1;
  bool running = false;
  std::uint64_t ts = 0;
};

struct Context {
  // The saved continuation while the context is suspended or free; empty while it runs.
  // Written by the ontop function that runs right after the context switched away (on the stack
  // of whoever it switched to) and read by whoever resumes it; the hand-over between the two is
  // ordered by the queue, deque or join counter through which the context was published.
  boost::context::fiber fiber;
  Task task{};  // the task to run next; set before the context is resumed
  // Owner-only, by the context itself (join.cpp): the engine its current spark was stolen from
  // (-1: none), where it takes its next spark from while that engine has more; and how many
  // arrivals at task.join it holds back because its next spark was of the same join.
  int victim = -1;
  std::uint32_t held = 0;
  int bound = -1;  // -1, or the engine this context may only run on
  // Its channel (channel.hpp), for its whole task: where it is queued when it starts, whose
  // followup it is queued in after a suspension, and what its sparks belong to. Set before the
  // context is first published; then read by whoever queues or runs it (ordered like `fiber`).
  int channel = 0;
  std::uint64_t deadline = 0;  // its order in a deadline channel (MR_SpawnOptions.deadline)
  // MR_shutdown or MR_channel_close dropped it (close.hpp): it never runs again, and its stack
  // stays mapped until the runtime is freed, since sparks of its conjunctions may still be on
  // deques.
  bool dropped = false;
  // A spawned context (MR_spawn) while its function has not returned: what it runs, what to
  // call if it is dropped before, and what to call when the runtime frees it after that drop
  // (close.hpp). All null otherwise (a spark's context, a free one, one whose function
  // returned). Set before the context is first published (ordered like `fiber`); cleared by the
  // context itself when the function returns; whoever drops it clears fn and on_drop and leaves
  // arg and on_free for the runtime's end.
  struct Spawned {
    void (*fn)(void *) = nullptr;
    void *arg = nullptr;
    void (*on_drop)(void *) = nullptr;
    void (*on_free)(void *) = nullptr;
  } spawned;
  // A wait that leaves records behind it (io_wait.cpp: a descriptor wait's registration, its
  // timer and its claim) and that a drop must end: drop_context calls end(arg) before it forgets
  // the context, on the engine the context is bound to for the wait (whose scheduler drops it).
  // Set and cleared by the context itself around its suspension; null otherwise.
  struct Unwait {
    void (*end)(void *) = nullptr;
    void *arg = nullptr;
  } unwait;
  boost::intrusive::set_member_hook<> deadline_hook;  // a deadline channel's queue
  ContextKind kind = ContextKind::SMALL;
  // Set when the context suspends (a join, a future, loop control, or a blocking region moving
  // it to a backup thread), cleared by whoever resumes it: the statistics count each suspension
  // and each resumption once. Ordered like `fiber`.
  bool suspended = false;
  Context *next = nullptr;  // intrusive link: run queues and free caches
  sem_t *wake = nullptr;    // FOREIGN only: posted once to resume the waiting thread
  // Blocking regions: how deep the context is in nested MR_blocking_begin calls, and whether the
  // outermost moved it to a backup thread. Read and written only by the context itself.
  unsigned blocking_depth = 0;
  bool offloaded = false;
  // How many branches of its own joins the library's join is running inline on this context's
  // stack (run_own_sparks): MR_shutdown refuses the primordial while one runs. Read and written
  // only by the context itself.
  unsigned inline_branches = 0;
  // The stack this context runs on (recorded by the stack allocator when the fiber is made).
  boost::context::stack_context stack{};
  // Every context made by context_create is on one list until destroyed (context.cpp).
  Context *all_prev = nullptr, *all_next = nullptr;
  ContextLocal local;  // a library's word for this context (context_local.hpp)
  san::Fiber san;      // for the sanitizers' view of switches (sanitizer.hpp)
  gc::Stack gc;        // for a collector's (gc.hpp)
  TraceMark trace;     // tracing only (trace.hpp)
};

// Boost.Context's stack allocator for a context: a stack of ours (stack.hpp), recorded where
// the context keeps it. A stack that cannot be mapped throws std::bad_alloc out of the fiber's
// constructor, which context_create turns into nullptr.
class RecordingStack {
 public:
  RecordingStack(std::size_t bytes, bool quiet, boost::context::stack_context *where)
      : bytes_(bytes), quiet_(quiet), where_(where) {}
  boost::context::stack_context allocate() {
    boost::context::stack_context s;
    if (!stack_map(bytes_, quiet_, &s)) throw std::bad_alloc();
    *where_ = s;
    return s;
  }
  void deallocate(boost::context::stack_context &s) noexcept { stack_unmap(s); }

 private:
  std::size_t bytes_;
  bool quiet_;
  boost::context::stack_context *where_;
};

// A fiber on a fresh stack of ours (recorded in *where, as RecordingStack does), suspended before
// fn. The stack is mapped first, and Boost.Context's constructor, which jumps to it and back, runs
// with a collector's stops deferred (gc::DeferStops). Throws std::bad_alloc if the stack cannot be
// mapped (warning once unless `quiet`, stack.hpp).
template <class Fn>
boost::context::fiber make_fiber(std::size_t bytes, bool quiet,
                                 boost::context::stack_context *where, Fn &&fn) {
  boost::context::stack_context s;
  if (!stack_map(bytes, quiet, &s)) throw std::bad_alloc();
  *where = s;
  const gc::DeferStops no_stop_in_the_jump;
  return boost::context::fiber(std::allocator_arg, boost::context::preallocated(s.sp, s.size, s),
                               RecordingStack(bytes, quiet, where), std::forward<Fn>(fn));
}

// Free a suspended fiber made with a RecordingStack without running any more of it: its
// continuation is forgotten (~fiber would unwind its frames, running the destructors and catch
// blocks of whatever it was doing) and its stack unmapped. The fiber's own record lives on that
// stack and goes with it. Only code that owns no resources may be left this way: a free
// context, or engine 0's scheduler, or a task that MR_shutdown_now abandons.
void fiber_forget(boost::context::fiber &f, boost::context::stack_context &stack, san::Fiber &sf);

// What a context runs from its first resumption on: the scheduler's context body (run a task,
// arrive at its join, get the next task), which never returns.
using ContextBody = void (*)(Context *self);

// Create a context with a fresh stack of the given kind (size in bytes), suspended before `body`.
// Returns nullptr if the stack cannot be mapped (warning once unless `quiet`, stack.hpp). Any
// engine thread.
Context *context_create(ContextKind kind, std::size_t stack_bytes, bool quiet, ContextBody body);

// Destroy a free context (suspended at the top of its loop): forget its fiber and unmap its
// stack. Any thread, with the runtime stopping (no engine may hold a pointer to it).
void context_destroy(Context *c);

// Call f(c, arg) for every context that context_destroy has not freed. Called only when the
// runtime is freed, with no engine or backup thread running (none is made or freed meanwhile).
void context_each(void (*f)(Context *c, void *arg), void *arg);

// Free every context that context_destroy has not freed, without unwinding its stack (it may be
// suspended in the middle of a task: nothing of it runs again), and return how many there were
// that MR_shutdown had not already dropped (Context::dropped), adding each of those to
// per_channel[its channel] if per_channel is not null. Called only when the
// runtime is freed, with no context running (after MR_shutdown_now, or MR_shutdown with drop
// channels, they are the dropped ones; otherwise there are none).
std::size_t context_drop_all(std::uint64_t *per_channel);

// The child of a fork() (fork.cpp): forget every context of the parent's runtime. The registry
// starts empty with a fresh lock; the list, which a thread that no longer exists may have been
// changing, is never read again and its contexts are leaked.
void contexts_forget_after_fork();

}  // namespace mr::engine

#endif
