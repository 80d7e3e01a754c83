// context.cpp: creating and destroying contexts and their stacks.
#include "config.h"

#include "context.hpp"

#include "sanitizer.hpp"

#include <boost/context/protected_fixedsize_stack.hpp>

#include <mutex>
#include <new>

namespace mr::engine {

namespace ctx = boost::context;

namespace {

// protected_fixedsize_stack (mmap, with one PROT_NONE guard page below the stack) that also
// records where the stack is in its context.
class RecordingStack {
 public:
  RecordingStack(std::size_t bytes, Context *c) : inner_(bytes), c_(c) {}
  ctx::stack_context allocate() {
    ctx::stack_context s = inner_.allocate();
    c_->stack = s;
    return s;
  }
  void deallocate(ctx::stack_context &s) noexcept { inner_.deallocate(s); }

 private:
  ctx::protected_fixedsize_stack inner_;
  Context *c_;
};

// The list of every live context (creation and destruction are rare: contexts are cached).
std::mutex g_all_lock;
Context *g_all = nullptr;  // protected by g_all_lock

void link(Context *c) {
  std::lock_guard<std::mutex> lk(g_all_lock);
  c->all_next = g_all;
  if (g_all) g_all->all_prev = c;
  g_all = c;
}

void unlink(Context *c) {
  std::lock_guard<std::mutex> lk(g_all_lock);
  if (c->all_prev) c->all_prev->all_next = c->all_next; else g_all = c->all_next;
  if (c->all_next) c->all_next->all_prev = c->all_prev;
  c->all_prev = c->all_next = nullptr;
}

}  // namespace

Context *context_create(StackKind kind, std::size_t stack_bytes) {
  auto *c = new (std::nothrow) Context;
  if (!c) return nullptr;
  c->kind = kind;
  try {
    c->fiber = ctx::fiber(std::allocator_arg, RecordingStack(stack_bytes, c),
                          [c](ctx::fiber &&from) {
                            // Started by a resume_with whose ontop function already saved the
                            // resumer's continuation: `from` is empty.
                            (void)from;
                            context_loop(c);
                            // context_loop never returns; a free context is destroyed by
                            // unwinding (forced_unwind from ~fiber).
                            return ctx::fiber{};
                          });
  } catch (const std::bad_alloc &) {
    delete c;
    return nullptr;
  }
  c->san = san::fiber_create();
  link(c);
  return c;
}

void context_destroy(Context *c) {
  unlink(c);
  // ~fiber on a suspended fiber unwinds its stack (boost::context::detail::forced_unwind passes
  // through context_loop's frames) and frees it with the stack allocator: the unwinding runs
  // on c's stack, and comes back here.
  void *self = san::current_fiber();
  san::switch_to(c->san);
  c->fiber = ctx::fiber{};
  san::switch_to(self);
  san::fiber_destroy(c->san);
  delete c;
}

std::size_t context_drop_all() {
  std::lock_guard<std::mutex> lk(g_all_lock);
  std::size_t n = 0;
  while (Context *c = g_all) {
    g_all = c->all_next;
    // Forget the continuation instead of destroying it: ~fiber would unwind the task's frames,
    // running the caller's destructors and catch blocks of a computation that was abandoned.
    // The fiber's own record lives on the stack, which goes with the munmap below.
    alignas(ctx::fiber) unsigned char sink[sizeof(ctx::fiber)];
    new (sink) ctx::fiber(std::move(c->fiber));
    if (c->stack.sp) ctx::protected_fixedsize_stack(c->stack.size).deallocate(c->stack);
    san::fiber_destroy(c->san);
    delete c;
    n++;
  }
  return n;
}

}  // namespace mr::engine
