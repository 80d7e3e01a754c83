// lifecycle.cpp: start, the engine threads, and the two shutdowns (lifecycle.hpp).
#include "config.h"

#include "lifecycle.hpp"

#include <pthread.h>
#include <sched.h>
#include <semaphore.h>

#include <boost/context/fiber.hpp>
#include <boost/scope_exit.hpp>

#include <new>
#include <string>

#include "blocking.hpp"
#include "cache.hpp"
#include "close.hpp"
#include "engine.hpp"
#include "fatal.hpp"
#include "fork.hpp"
#include "gc.hpp"
#include "idle.hpp"
#include "io_wait.hpp"
#include "join.hpp"
#include "poll_wait.hpp"
#include "stats.hpp"
#include "trace.hpp"
#include "wake.hpp"
#include "watchdog.hpp"

namespace mr::engine {

namespace bctx = boost::context;

namespace {

// Called only by engine e's own thread: bind it to its planned PU, or warn and stay unpinned.
void pin_self(Engine *e) {
  if (e->planned_pu < 0 || !g_rt->place.topo) return;
  std::string why;
  if (topo::bind_thread(g_rt->place.topo, e->planned_pu, &why))
    e->pu.store(e->planned_pu, std::memory_order_release);
  else
    warning(g_rt->p.quiet, "cannot bind engine %d to processing unit %d: %s; it runs unpinned",
            e->id, e->planned_pu, why.c_str());
}

// The thread of engines 1..N-1 (Runtime::engine_thread).
void *engine_main(void *arg) {
  Engine *e = unowned(static_cast<Shared *>(arg));  // handed to this thread, its owner
  gc::thread_begin();                               // a collector's, before anything else
  san::init_thread(e->sched_san);                   // the scheduler runs on the thread's own stack
  gc::add_own(&e->sched_gc);
  (void)overflow::altstack_on(e->altstack);
  set_current(e);
  pin_self(e);
  if (!e->start_asleep) sem_post(&g_rt->started);  // MR_init waits only for engines it started
  scheduler(e);
  set_current(nullptr);
  overflow::altstack_off(e->altstack);
  gc::remove(&e->sched_gc);
  gc::thread_end();  // last of all
  return nullptr;
}

// Free the runtime's records (and the cached contexts); g_rt is nullptr after. Any state of a
// partly built runtime, with no engine thread running.
void destroy_runtime() {
  if (g_rt->tracer) g_rt->tracer->finish();  // while the engines' counters are there
  delete g_rt->tracer;
  destroy_cached_contexts();
  io_stop(g_rt);
  poll_stop(g_rt);
  gc::remove(&g_rt->primordial.gc);
  g_rt->injector.unlist_roots();
  for (int i = 0; g_rt->engines && i < g_rt->n; i++) {
    if (g_rt->engines[i]) gc::remove(&unowned(g_rt->engines[i])->sched_gc);
    delete unowned(g_rt->engines[i]);
  }
  delete[] g_rt->engines;
  topo::release(&g_rt->place);
  if (g_rt->started_init) sem_destroy(&g_rt->started);
  delete g_rt;
  g_rt = nullptr;
  gc::uninstall();  // every thread the runtime made has ended
  // store-release: pairs with the next start()'s exchange, which then sees this runtime gone.
  g_claimed.store(false, std::memory_order_release);
}

// Any thread: the shutdown notification to every engine but engine 0 (P4).
void notify_shutdown() {
  for (int i = 1; i < g_rt->n; i++)
    (void)try_notify_engine(g_rt->engines[i]->sleep, g_rt->census, Action::SHUTDOWN, nullptr);
}

// Make sure no lazy engine that never started ever will, and give back the sleeping unit it
// holds. The other engines' threads are then all known: wait for any that someone is creating
// right now. Called only after the shutdown flag is set.
void retire_lazy_engines() {
  for (int i = 1; g_rt->p.lazy_engines && i < g_rt->n; i++) {
    Shared *x = g_rt->engines[i];
    StartState st = StartState::UNCLAIMED;
    // acq_rel: the claim (design.md section 15); failure acquire, as has_thread's loads.
    if (x->start.compare_exchange_strong(st, StartState::ABSENT, std::memory_order_acq_rel,
                                         std::memory_order_acquire))
      retire_unstarted(x);
    else
      (void)has_thread(x);  // claimed by another: wait until it runs or is retired
  }
}

// Stop every engine thread but the caller's (engine 0's): the shutdown flag and notifications
// (P4), the lazy engines that never started, then join the threads that did.
void stop_engine_threads() {
  watchdog_stop();
  set_inline_forks(SlowReason::SHUTDOWN, true);  // MR_shutdown_now: a join suspends
  raise_shutdown(g_rt->shutdown);                // proof P4 (the flag, then each engine's state)
  retire_lazy_engines();
  notify_shutdown();
  for (int i = 1; i < g_rt->n; i++) {
    Shared *x = g_rt->engines[i];
    // acquire: pairs with the creator's release store after pthread_create wrote x->thread.
    if (x->start.load(std::memory_order_acquire) == StartState::RUNNING)
      pthread_join(x->thread, nullptr);
  }
}

// Debug build: at the end of MR_shutdown every spark pushed was run (popped or stolen), every
// suspension was resumed, and no spark is left. The counters and the deques are quiescent.
void check_drained() {
#ifdef MR_DEBUG
  std::uint64_t pushed = 0, run = 0, suspended = 0, resumed = 0;
  for (int i = 0; i < g_rt->n; i++) {
    const Counters &c = g_rt->engines[i]->stats;
    pushed += c.sparks_pushed.load(std::memory_order_relaxed);
    run += c.sparks_run_local.load(std::memory_order_relaxed) +
           c.sparks_stolen.load(std::memory_order_relaxed);
    suspended += c.contexts_suspended.load(std::memory_order_relaxed);
    resumed += c.contexts_resumed.load(std::memory_order_relaxed);
    MR_CHECK(g_rt->engines[i]->deque.size_estimate() == 0, "a spark left on a deque at shutdown");
  }
  MR_CHECK(pushed == run, "counters: sparks pushed != sparks run at shutdown");
  MR_CHECK(suspended == resumed, "counters: contexts suspended != resumed at shutdown");
  MR_CHECK(!g_rt->injector.maybe_nonempty(), "an injected spark left at shutdown");
#endif
}

// Engine 0's thread leaves the runtime and everything is freed, once no other engine runs:
// engine 0's scheduler fiber is suspended in run_context (or never started), holding nothing, so
// it is forgotten. The sparks and contexts nobody will run are counted into *dropped (if not
// null), in all and per channel: every context still alive once the caches are freed is queued
// or waiting (or was dropped by MR_shutdown, which counted it then).
void free_runtime(Engine *e0, MR_ShutdownReport *dropped) {
  overflow::altstack_off(e0->altstack);
  overflow::uninstall();
  gc::remove(&e0->sched_gc);  // before its stack goes
  fiber_forget(e0->sched, e0->sched_stack, e0->sched_san);
  topo::restore_binding(g_rt->place);
  std::uint64_t w = g_rt->census.load();
  MR_CHECK(Census::searching(w) == 0 && Census::sleeping(w) == 0,
           "census not zero after shutdown (a searching or sleeping unit was lost)");
  // Sparks first: their joins may be on the stacks of contexts freed below.
  std::uint64_t per_sparks[kMaxChannels] = {}, per_contexts[kMaxChannels] = {};
  Task t;
  for (int i = 0; i < g_rt->n; i++)
    while (g_rt->engines[i]->deque.pop(t)) per_sparks[t.join->channel]++;  // no thief is left
  while (g_rt->injector.pop(&t)) per_sparks[t.join->channel]++;
  // The on_drop of what is left, while every stack is mapped: a future it signals may queue
  // a waiter (unqueued and freed below, never run) or wake a thread.
  call_on_drops_at_stop();
  // Unqueue what the channels still hold (a deadline channel's tree links its contexts, and a
  // linked context must not be destroyed); context_drop_all counts and frees them below.
  for (int ch = 0; ch < g_rt->channels.count(); ch++)
    while (g_rt->channels.pop(ch)) {}
  // Timers before any stack goes: a sleeping context's timer is on its stack.
  for (int i = 0; i < g_rt->n; i++) (void)g_rt->engines[i]->timers.drop_all();
  // The free contexts first, so that what context_drop_all finds is what nobody will run.
  destroy_cached_contexts();
  (void)context_drop_all(per_contexts);
  if (dropped) report_drops(dropped, per_contexts, per_sparks);
  g_running.store(false, std::memory_order_release);
  set_current(nullptr);
  destroy_runtime();
}

// The end of both shutdowns, on the primordial context (engine e = engine 0). `drained`: every
// spawned context has finished (MR_shutdown).
void finish_stop(Engine *e, MR_ShutdownReport *dropped, bool drained) {
  // A thread that is not an engine may still be inside schedule(), posting a context that has
  // since run and ended: it reads the engines until it leaves (acquire: pairs with its release).
  while (g_rt->outside_posts.load(std::memory_order_acquire) != 0) sched_yield();
  stop_engine_threads();
  // MR_shutdown: every context has finished, so every backup is idle or about to be.
  // MR_shutdown_now: a backup's context may still be in its region; it is queued (and dropped)
  // when the region ends, and the backup leaves after that.
  stop_backups();
  if (drained) check_drained();
  if (g_rt->p.print_stats) print_stats(stderr);
  free_runtime(e, dropped);
}

// start()'s steps, in order. Each leaves what it made in g_rt, where start's one guard frees it
// if a later step fails.

// The engines' records and the semaphore their threads post. Returns 0 or MR_ENOMEM.
int make_engines() {
  if (sem_init(&g_rt->started, 0, 0) != 0) return MR_ENOMEM;
  g_rt->started_init = true;
  g_rt->engines = new (std::nothrow) Shared *[static_cast<std::size_t>(g_rt->n)]();
  if (!g_rt->engines) return MR_ENOMEM;
  for (int i = 0; i < g_rt->n; i++) {
    Engine *e = new (std::nothrow) Engine(i);
    g_rt->engines[i] = e;
    if (!e) return MR_ENOMEM;
    e->search.spin_budget = full_spin_rounds();
    // The engines that could steal: one published spark each at most is kept ahead (H1).
    e->deque.set_publish_below(g_rt->n - 1);  // as set_in_region's outside a region
    e->sleep.park = g_rt->p.park;
    e->sleep.id = i;
  }
  return 0;
}

// The engines' epoll instances (MR_CONFIG_FD_WAITS), the trace's slots and --trace's file.
// Returns 0 or a negative MR_E* code with *err.
int open_io_and_trace(std::string *err) {
  if (g_rt->p.fd_waits) {
    if (int rc = io_start(g_rt); rc != 0) {
      if (err) *err = "cannot create the engines' epoll instances (MR_CONFIG_FD_WAITS)";
      return rc;
    }
  }
  g_rt->tracer = new (std::nothrow) trace::Tracer;
  if (!g_rt->tracer) return MR_ENOMEM;
  return g_rt->tracer->open(g_rt->n, g_rt->p.trace_path, err);
}

// The primordial context (the caller's own stack) as engine 0's, the pinning plan and victim
// orders of every engine, engine 0's scheduler fiber. Returns 0 or MR_ENOMEM with *err.
int plan_engines(std::string *err) {
  Engine *e0 = unowned(g_rt->engines[0]);                           // the caller becomes its owner
  e0->start.store(StartState::RUNNING, std::memory_order_relaxed);  // the caller's thread
  g_rt->primordial.kind = ContextKind::PRIMORDIAL;
  g_rt->primordial.bound = 0;
  san::init_thread(g_rt->primordial.san);  // the caller's own stack
  gc::add_own(&g_rt->primordial.gc);
  e0->current = &g_rt->primordial;
  try {
    topo::place(&g_rt->place, g_rt->n, g_rt->p.pinning, g_rt->p.quiet);
    for (int i = 0; i < g_rt->n; i++) {
      unowned(g_rt->engines[i])->planned_pu = g_rt->place.plan[static_cast<std::size_t>(i)];
      g_rt->engines[i]->order = std::move(g_rt->place.orders[static_cast<std::size_t>(i)]);
    }
    e0->sched = make_fiber(256 * 1024, g_rt->p.quiet, &e0->sched_stack, [e0](bctx::fiber &&from) {
      (void)from;
      scheduler(e0);
      fatal("engine 0's scheduler ended while the runtime runs");
      return bctx::fiber{};
    });
    san::init_stack(e0->sched_san, e0->sched_stack);
    gc::add(&e0->sched_gc, e0->sched_stack);
  } catch (const std::bad_alloc &) {
    if (err) *err = "out of memory while starting the runtime";
    return MR_ENOMEM;
  }
  return 0;
}

// What generated code reads inline (MR_EngineView), for every engine.
void fill_views() {
  for (int i = 0; i < g_rt->n; i++) {
    Shared *e = g_rt->engines[i];
    e->view.deque_top = static_cast<const volatile AO_t *>(e->deque.top_address());
    e->view.deque_bottom = static_cast<const volatile AO_t *>(e->deque.held_address());
    e->view.deque_published =
        static_cast<volatile AO_t *>(const_cast<void *>(e->deque.bottom_address()));
    e->view.publish_below = static_cast<AO_t>(g_rt->n - 1);
    e->view.deque_top_copy =
        static_cast<volatile AO_t *>(const_cast<void *>(e->deque.top_cache_address()));
    // MR_par_cond_local_wsdeque_length (mrengine_view.h) reads publish_wanted & 1 as a request.
    static_assert(WsDeque::kAsked == 1 && WsDeque::kShort == 2, "publish_wanted's bits");
    e->view.publish_wanted =
        static_cast<volatile AO_t *>(const_cast<void *>(e->deque.wanted_address()));
    e->view.spark_threshold =
        static_cast<AO_t>(g_rt->p.granularity_factor) * static_cast<AO_t>(g_rt->n);
    e->view.version = MR_ENGINE_VIEW_VERSION;
    e->view.engine = static_cast<AO_t>(i);
    e->view.deque_array = static_cast<MR_SparkArray *const volatile *>(e->deque.array_address());
    e->view.census = static_cast<const volatile AO_t *>(g_rt->census.word_address());
    e->view.sparks_pushed = reinterpret_cast<volatile AO_t *>(&e->stats.sparks_pushed);
    e->view.sparks_run_local = reinterpret_cast<volatile AO_t *>(&e->stats.sparks_run_local);
  }
}

// The caller becomes engine 0 (bound, with its overflow handler), lazy engines count as
// sleepers, a --trace begins, and the runtime is running.
void enter_engine0() {
  Engine *e0 = unowned(g_rt->engines[0]);
  set_current(e0);
  pin_self(e0);
  overflow::install(context_on_this_thread);
  (void)overflow::altstack_on(e0->altstack);
  if (g_rt->p.lazy_engines) {
    // Engines 1..N-1 sleep without a thread; the first notification delivered to one starts it
    // (wake.cpp). They count as sleepers, so the post-work check (P1) wakes them.
    for (int i = 1; i < g_rt->n; i++) {
      unowned(g_rt->engines[i])->start_asleep = true;
      g_rt->engines[i]->sleep.state.store(State::SLEEPING, std::memory_order_relaxed);
    }
    g_rt->census.start_with_sleepers(static_cast<std::uint32_t>(g_rt->n - 1));
  }
  g_rt->tracer->begin_at_init();
  // store-release: publishes g_rt (and the lazy engines' states) to threads that test running().
  g_running.store(true, std::memory_order_release);
}

// The threads of engines 1..N-1 (none with --lazy-engines), and the wait until each is bound
// and running (so MR_engine_cpu is exact when MR_init returns). Returns 0, or MR_EAGAIN with
// *err, the threads started so far running.
int start_engine_threads(std::string *err) {
  int created = 1;
  for (int i = 1; i < g_rt->n && !g_rt->p.lazy_engines; i++) {
    Shared *e = g_rt->engines[i];
    if (pthread_create(&e->thread, nullptr, engine_main, e) != 0) {
      if (err)
        *err =
            "cannot create engine thread " + std::to_string(i) + " of " + std::to_string(g_rt->n);
      return MR_EAGAIN;
    }
    e->start.store(StartState::RUNNING, std::memory_order_release);  // `thread` is written
    created++;
  }
  for (int i = 1; i < created; i++) sem_wait_posted(&g_rt->started);
  return 0;
}

// Is the caller the primordial context itself, not a branch the library's join runs inline on
// its stack, nor a blocking region run in place? (Stolen, that branch or region would not be the
// primordial; either way the primordial's join or region is unfinished.)
bool at_primordial(const Engine *e) {
  const Context &p = g_rt->primordial;
  return e && e->id == 0 && e->current == &p && p.inline_branches == 0 && p.blocking_depth == 0;
}

}  // namespace

int start(const Params &p, std::string *err) {
  // acquire: pairs with destroy_runtime's release, so the last runtime's frees come before.
  if (g_claimed.exchange(true, std::memory_order_acquire)) {
    if (err) *err = "MR_init called while the runtime is running";
    return MR_EBUSY;
  }
  watch_forks();  // the child of a fork() starts with no runtime (fork.hpp)
  g_rt = new (std::nothrow) Runtime;
  if (!g_rt) {
    g_claimed.store(false, std::memory_order_release);  // as destroy_runtime's
    return MR_ENOMEM;
  }
  g_rt->p = p;
  g_rt->n = p.engines;
  gc::install(&p.gc);  // before the first thread or stack the hooks must see
  g_rt->injector.list_roots();
  g_rt->context_body = context_body;
  g_rt->engine_thread = engine_main;
  g_rt->spawned.count.store(1, std::memory_order_relaxed);       // the primordial's own unit
  g_rt->spawned_drop.count.store(1, std::memory_order_relaxed);  // its own unit, never given
  g_rt->timing = p.print_stats || p.policy == Policy::ROUND_ROBIN;
  // A start that fails (or throws) frees the runtime here, once: before engine 0 entered it,
  // its records; after, as a shutdown does, once the engine threads started so far are joined.
  enum class Undo { RECORDS, RUNNING, NOTHING } undo = Undo::RECORDS;
  BOOST_SCOPE_EXIT(&undo) {
    if (undo == Undo::RECORDS) {
      destroy_runtime();
    } else if (undo == Undo::RUNNING) {
      stop_engine_threads();
      free_runtime(unowned(g_rt->engines[0]), nullptr);
    }
  }
  BOOST_SCOPE_EXIT_END
  int rc = make_engines();
  if (rc == 0) rc = poll_start(g_rt);
  if (rc == 0) rc = open_io_and_trace(err);
  if (rc == 0) rc = plan_engines(err);
  if (rc != 0) return rc;
  fill_views();
  enter_engine0();
  undo = Undo::RUNNING;
  rc = start_engine_threads(err);
  if (rc != 0) return rc;
  watchdog_start();
  undo = Undo::NOTHING;
  return 0;
}

int stop(MR_ShutdownReport *dropped) {
  Engine *e = this_engine();
  if (!at_primordial(e)) return MR_ENOTENGINE;
  // Drop channels' work is dropped from now on (close.hpp).
  begin_closing();
  // Wait for every spawned context of a complete channel, and close the counter at zero so
  // that no spawn can slip in after: the primordial always takes the suspend path (its
  // decrement is the last or it is resumed by the last one).
  suspend_on_join(e, &g_rt->spawned);
  // Drained (the debug build checks) unless a drop channel has left work behind.
  bool drained = g_rt->spawned_drop.count.load(std::memory_order_relaxed) == 1;
  for (int ch = 0; ch < g_rt->channels.count(); ch++)
    drained = drained && g_rt->channels[ch].sparks_dropped.load(std::memory_order_relaxed) == 0;
  finish_stop(e, dropped, drained);
  return 0;
}

int stop_now(MR_ShutdownReport *dropped) {
  Engine *e = this_engine();
  if (!at_primordial(e)) return MR_ENOTENGINE;
  finish_stop(e, dropped, false);
  return 0;
}

}  // namespace mr::engine
