// context.cpp: creating and destroying contexts and their stacks.
#include "config.h"

#include "context.hpp"

#include <boost/context/protected_fixedsize_stack.hpp>

#include <new>

namespace mr::engine {

namespace ctx = boost::context;

Context *context_create(StackKind kind, std::size_t stack_bytes) {
  auto *c = new (std::nothrow) Context;
  if (!c) return nullptr;
  c->kind = kind;
  try {
    // protected_fixedsize_stack: mmap, with one PROT_NONE guard page below the stack.
    c->fiber = ctx::fiber(std::allocator_arg, ctx::protected_fixedsize_stack(stack_bytes),
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
  return c;
}

void context_destroy(Context *c) {
  // ~fiber on a suspended fiber unwinds its stack (boost::context::detail::forced_unwind passes
  // through context_loop's frames) and frees it with the stack allocator.
  c->fiber = ctx::fiber{};
  delete c;
}

}  // namespace mr::engine
