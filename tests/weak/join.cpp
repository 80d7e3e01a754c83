// join.cpp: the join hand-over (doc/design.md J1) under GenMC, with the engine's own steps on
// the count (engine/join_count.hpp). BRANCHES threads run a branch each (a plain result) and
// arrive; the parent joins as join.cpp's join_wait does: done if every branch arrived, else it
// saves its continuation (a plain word of its context) and arrives, and the last arrival resumes
// it. With SCENARIO_INLINE the parent first runs one more branch itself and arrives for it.
// Whoever continues the parent reads every result, and a branch that resumes it reads the saved
// continuation: a missing order is a race on a plain word (or a stale value), which GenMC reports.
#include "harness.hpp"

#include "engine/join_count.hpp"

#ifndef BRANCHES
#define BRANCHES 2
#endif
#ifdef SCENARIO_INLINE
#define INLINE 1  // branches the parent runs itself
#else
#define INLINE 0
#endif

// The context record, as far as J1 goes: the parent's saved continuation.
struct mr::engine::Context {
  int fiber;
};

using namespace mr::engine;

namespace {

Join join;
Context parent;
int results[BRANCHES + INLINE];
std::atomic<int> resumed;  // how many times the parent went on past its join

// The parent goes on past its join (on whatever thread resumed it): every branch's result is
// there.
void parent_continues() {
  for (int r : results) assert(r == 1);
  resumed.fetch_add(1, std::memory_order_relaxed);
}

void *branch(void *arg) {
  results[reinterpret_cast<std::intptr_t>(arg)] = 1;
  if (arrive_at_join(&join, 1) == 1) {  // the last arrival resumes the parent
    Context *p = join.parent;
    assert(p == &parent && p->fiber == 1);
    parent_continues();
  }
  return nullptr;
}

// join.cpp's join_wait and suspend_on_join, on the calling thread.
void *parent_joins(void *) {
  std::uint32_t ran = INLINE;
  if (INLINE) results[BRANCHES] = 1;
  std::uint32_t c = join_pending(&join);
  if (c == ran + 1) {  // only the parent's own arrivals are left: nobody else writes the count
    if (ran > 0) join.count.store(1, std::memory_order_relaxed);
    parent_continues();
    return nullptr;
  }
  if (ran > 0 && arrive_inline(&join, ran) == ran + 1) {
    parent_continues();
    return nullptr;
  }
  parent.fiber = 1;  // the continuation is saved before the parent's own arrival
  if (parent_arrives(&join, &parent)) parent_continues();
  return nullptr;
}

}  // namespace

int main() {
  join.count.store(BRANCHES + INLINE + 1, std::memory_order_relaxed);
  pthread_t t[BRANCHES + 1];
  for (std::intptr_t i = 0; i < BRANCHES; i++)
    pthread_create(&t[i], nullptr, branch, reinterpret_cast<void *>(i));
  pthread_create(&t[BRANCHES], nullptr, parent_joins, nullptr);
  for (pthread_t &x : t) pthread_join(x, nullptr);
  assert(resumed.load(std::memory_order_relaxed) == 1);  // once, never twice, never lost
  return 0;
}
