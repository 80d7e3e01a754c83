// cache.cpp: the free-context caches (cache.hpp).
#include "config.h"

#include "cache.hpp"

#include <algorithm>
#include <mutex>
#include <new>
#include <vector>

#include "events.hpp"
#include "fatal.hpp"

namespace mr::engine {

namespace {

std::size_t stack_bytes(ContextKind k) {
  return k == ContextKind::REGULAR ? g_rt->p.stack_size : g_rt->p.small_stack_size;
}

}  // namespace

Context *get_context(Engine *e, ContextKind k) {
  if (e) {
    int &n = k == ContextKind::REGULAR ? e->n_free_regular : e->n_free_small;
    Context **cache = k == ContextKind::REGULAR ? e->free_regular : e->free_small;
    if (n > 0) {
      note(e, Event::contexts_reused);
      return cache[--n];
    }
  }
  {
    std::lock_guard<std::mutex> lk(g_rt->free_lock);
    Context *&head = k == ContextKind::REGULAR ? g_rt->free_regular : g_rt->free_small;
    if (Context *c = head) {
      head = c->next;
      if (e) note(e, Event::contexts_reused);
      return c;
    }
  }
  Context *c = context_create(k, stack_bytes(k), g_rt->p.quiet, g_rt->context_body);
  if (c && e) note(e, Event::contexts_created);
  return c;
}

Context *context_for_spark(Engine *e, const Task &t) {
  Context *c = get_context(e, ContextKind::SMALL);
  if (!c)
    fatal(
        "cannot map a %zu KiB stack for a spark context (out of memory or address space); "
        "lower --small-stack-size or -P",
        g_rt->p.small_stack_size / 1024);
  c->task = t;
  c->channel = static_cast<int>(t.join->channel);  // the forking context's (task.hpp)
  c->deadline = 0;  // started work: first in a deadline channel's order
  c->victim = -1;
  return c;
}

void release_context(Engine *e, Context *c) {
  c->bound = -1;
  int &n = c->kind == ContextKind::REGULAR ? e->n_free_regular : e->n_free_small;
  Context **cache = c->kind == ContextKind::REGULAR ? e->free_regular : e->free_small;
  if (n < kCacheMax) {
    cache[n++] = c;
    return;
  }
  std::lock_guard<std::mutex> lk(g_rt->free_lock);
  Context *&head = c->kind == ContextKind::REGULAR ? g_rt->free_regular : g_rt->free_small;
  c->next = head;
  head = c;
}

namespace {

// Call f(c) for every cached context (f may destroy c). The caches are left as they are.
template <typename F>
void for_each_cached(F f) {
  for (int i = 0; g_rt->engines && i < g_rt->n; i++) {
    if (!g_rt->engines[i]) continue;
    Engine *e = unowned(g_rt->engines[i]);  // its thread has stopped
    for (int k = 0; k < e->n_free_small; k++) f(e->free_small[k]);
    for (int k = 0; k < e->n_free_regular; k++) f(e->free_regular[k]);
  }
  for (Context *head : {g_rt->free_small, g_rt->free_regular}) {
    for (Context *c = head, *next; c; c = next) {
      next = c->next;
      f(c);
    }
  }
}

}  // namespace

void destroy_cached_contexts() {
  // From the lowest stack up. Stacks mapped one after the other merge into one mapping
  // (stack.hpp), and unmapping one from the middle of such a run splits it, which needs one
  // mapping more: at vm.max_map_count the kernel refuses, and the stack stays mapped (10^6
  // stacks unmapped in a random order lost most of them that way). From the lowest up, each is
  // at the end of its run. Without memory for the list: in cache order.
  std::size_t n = 0;
  for_each_cached([&n](Context *) { n++; });
  std::vector<Context *> all;
  try {
    all.reserve(n);
  } catch (const std::bad_alloc &) {}
  if (all.capacity() >= n) {
    for_each_cached([&all](Context *c) { all.push_back(c); });
    std::sort(all.begin(), all.end(),
              [](const Context *a, const Context *b) { return a->stack.sp < b->stack.sp; });
  } else {
    for_each_cached([](Context *c) { context_destroy(c); });
  }
  for (Context *c : all) context_destroy(c);
  for (int i = 0; g_rt->engines && i < g_rt->n; i++)
    if (Shared *e = g_rt->engines[i]) unowned(e)->n_free_small = unowned(e)->n_free_regular = 0;
  g_rt->free_small = g_rt->free_regular = nullptr;
}

}  // namespace mr::engine
