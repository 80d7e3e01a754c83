// view.cpp: the inline fork and join of include/mrengine_view.h (the client's own code: the push,
// the pop loop and the join's look at the count, with their __atomic builtins) under GenMC,
// against a thief running engine/wsdeque.hpp's steal on the same deque (D1), and the arrivals
// of engine/join_count.hpp (J1). The parent forks BRANCHES branches inline, runs its own, and
// joins inline; the library's slow join is join.cpp's join_wait as the harness writes it. Each
// branch runs once, and whoever continues the parent sees every result. With SCENARIO_SLEEP the
// parent only forks one branch, and the thief instead falls asleep (P1): it announces itself in
// the census, runs the sleep fence and looks once more; the fork's post-work check must wake
// it, or its look must find the spark. With SCENARIO_LIBRARY_PUSH the branches are pushed by
// the library's deque push alone, with no fence after it (as join.cpp pushes a spark back), and
// joined inline. PUBLISH_BELOW (default 1) is the number of sparks kept published (H1): with 1
// the first branch is published and the others held until a thief takes the published one.
#include "harness.hpp"

#include <time.h>  // before semaphore.h (engine/sleep.hpp), which needs clockid_t

#undef MR_NO_INLINE_FORKS  // check_weak.sh's default: the library's calls
struct MR_EngineView;
const MR_EngineView *mr_weak_view_now();
#define MR_WEAK_VIEW_NOW mr_weak_view_now
#include "mrengine.h"

#include "engine/join_count.hpp"
#include "engine/sleep.hpp"
#include "engine/wsdeque.cpp"

#ifndef MR_INLINE_FORKS
#error "the inline fork and join are not compiled"
#endif

#ifndef BRANCHES
#define BRANCHES 2
#endif
#ifndef PUBLISH_BELOW
#define PUBLISH_BELOW 1
#endif
#ifndef STEALS
#define STEALS 2
#endif

// The context record, as far as J1 goes: the parent's saved continuation.
struct mr::engine::Context {
  int fiber;
};

using namespace mr::engine;

namespace {

WsDeque *deque;
MR_EngineView view;
AO_t census;  // the census word: sleepers in the high half, searchers in the low
AO_t pushed_count, run_local_count;
MR_SyncTerm st;
Context parent;
int results[BRANCHES + 1];  // 0: the parent's own branch
std::atomic<int> runs[BRANCHES + 1];
std::atomic<int> resumed;  // the parent went on past its join
std::atomic<bool> woken;   // SCENARIO_SLEEP: the fork's post-work check woke the sleeper

void branch(void *env) {
  std::intptr_t i = reinterpret_cast<std::intptr_t>(env);
  results[i] = 1;
  runs[i].fetch_add(1, std::memory_order_relaxed);
}

void parent_continues() {
  for (int r : results) assert(r == 1);
  resumed.fetch_add(1, std::memory_order_relaxed);
}

}  // namespace

// The view of the calling thread: only the owner runs the inline paths.
const MR_EngineView *mr_weak_view_now() { return &view; }

// The library's half of the inline paths. Not reached here: a fork that is not inline.
extern "C" void(MR_fork_new_child)(MR_SyncTerm *, MR_TaskFn, void *) { assert(!"not inline"); }
extern "C" void(MR_sync_term_init)(MR_SyncTerm *, unsigned) { assert(!"not inline"); }
// The library's publication (runtime/api.cpp, wake.hpp's publish_some): the deque's publish,
// then the post-work check's fence and census look (P1); a wake-up is recorded.
extern "C" void MR_publish_v4(void) {
  if (!deque->publish()) return;
  post_work_fence();
  AO_t w = __atomic_load_n(&census, __ATOMIC_RELAXED);  // relaxed: the fence orders it (P1)
  if ((w >> 32) != 0 && (w & 0xffffffffu) == 0) woken.store(true, std::memory_order_relaxed);
}

