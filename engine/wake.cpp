// wake.cpp: the poster's side of the sleep/notify protocol (wake.hpp).
#include "config.h"

#include "wake.hpp"

#include <pthread.h>
#include <sched.h>
#include <semaphore.h>

#include <cstring>

#include "events.hpp"
#include "fatal.hpp"

namespace mr::engine {

bool work_visible(const Shared *self) {
  for (int i = 0; i < g_rt->n; i++) {
    const Shared *x = g_rt->engines[i];
    if (x->deque.published_estimate() > 0) return true;
    // relaxed, as the rest (the caller's fence): another engine's hand-off slot is work here
    // unless it is bound there.
    std::uintptr_t r = x->runnext.load(std::memory_order_relaxed);
    if (x != self && r != 0 && (r & kRunnextBound) == 0) return true;
  }
  return queued_work_maybe(self);
}

void retire_unstarted(Shared *x) {
  SleepSync &s = x->sleep;
  pthread_mutex_lock(&s.wake_lock);
  // relaxed: under the wake lock nobody else moves it out of SLEEPING or NOTIFIED.
  State st = s.state.load(std::memory_order_relaxed);
  if (st == State::SLEEPING) {
    g_rt->census.remove_sleeper();
  } else {
    // A notification was delivered (its sleeping unit went with the delivery): its deliverer
    // finds ABSENT in has_thread and keeps what it sent (wake_engine returns RETRY). No context
    // is ever handed here: a spawn bound to an engine waits for it to have a thread.
    MR_CHECK(st == State::NOTIFIED, "an engine without a thread left SLEEPING");
    MR_CHECK(s.action != Action::CONTEXT, "a context was handed to an engine without a thread");
  }
  // Never SLEEPING again: later notifiers find it WORKING and latch or refuse. (Not a transition
  // of the engine's: the engine never existed.)
  s.state.store(State::WORKING, std::memory_order_release);
  pthread_mutex_unlock(&s.wake_lock);
}

bool has_thread(Shared *t) {
  // acquire: pairs with the claimant's release store of RUNNING or ABSENT.
  StartState st = t->start.load(std::memory_order_acquire);
  if (st == StartState::UNCLAIMED &&
      t->start.compare_exchange_strong(st, StartState::CLAIMED, std::memory_order_acq_rel,
                                       std::memory_order_acquire)) {
    int rc = pthread_create(&t->thread, nullptr, g_rt->engine_thread, t);
    if (rc == 0) {
      t->start.store(StartState::RUNNING, std::memory_order_release);  // `thread` is written
      return true;
    }
    t->start.store(StartState::ABSENT, std::memory_order_release);
    retire_unstarted(t);
    warning(g_rt->p.quiet,
            "cannot start engine %d (--lazy-engines): %s; the runtime goes on without it", t->id,
            std::strerror(rc));
    return false;
  }
  // Claimed by another: its pthread_create takes microseconds.
  while (st == StartState::CLAIMED) {
    sched_yield();
    st = t->start.load(std::memory_order_acquire);
  }
  return st == StartState::RUNNING;
}

namespace {

// After a notification was delivered to engine t: t's thread exists or was just created (its
// first act is to consume the notification), or t will never have one and the notification is
// the deliverer's again (RETRY; retire_unstarted kept its units for it).
Sent started_or_retry(Shared *t, Action a, Sent r) {
  if (r != Sent::DELIVERED) return r;
  if (!has_thread(t)) return Sent::RETRY;
  trace::on_notify_sent(t->id, a);
  return r;
}

}  // namespace

Sent wake_engine(Shared *t, Action a, void *data) {
  return started_or_retry(t, a, try_wake_engine(t->sleep, g_rt->census, a, data));
}

Sent notify_engine(Shared *t, Action a, void *data) {
  return started_or_retry(t, a, try_notify_engine(t->sleep, g_rt->census, a, data));
}

// The sleeper chosen is the closest to origin (its tier order) and, within a tier, the one that
// fell asleep last (doc/design.md, "Which engine is woken").
bool wake_one_with_unit(int origin) {
  Engine *self = t_engine;
  const topo::Order &o = origin >= 0 ? g_rt->engines[origin]->order : g_rt->place.any;
  auto sleeping = [self](int v) {
    const Shared *x = g_rt->engines[v];
    // relaxed: only a hint to skip the lock; try_wake_engine decides under it.
    return x != self && x->sleep.state.load(std::memory_order_relaxed) == State::SLEEPING;
  };
  auto stamp = [](int v) { return g_rt->engines[v]->sleep_stamp.load(std::memory_order_relaxed); };
  for (int k = 0; k < topo::kTiers; k++) {
    std::uint64_t below = UINT64_MAX;
    for (;;) {
      int v = topo::latest_sleeper(o, o.tier_begin(k), o.tier_end[k], below, sleeping, stamp);
      if (v < 0) break;
      below = stamp(v);
      if (wake_engine(g_rt->engines[v], Action::WORKSTEAL_ADVICE,
                      reinterpret_cast<void *>(static_cast<std::intptr_t>(origin))) ==
          Sent::DELIVERED) {
        if (self) note(self, Event::notifications_sent);
        return true;
      }
    }
  }
  return false;
}

void wake_for_work(int origin) {
  if (!g_rt->census.try_claim_searcher()) return;
  if (!wake_one_with_unit(origin)) give_back_unit(origin);
}

void give_back_unit(int origin) {
  for (;;) {
    std::uint64_t old = g_rt->census.remove_searcher();
    if (Census::searching(old) != 1 || Census::sleeping(old) == 0) return;
    last_searcher_fence();  // proof P2
    if (!work_visible(nullptr)) return;
    if (!g_rt->census.try_claim_searcher()) return;  // someone else searches or nobody sleeps
    if (wake_one_with_unit(origin)) return;
    // every counted sleeper left SLEEPING under us: give the claimed unit back and re-check
  }
}

void schedule(Context *c) {
  if (c->kind == ContextKind::FOREIGN) {
    sem_post(c->wake);  // c is on the waiter's stack: not touched after the post
    return;
  }
  Engine *self = t_engine;
  if (!self) {
    // Once c is queued it may run and end, and MR_shutdown may then return: it first waits
    // for outside_posts to fall to zero, so the runtime outlives this call. relaxed increment:
    // it happens-before that wait's load through c's queueing, run and end; release decrement:
    // this call's reads of the runtime happen-before the wait's acquire load sees it.
    Runtime *rt = g_rt;
    rt->outside_posts.fetch_add(1, std::memory_order_relaxed);
    enqueue(c);
    rt->outside_posts.fetch_sub(1, std::memory_order_release);
    return;
  }
  // A context running on an engine made c runnable, and c may run there: c runs there next, in
  // the hand-off slot (a context it displaces goes to the queue it would have gone to). Not if
  // c is to be queued by deadline: the slot would run it before earlier deadlines.
  if (self->current && self->current != c && (c->bound < 0 || c->bound == self->id) &&
      (c->bound >= 0 || g_rt->channels[queue_channel(c)].kind != ChannelKind::DEADLINE)) {
    std::uintptr_t x = reinterpret_cast<std::uintptr_t>(c) | (c->bound < 0 ? 0 : kRunnextBound);
    std::uintptr_t old = fill_runnext(self->runnext, x);  // runnext.hpp
    if (old == 0) {
      work_posted(self->id);  // P1: the slot is where other engines look too
      return;
    }
    c = reinterpret_cast<Context *>(old & ~kRunnextBound);
  }
  enqueue(c);
}

void enqueue(Context *c) {
  Engine *self = t_engine;
  if (c->bound < 0) {
    g_rt->channels.push(queue_channel(c), c);
    work_posted(self ? self->id : -1);
    return;
  }
  Shared *t = g_rt->engines[c->bound];
  if (t == self) {  // its own engine (MR_yield): it looks at its bound queue before it sleeps
    t->bound.push(c);
    return;
  }
  // A sleeping target gets the context itself (never dropped: only through the lock).
  if (t->sleep.state.load(std::memory_order_relaxed) == State::SLEEPING &&
      wake_engine(t, Action::CONTEXT, c) == Sent::DELIVERED) {
    if (self) note(self, Event::notifications_sent);
    return;
  }
  t->bound.push(c);
  bound_post_fence();  // proof P3 (queue the context, then read the target's state)
  // Advice until the target is seen in a state that will re-check its queue by itself.
  Sent r = notify_engine(t, Action::CONTEXT_ADVICE, nullptr);
  if (self)
    note(self, r == Sent::DELIVERED ? Event::notifications_sent : Event::notifications_dropped);
}

}  // namespace mr::engine
