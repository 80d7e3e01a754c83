// context.cpp: creating and destroying contexts and their stacks.
#include "config.h"

#include "context.hpp"

#include "sanitizer.hpp"

#include <mutex>
#include <new>

namespace mr::engine {

namespace ctx = boost::context;

namespace {

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
  if (c->all_prev)
    c->all_prev->all_next = c->all_next;
  else
    g_all = c->all_next;
  if (c->all_next) c->all_next->all_prev = c->all_prev;
  c->all_prev = c->all_next = nullptr;
}

// A collector's roots in a context's record (gc.hpp): the task it runs next and a spawned
// function's words, which hold the program's pointers before the context first runs (and while
// it is dropped), when nothing on its stack does. Read with its threads stopped; a word being
// written is either value, and a stale one only keeps its object a while longer.
std::size_t task_roots(const void *owner, MR_GcStackFn fn, void *arg) {
  auto *c = static_cast<const Context *>(owner);
  fn(const_cast<Task *>(&c->task), const_cast<Task *>(&c->task + 1), arg);
  fn(const_cast<Context::Spawned *>(&c->spawned), const_cast<Context::Spawned *>(&c->spawned + 1),
     arg);
  return 2;
}

}  // namespace

Context *context_create(ContextKind kind, std::size_t stack_bytes, bool quiet, ContextBody body) {
  auto *c = new (std::nothrow) Context;
  if (!c) return nullptr;
  c->kind = kind;
  try {
    c->fiber = make_fiber(stack_bytes, quiet, &c->stack, [c, body](ctx::fiber &&from) {
      // Started by a resume_with whose ontop function already saved the
      // resumer's continuation: `from` is empty.
      (void)from;
      body(c);
      // The body never returns; a free context is forgotten
      // (fiber_forget), never unwound.
      return ctx::fiber{};
    });
  } catch (const std::bad_alloc &) {
    delete c;
    return nullptr;
  }
  san::init_stack(c->san, c->stack);
  c->gc.owner = c;
  c->gc.roots = task_roots;
  gc::add(&c->gc, c->stack);
  link(c);
  return c;
}

void fiber_forget(ctx::fiber &f, ctx::stack_context &stack, san::Fiber &sf) {
  alignas(ctx::fiber) unsigned char sink[sizeof(ctx::fiber)];
  new (sink) ctx::fiber(std::move(f));  // never destroyed: the continuation is forgotten
  san::forget(sf);
  if (stack.sp) stack_unmap(stack);
  stack = ctx::stack_context{};
}

void context_destroy(Context *c) {
  unlink(c);
  gc::remove(&c->gc);  // before its stack goes
  // A free context waits at the top of its loop, holding nothing: forget it.
  fiber_forget(c->fiber, c->stack, c->san);
  delete c;
}

void context_each(void (*f)(Context *c, void *arg), void *arg) {
  Context *c;
  {
    std::lock_guard<std::mutex> lk(g_all_lock);
    c = g_all;
  }
  // Unlocked from here: nothing makes or frees a context now (context.hpp), and f may call
  // code that takes the lock.
  for (; c; c = c->all_next) f(c, arg);
}

std::size_t context_drop_all(std::uint64_t *per_channel) {
  std::size_t n = 0;
  for (;;) {
    Context *c;
    {
      std::lock_guard<std::mutex> lk(g_all_lock);
      c = g_all;
    }
    if (!c) return n;
    bool counted = !c->dropped;
    if (per_channel && counted) per_channel[c->channel]++;
    context_destroy(c);
    n += counted;
  }
}

void contexts_forget_after_fork() {
  new (&g_all_lock) std::mutex;  // re-made, not unlocked: another thread may have held it
  g_all = nullptr;
}

}  // namespace mr::engine
