// cache.cpp: the free-context caches (cache.hpp).
#include "config.h"

#include "cache.hpp"

#include <mutex>

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

void destroy_cached_contexts() {
  for (int i = 0; g_rt->engines && i < g_rt->n; i++) {
    if (!g_rt->engines[i]) continue;
    Engine *e = unowned(g_rt->engines[i]);  // its thread has stopped
    for (int k = 0; k < e->n_free_small; k++) context_destroy(e->free_small[k]);
    for (int k = 0; k < e->n_free_regular; k++) context_destroy(e->free_regular[k]);
    e->n_free_small = e->n_free_regular = 0;
  }
  for (Context **head : {&g_rt->free_small, &g_rt->free_regular}) {
    while (Context *c = *head) {
      *head = c->next;
      context_destroy(c);
    }
  }
}

}  // namespace mr::engine