// join.cpp's join_wait after the inline loop: the branches ran inline arrive, and the parent
// suspends unless every branch had arrived.
bool slow;  // the owner's: its join took the library's path, which continues the parent or not
extern "C" void MR_join_slow_v2(MR_SyncTerm *s, unsigned ran) {
  slow = true;
  Join *j = reinterpret_cast<Join *>(s);
  std::uint32_t c = join_pending(j);
  if (c == ran + 1) {
    if (ran > 0) j->count.store(1, std::memory_order_relaxed);
    parent_continues();
    return;
  }
  if (ran > 0 && arrive_inline(j, ran) == ran + 1) {
    parent_continues();
    return;
  }
  parent.fiber = 1;
  if (parent_arrives(j, &parent)) parent_continues();
}

namespace {

void *owner(void *) {
  MR_sync_term_init(&st, BRANCHES + 1);
#ifdef SCENARIO_SLEEP
  MR_fork_new_child(&st, branch, reinterpret_cast<void *>(std::intptr_t{1}));
#else
#ifdef SCENARIO_LIBRARY_PUSH
  for (std::intptr_t i = 1; i <= BRANCHES; i++)
    deque->push(Task{branch, reinterpret_cast<void *>(i), reinterpret_cast<Join *>(&st)});
#else
  for (std::intptr_t i = 1; i <= BRANCHES; i++)
    MR_fork_new_child(&st, branch, reinterpret_cast<void *>(i));
#endif
  branch(nullptr);
  MR_join_and_continue(&st);
  if (!slow) parent_continues();  // the inline join returned: every branch had arrived
#endif
  return nullptr;
}

// A stolen spark: its three words, run, and its arrival (join.cpp's finish_task).
void run_stolen(const Task &t) {
  std::intptr_t i = reinterpret_cast<std::intptr_t>(t.env);
  assert(t.fn == branch && i >= 1 && i <= BRANCHES && t.join == reinterpret_cast<Join *>(&st));
  t.fn(t.env);
  if (arrive_at_join(t.join, 1) == 1) {  // the last arrival resumes the parent
    Context *p = t.join->parent;
    assert(p == &parent && p->fiber == 1);
    parent_continues();
  }
}

bool slept;  // SCENARIO_SLEEP: the thief's last look found nothing

void *thief(void *) {
  Task t;
#ifdef SCENARIO_SLEEP
  // Census::searcher_to_sleeper's RMW on the census word, then the sleep fence and the last look.
  __atomic_fetch_add(&census, AO_t{1} << 32, __ATOMIC_SEQ_CST);
  std::atomic_thread_fence(std::memory_order_seq_cst);  // sleep_fence (engine/sleep.hpp)
  if (deque->steal(t) == WsDeque::Steal::TAKEN)
    run_stolen(t);
  else
    slept = true;
#else
  for (int k = 0; k < STEALS; k++)
    if (deque->steal(t) == WsDeque::Steal::TAKEN) run_stolen(t);
#endif
  return nullptr;
}

}  // namespace

int main() {
  deque = new WsDeque(3, PUBLISH_BELOW);
  view.deque_top = static_cast<const volatile AO_t *>(deque->top_address());
  view.deque_bottom = static_cast<const volatile AO_t *>(deque->held_address());
  view.deque_published = static_cast<volatile AO_t *>(const_cast<void *>(deque->bottom_address()));
  view.publish_below = PUBLISH_BELOW;
  view.deque_top_copy =
      static_cast<volatile AO_t *>(const_cast<void *>(deque->top_cache_address()));
  view.publish_wanted = static_cast<volatile AO_t *>(const_cast<void *>(deque->wanted_address()));
  view.version = MR_ENGINE_VIEW_VERSION;
  view.deque_array = static_cast<MR_SparkArray *const volatile *>(deque->array_address());
  view.census = &census;
  view.sparks_pushed = &pushed_count;
  view.sparks_run_local = &run_local_count;
  pthread_t to, th;
  pthread_create(&to, nullptr, owner, nullptr);
  pthread_create(&th, nullptr, thief, nullptr);
  pthread_join(to, nullptr);
  pthread_join(th, nullptr);
#ifdef SCENARIO_SLEEP
  // No lost wake-up: the thief does not sleep unwoken while the spark waits in the deque.
  assert(!(slept && !woken.load(std::memory_order_relaxed) && deque->published_estimate() > 0));
#else
  for (auto &n : runs) assert(n.load(std::memory_order_relaxed) == 1);
  assert(resumed.load(std::memory_order_relaxed) == 1);
#endif
  return 0;
}
