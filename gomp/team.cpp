// team.cpp: start-up, the environment, teams (GOMP_parallel), the barrier and the pool of
// member threads for teams larger than the engines (doc/gomp.md, "Which thread runs what").
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>
#include <ctype.h>

#include <algorithm>
#include <condition_variable>
#include <deque>
#include <thread>

#include "engine/cpu_relax.hpp"
#include "gomp.hpp"

namespace mrg {

// Never destroyed: threads of ours may still read it while the program exits.
Globals &G = *new Globals;

void unsupported(const char *symbol, const char *detail) {
  if (detail)
    fprintf(stderr, "mrengine-gomp: %s is not supported (%s)\n", symbol, detail);
  else
    fprintf(stderr, "mrengine-gomp: %s is not supported\n", symbol);
  fflush(stderr);
  abort();
}

void die(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fputs("mrengine-gomp: ", stderr);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
  abort();
}

namespace {

// ---- the environment ------------------------------------------------------------------------

int num_procs() {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) == 0) return std::max(1, CPU_COUNT(&set));
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  return n > 0 ? static_cast<int>(n) : 1;
}

bool env_bool(const char *name, bool *out) {
  const char *s = getenv(name);
  if (!s) return false;
  while (*s == ' ') s++;
  if (strncasecmp(s, "true", 4) == 0) *out = true;
  else if (strncasecmp(s, "false", 5) == 0) *out = false;
  else return false;
  return true;
}

bool env_long(const char *name, long *out) {
  const char *s = getenv(name);
  if (!s || !*s) return false;
  char *end;
  long v = strtol(s, &end, 10);
  while (*end == ' ') end++;
  if (*end) return false;
  *out = v;
  return true;
}

// OMP_SCHEDULE: [monotonic:|nonmonotonic:]kind[,chunk]
void parse_schedule(Icv *icv) {
  const char *s = getenv("OMP_SCHEDULE");
  if (!s) return;
  while (*s == ' ') s++;
  if (const char *colon = strchr(s, ':')) s = colon + 1;
  int kind;
  size_t len;
  if (strncasecmp(s, "static", 6) == 0) kind = SCHED_STATIC, len = 6;
  else if (strncasecmp(s, "dynamic", 7) == 0) kind = SCHED_DYNAMIC, len = 7;
  else if (strncasecmp(s, "guided", 6) == 0) kind = SCHED_GUIDED, len = 6;
  else if (strncasecmp(s, "auto", 4) == 0) kind = SCHED_AUTO, len = 4;
  else return;
  s += len;
  int chunk = 0;
  if (*s == ',') chunk = atoi(s + 1);
  icv->sched = kind;
  icv->chunk = chunk > 0 ? chunk : 0;
}

// OMP_STACKSIZE: a number with an optional B, K, M or G suffix (K when none), in bytes.
size_t env_stacksize() {
  const char *s = getenv("OMP_STACKSIZE");
  if (!s) return 0;
  char *end;
  unsigned long long v = strtoull(s, &end, 10);
  while (*end == ' ') end++;
  switch (*end) {
    case 'b': case 'B': break;
    case 'm': case 'M': v <<= 20; break;
    case 'g': case 'G': v <<= 30; break;
    default: v <<= 10; break;
  }
  return static_cast<size_t>(v);
}

void read_environment() {
  int procs = num_procs();
  if (const char *s = getenv("OMP_NUM_THREADS")) {
    while (*s) {
      char *end;
      long v = strtol(s, &end, 10);
      if (end == s || v < 1) break;
      G.nthreads_list.push_back(static_cast<int>(std::min(v, 1L << 20)));
      s = end;
      if (*s != ',') break;
      s++;
    }
  }
  G.initial.nthreads = G.nthreads_list.empty() ? procs : G.nthreads_list[0];
  bool b;
  if (env_bool("OMP_DYNAMIC", &b)) G.initial.dyn = b;
  parse_schedule(&G.initial);
  long v;
  // A list of several team sizes asks for nesting; OMP_NESTED is the deprecated switch.
  int &levels = G.initial.max_active_levels;
  if (G.nthreads_list.size() > 1) levels = static_cast<int>(G.nthreads_list.size());
  if (env_bool("OMP_NESTED", &b)) levels = b ? 255 : 1;
  if (env_long("OMP_MAX_ACTIVE_LEVELS", &v) && v >= 0) levels = static_cast<int>(std::min(v, 255L));
  if (env_long("OMP_THREAD_LIMIT", &v) && v > 0) G.thread_limit = static_cast<int>(std::min(v, 1L << 20));
  if (env_long("OMP_MAX_TASK_PRIORITY", &v) && v >= 0) G.max_task_priority = static_cast<int>(v);
  if (const char *s = getenv("OMP_ALLOCATOR")) {
    // The predefined allocators by name, numbered as omp_allocator_handle_t numbers them.
    static const char *const names[] = {"omp_default_mem_alloc", "omp_large_cap_mem_alloc",
                                        "omp_const_mem_alloc",   "omp_high_bw_mem_alloc",
                                        "omp_low_lat_mem_alloc", "omp_cgroup_mem_alloc",
                                        "omp_pteam_mem_alloc",   "omp_thread_mem_alloc"};
    while (*s == ' ') s++;
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
      if (strncmp(s, names[i], strlen(names[i])) == 0 && !isalnum(s[strlen(names[i])]) &&
          s[strlen(names[i])] != '_')
        G.initial.def_allocator = i + 1;
  }
  if (env_bool("OMP_CANCELLATION", &b)) G.cancel_var = b;
  if (const char *s = getenv("OMP_WAIT_POLICY")) {
    if (strcasecmp(s, "active") == 0) G.wait_policy = 1;
    else if (strcasecmp(s, "passive") == 0) G.wait_policy = 0;
  }
}

std::once_flag env_once;
std::mutex init_lock;
// Set once the runtime is known to run and G.engines holds its engine count (the program's own
// mrengine, or the one started here); it never stops (doc/gomp.md).
std::atomic<bool> runtime_known{false};

// The initial task of a thread that is in no parallel region (and its team of one).
thread_local std::unique_ptr<Task> tl_initial;
thread_local std::unique_ptr<Team> tl_initial_team;

}  // namespace

// ---- the runtime ----------------------------------------------------------------------------

void ensure_runtime() {
  // acquire: pairs with the release store below, so G.engines (written before it) is visible.
  if (runtime_known.load(std::memory_order_acquire)) return;
  std::call_once(env_once, read_environment);
  std::lock_guard<std::mutex> lk(init_lock);
  if (runtime_known.load(std::memory_order_relaxed)) return;  // under the lock: ordered by it
  if (MR_num_engines() == 0) {
    MR_Config cfg;
    MR_config_default(&cfg);
    // One engine per thread the first team asks for, at most one per processor; more threads
    // than that are threads of our own (doc/gomp.md). MRENGINE_OPTIONS, applied after these
    // fields by MR_init, overrides every choice made here.
    int procs = num_procs();
    cfg.engines = std::max(1, std::min(procs, G.initial.nthreads));
    if (G.wait_policy == 1) cfg.spin_rounds = 10000;  // active: search long before sleeping
    else if (G.wait_policy == 0) cfg.spin_rounds = 0;  // passive: sleep at once
    size_t stack = env_stacksize();
    // Implicit tasks run on spawned contexts and explicit ones on spark contexts: both get the
    // size a thread's stack would have (OMP_STACKSIZE, or a generous default; only touched
    // pages cost memory).
    cfg.stack_size = stack ? stack : (size_t)8 << 20;
    cfg.small_stack_size = stack ? stack : (size_t)2 << 20;
    // The task cut-off (task.cpp) is mrengine's granularity test: 64 sparks per engine on the
    // creator's deque before tasks run undeferred, libgomp's 64 queued tasks per thread (on UTS
    // T3, 2 engines, the default 8 left the thieves too little to take).
    cfg.options = "--granularity-factor=64";
    int rc = MR_init(&cfg);
    if (rc != 0 && rc != MR_EBUSY)
      die("cannot start mrengine: %s (%s)", MR_strerror(rc), MR_init_error_message());
  }
  // Written once, here, before the release store that lets every other caller skip the lock.
  G.engines = MR_num_engines();
  runtime_known.store(true, std::memory_order_release);
}

__thread Task *tl_current = nullptr;

Task *initial_task() {
  if (!tl_initial) {
    std::call_once(env_once, read_environment);
    tl_initial_team = std::make_unique<Team>();
    Team *team = tl_initial_team.get();
    team->n = 1;
    team->ancestor_tid = {0};
    team->ancestor_size = {1};
    tl_initial = std::make_unique<Task>();
    tl_initial->team = team;
    tl_initial->implicit = true;
    tl_initial->icv = G.initial;
  }
  tl_current = tl_initial.get();
  return tl_current;
}

// ---- the barrier ----------------------------------------------------------------------------

// A barrier of a cancellable region returns early once the region is cancelled (the canceller
// releases the waiters of the current generation, see GOMP_cancel).
bool team_barrier_cancellable(Team *t) {
  // acquire: a cancelled region's members see what the canceller wrote.
  if (t->cancelled.load(std::memory_order_acquire)) return true;
  team_barrier(t);
  // acquire: as above.
  return t->cancelled.load(std::memory_order_acquire);
}

void team_barrier(Team *t) {
  if (t->n == 1) return;
  Task *self = current();
  // acquire: the generation can only move on once we have arrived, so this is ours.
  unsigned g = t->generation.load(std::memory_order_acquire);
  // acq_rel: release publishes what this member wrote before the barrier; acquire (for the
  // last arrival) sees what every other member wrote.
  if (t->arrived.fetch_add(1, std::memory_order_acq_rel) + 1 == static_cast<unsigned>(t->n)) {
    // Every member has arrived, so every waiter of generation g-1 has returned from its wait
    // and the future of parity g+1 may be made unsignalled again.
    t->arrived.store(0, std::memory_order_relaxed);  // ordered before the signal below
    MR_future_init(&t->bar[(g + 1) & 1]);
    // release: a member that sees the new generation sees the reset above.
    t->generation.store(g + 1, std::memory_order_release);
    MR_future_signal(&t->bar[g & 1], 1);  // publishes everything above to the waiters
  } else {
    // The others are usually close behind: look for the new generation for a moment before
    // suspending (a suspension and its wake-up cost several microseconds), longer with
    // OMP_WAIT_POLICY=active, not at all with passive.
    int spins = G.wait_policy == 1 ? 100000 : G.wait_policy == 0 ? 0 : 2000;
    for (int i = 0; i < spins; i++) {
      // acquire: as the wait's, the last arrival's writes are visible once we see it.
      if (t->generation.load(std::memory_order_acquire) != g) break;
      // relaxed: a hint to stop spinning; the future's wait orders the rest.
      if (t->cancelled.load(std::memory_order_relaxed)) break;
      mr::engine::cpu_relax();
    }
    // acquire: as above.
    if (t->generation.load(std::memory_order_acquire) == g) MR_future_wait(&t->bar[g & 1]);
  }
  set_current(self);  // the wait may have run other tasks on this thread
}

// ---- member threads beyond the engines --------------------------------------------------------

namespace {

struct Job {
  Team *team;
  int member;
};

// A thread of our own that runs team members (it is not an engine: it forks into mrengine's
// injector and blocks at joins and barriers).
struct PoolThread {
  std::mutex m;
  std::condition_variable cv;
  std::deque<Job> jobs;
  bool generic = true;  // returns to the idle list after each job (slot threads do not)
};

// Never destroyed (as G): a pool thread may return itself to the idle list while the program
// exits.
std::mutex &pool_lock = *new std::mutex;
std::vector<PoolThread *> &idle_threads = *new std::vector<PoolThread *>;  // waiting for a job
std::vector<PoolThread *> &slot_threads = *new std::vector<PoolThread *>;  // member i of top teams
// Held by the top-level team that uses the slots, so that two teams never queue members behind
// each other on the same slot thread.
std::atomic<bool> slots_busy{false};
// Threads in active teams beyond the initial ones (for thread-limit-var), when it is set.
std::atomic<int> threads_in_use{1};

void run_member(Team *team, int i);

// Wait, holding the engine (a suspension would let the engine run the team's tasks before this
// member's implicit task has initialised its copies), until members 1..n-1 have all begun.
void wait_all_started(Team *t) {
  unsigned round = 0;
  // acquire: pairs with the members' release increments.
  while (t->started.load(std::memory_order_acquire) < t->n - 1) backoff(&round);
}

void pool_main(PoolThread *p) {
  for (;;) {
    Job j;
    {
      std::unique_lock<std::mutex> lk(p->m);
      p->cv.wait(lk, [p] { return !p->jobs.empty(); });
      j = p->jobs.front();
      p->jobs.pop_front();
    }
    run_member(j.team, j.member);
    if (p->generic) {
      std::lock_guard<std::mutex> lk(pool_lock);
      idle_threads.push_back(p);
    }
  }
}

PoolThread *new_pool_thread(bool generic) {
  auto *p = new PoolThread;
  p->generic = generic;
  std::thread(pool_main, p).detach();
  return p;
}

void give_job(PoolThread *p, Job j) {
  {
    std::lock_guard<std::mutex> lk(p->m);
    p->jobs.push_back(j);
  }
  p->cv.notify_one();
}

void release_team(Team *t) {
  // acq_rel: the last releaser sees every member's last writes before deleting.
  if (t->refs.fetch_sub(1, std::memory_order_acq_rel) == 1) {
    delete t;
  }
}

// The last top-level team, kept by the creator that held the slots: the next region of the
// same size started on the same engine reuses it, with its members, work-shares and barrier,
// instead of allocating them again (and freeing them on whichever thread leaves last). Only
// the holder of the slots touches it, before it releases them (slots_busy orders the holders).
Team *kept_team = nullptr;

// Wait until members 1..n-1 have let go of kept team t (they are past its end barrier, and
// released it just after): only the kept reference is left.
void wait_members_gone(Team *t) {
  unsigned round = 0;
  // acquire: pairs with the members' acq_rel release, so their last writes are seen.
  while (t->refs.load(std::memory_order_acquire) != 1) backoff(&round);
}

// A kept team no longer kept is released like any team: its last member to let go frees it.
// (Never waited for here: a member may be a context bound to the caller's own engine, which
// could not run while the caller waits.)
void keep_team(Team *t) {
  if (kept_team && kept_team != t) release_team(kept_team);
  kept_team = t;
}

// The kept team, ready for a region of n members at `level` from engine `here`, or nullptr
// (a kept team of another shape is released). Only the same shape is waited for: its
// members are on the other engines (and slot threads), never on the caller's.
Team *reuse_kept(int n, int here, int level) {
  Team *t = kept_team;
  if (!t) return nullptr;
  kept_team = nullptr;
  if (t->n != n || t->here != here || t->level != level) {
    release_team(t);
    return nullptr;
  }
  wait_members_gone(t);
  // Every member has ended the last region's work-shares and met its single constructs, so
  // their numbering starts again (each member's record is made new by begin_member); the
  // barrier goes on from its generation.
  // relaxed: published with the team (the members' job posts).
  t->single_count.store(0, std::memory_order_relaxed);
  t->cancelled.store(false, std::memory_order_relaxed);  // relaxed: as above
  t->exited.store(0, std::memory_order_relaxed);         // relaxed: as above
  t->started.store(0, std::memory_order_relaxed);        // relaxed: as above
  MR_future_init(&t->exit_done);
  return t;
}

// The end of an implicit task: its tasks, then the region's barrier. With cancellation enabled
// the members count themselves out instead: a cancelled member skips barriers the others may
// be in, so barrier generations no longer line up.
void end_implicit(Task *self) {
  join_children(self);
  Team *t = self->team;
  if (!G.cancel_var || t->n == 1) {
    team_barrier(t);
    return;
  }
  // acq_rel: release publishes this member's work; acquire (last one) sees everyone's.
  if (t->exited.fetch_add(1, std::memory_order_acq_rel) + 1 == t->n)
    MR_future_signal(&t->exit_done, 1);
  else
    MR_future_wait(&t->exit_done);
  set_current(self);
}

// Member i's implicit task as new for this region, made by the member itself on its own thread
// (so that its record's cache lines stay there from one region to the next), from what the
// creator wrote in the team.
void begin_member(Team *t, int i) {
  Task &m = t->members[i];
  m = Task();
  m.team = t;
  m.thread_num = i;
  m.implicit = true;
  m.icv = t->icv;
  m.red_in = t->red_scope;
  if (t->first_ws) {
    m.ws_seq = 1;
    m.ws = t->first_ws;
  }
}

void run_member(Team *team, int i) {
  begin_member(team, i);
  Task *self = &team->members[i];
  set_current(self);
  if (team->start_together) {
    // release: publishes this member's start (its engine is held from here on).
    team->started.fetch_add(1, std::memory_order_release);
    wait_all_started(team);
  }
  team->fn(team->data);
  set_current(self);
  end_implicit(self);
  // Nothing of ours runs on this thread or context until the next task sets its own.
  set_current(nullptr);
  release_team(team);
}

// ---- resident members ------------------------------------------------------------------------
//
// Member i (0 < i < engines) of an outermost team started on an engine runs on the context
// resident on its engine: one context per engine, spawned bound there the first time a team
// needs it and kept, which runs one team member after another. Between regions it looks for its
// next job for a while, since the next region usually follows at once (a short loop's region
// costs a few microseconds; a spawn, and a wake-up when the engine has gone to sleep, would cost
// as much again), then parks on a future until a job is posted.
struct Resident {
  // Jobs posted so far, times two, plus one while the resident is parked: one word, so that
  // "post a job" and "park unless a job came" cannot miss each other.
  std::atomic<std::uint64_t> mail{0};
  // The job: written by the poster before its release exchange of `mail`, read by the resident
  // after its acquire load that sees the new count. The next job is posted only after this
  // member has arrived at the region's end, so a job is never overwritten before it is read.
  Team *team = nullptr;
  int member = 0;
  MR_Future wake = MR_FUTURE_INIT;  // signalled by the poster that finds the resident parked
};

// Only the creator of the top-level team that holds the slots (slots_busy) posts jobs, makes
// residents and reads this list, so it needs no lock: slots_busy's acquire and release order it.
std::vector<Resident *> &residents = *new std::vector<Resident *>;
int resident_channel = -1;

// How long a resident looks for its next job before parking: OMP_WAIT_POLICY active looks long
// (as libgomp's threads spin), passive not at once.
std::uint64_t resident_spin_ns() {
  return G.wait_policy == 1 ? 100000000 : G.wait_policy == 0 ? 0 : 200000;
}

// The next job after the `seen` first ones: the new mail word.
std::uint64_t resident_wait(Resident *r, std::uint64_t seen) {
  std::uint64_t idle = seen << 1;
  // acquire: a new count makes the job's fields visible (pairs with the poster's release).
  std::uint64_t m = r->mail.load(std::memory_order_acquire);
  if (m != idle) return m;
  std::uint64_t until = MR_now() + resident_spin_ns();
  for (unsigned i = 1;; i++) {
    // acquire: as above.
    m = r->mail.load(std::memory_order_acquire);
    if (m != idle) return m;
    if ((i & 63) == 0 && MR_now() >= until) break;
    mr::engine::cpu_relax();
  }
  // acquire: as above, when a job came meanwhile (the parked bit itself publishes nothing).
  if (!r->mail.compare_exchange_strong(m, idle | 1, std::memory_order_acquire))
    return m;
  MR_future_wait(&r->wake);
  // Only the poster that found the parked bit signals, once; nothing touches the future again
  // until this resident parks next, so it may be reset here.
  MR_future_init(&r->wake);
  // acquire: as above.
  return r->mail.load(std::memory_order_acquire);
}

void resident_main(void *arg) {
  auto *r = static_cast<Resident *>(arg);
  std::uint64_t seen = 0;
  for (;;) {
    seen = resident_wait(r, seen) >> 1;
    run_member(r->team, r->member);
  }
}

// Post member `member` of team t to the resident of engine e (making it on first use).
void resident_post(int e, Team *t, int member) {
  if (residents.empty()) residents.assign(static_cast<size_t>(G.engines), nullptr);
  Resident *&r = residents[static_cast<size_t>(e)];
  if (!r) {
    if (resident_channel < 0) {
      // A channel of their own that MR_shutdown drops, so that a program that started
      // mrengine itself can still shut it down while residents wait for jobs.
      MR_ChannelOptions co;
      MR_channel_options_default(&co);
      co.close = MR_CLOSE_DROP;
      resident_channel = MR_channel_create(&co);
      if (resident_channel < 0)
        die("cannot make the channel of the team members: %s", MR_strerror(resident_channel));
    }
    r = new Resident;
    MR_SpawnOptions o;
    MR_spawn_options_default(&o);
    o.engine = e;
    o.channel = resident_channel;
    int rc = MR_spawn(resident_main, r, &o);
    if (rc != 0) die("cannot start team member %d: %s", member, MR_strerror(rc));
  }
  r->team = t;
  r->member = member;
  // relaxed: the count is read back by this thread alone (the only poster).
  std::uint64_t next = (r->mail.load(std::memory_order_relaxed) >> 1) + 1;
  // release: publishes the job (and the team) to the resident.
  if (r->mail.exchange(next << 1, std::memory_order_release) & 1) MR_future_signal(&r->wake, 1);
}

}  // namespace

// Start a team: members 1..n-1 start running fn(data); the caller becomes member 0.
Team *parallel_begin(void (*fn)(void *), void *data, unsigned nthreads, const WorkShare *preset,
                     std::uintptr_t *reductions) {
  ensure_runtime();
  Task *enc = current();
  Team *outer = enc->team;
  int n = nthreads ? static_cast<int>(std::min(nthreads, 1u << 20)) : enc->icv.nthreads;
  if (outer->active_level >= enc->icv.max_active_levels) n = 1;
  if (enc->icv.dyn) n = std::min(n, G.engines);
  n = std::max(1, std::min(n, G.thread_limit));
  // thread-limit-var bounds the threads of the whole program at once: take the extra members
  // from what the other active teams leave.
  // Inside a teams construct its thread_limit bounds the team's contention group as well.
  int limit = outer->teams_thread_limit > 0 ? std::min(G.thread_limit, outer->teams_thread_limit)
                                             : G.thread_limit;
  int extra = n - 1;
  if (extra > 0 && limit < (1 << 20)) {
    // relaxed: a count of its own, with no data published through it.
    int used = threads_in_use.load(std::memory_order_relaxed);
    do {
      extra = std::max(0, std::min(n - 1, limit - used));
    } while (!threads_in_use.compare_exchange_weak(used, used + extra, std::memory_order_relaxed));
    n = extra + 1;
  } else {
    extra = 0;
  }

  // Where members 1..n-1 run: on the other engines (their residents), for the outermost active
  // team started on an engine; else (and beyond the engines) on threads of our own.
  int engines = G.engines;
  int here = MR_engine_id();
  bool slots = false;
  if (n > 1 && here >= 0 && outer->active_level == 0) {
    bool expected = false;
    // acquire: pairs with the release of the previous top-level team's creator.
    slots = slots_busy.compare_exchange_strong(expected, true, std::memory_order_acquire);
  }
  // The holder of the slots reuses the last such team when it has the same shape (kept_team).
  Team *t = slots && !reductions ? reuse_kept(n, here, outer->level + 1) : nullptr;
  if (!t) {
    t = new Team;
    t->n = n;
    t->level = outer->level + 1;
    t->members.resize(n);  // each made by begin_member
    t->engine_member.assign(engines, -1);
    if (here >= 0) t->engine_member[here] = 0;
    if (slots)
      for (int i = 1; i < n && i < engines; i++) t->engine_member[(here + i) % engines] = i;
    t->here = here;
  }
  t->active_level = outer->active_level + (n > 1);
  t->fn = fn;
  t->data = data;
  t->ancestor_tid = outer->ancestor_tid;
  t->ancestor_tid.back() = enc->thread_num;
  t->ancestor_tid.push_back(0);
  t->ancestor_size = outer->ancestor_size;
  t->ancestor_size.push_back(n);
  t->team_num = outer->team_num;
  t->num_teams = outer->num_teams;
  t->teams_thread_limit = outer->teams_thread_limit;
  Icv icv = enc->icv;
  if (static_cast<size_t>(t->level) < G.nthreads_list.size())
    icv.nthreads = G.nthreads_list[t->level];
  t->icv = icv;
  if (reductions) {
    // reduction(task, ...) on the region: every member's tasks reduce into per-member copies.
    t->start_together = true;
    red_allocate(reductions, n);
    auto scope = std::make_shared<RedScope>(RedScope{reductions, red_visible(enc)});
    t->red_scope = scope;
  }
  t->first_ws = nullptr;
  if (preset) {
    WorkShare *w = ws_take(t);
    ws_copy_loop(w, *preset);
    w->seq = 1;
    if (w->nonmonotonic) ws_init_runs(w, n);
    // relaxed: the team is published to its members by their job's post.
    w->left.store(n, std::memory_order_relaxed);
    t->ws[1] = w;
    t->first_ws = w;
  }
  begin_member(t, 0);
  // relaxed: published with the team.
  t->refs.store(n, std::memory_order_relaxed);
  t->top_slots = slots;
  for (int i = 1; i < n; i++) {
    if (slots && i < engines) {
      resident_post((here + i) % engines, t, i);
      continue;
    }
    PoolThread *p;
    {
      std::lock_guard<std::mutex> lk(pool_lock);
      if (slots) {
        while (slot_threads.size() <= static_cast<size_t>(i)) slot_threads.push_back(nullptr);
        if (!slot_threads[i]) slot_threads[i] = new_pool_thread(false);
        p = slot_threads[i];
      } else if (!idle_threads.empty()) {
        p = idle_threads.back();
        idle_threads.pop_back();
      } else {
        p = new_pool_thread(true);
      }
    }
    give_job(p, Job{t, i});
  }
  t->encountering = enc;
  t->reserved = extra;
  set_current(&t->members[0]);
  return t;
}

// Member 0's end of the region: its tasks, the barrier, and back to the encountering task.
void parallel_end(Team *t) {
  Task *self = &t->members[0];
  set_current(self);
  end_implicit(self);
  set_current(t->encountering);
  // relaxed: as in parallel_begin.
  if (t->reserved) threads_in_use.fetch_sub(t->reserved, std::memory_order_relaxed);
  if (!t->top_slots) {
    release_team(t);
    return;
  }
  // A top-level team without task reductions is kept for the next region (kept_team), while
  // this creator still holds the slots; while kept, its creator's reference stays, so that the
  // others' releases never free it. Not a cancelled one: its barrier was released out of turn.
  // relaxed: every member has left the region (end_implicit ordered their writes).
  if (!t->start_together && !t->cancelled.load(std::memory_order_relaxed)) keep_team(t);
  else release_team(t);
  // release: the next holder of the slots sees this one's slot jobs queued first, and
  // kept_team as left here.
  slots_busy.store(false, std::memory_order_release);
}

void parallel(void (*fn)(void *), void *data, unsigned nthreads, const WorkShare *preset) {
  Team *t = parallel_begin(fn, data, nthreads, preset);
  fn(data);
  parallel_end(t);
}

}  // namespace mrg

using namespace mrg;

// A region with reduction(task, ...): the descriptor is the first field of the region's data;
// returns the team size, over which the caller combines the per-member copies.
MRG_EXPORT unsigned GOMP_parallel_reductions(void (*fn)(void *), void *data, unsigned nthreads,
                                             unsigned flags) {
  (void)flags;
  auto *reductions = *static_cast<std::uintptr_t **>(data);
  Team *t = parallel_begin(fn, data, nthreads, nullptr, reductions);
  unsigned n = static_cast<unsigned>(t->n);
  // Each implicit task begins by initialising its member's copies, and a task that runs on
  // an engine uses the copies of the member bound there: no task may run on an engine before
  // its member has begun. So no member goes on (and creates tasks) before every member has
  // begun, and none suspends meanwhile (an engine runs one context at a time, and a member
  // that has begun gives its engine up only at a later wait, after its initialisation).
  if (n > 1 && t->start_together) wait_all_started(t);
  fn(data);
  parallel_end(t);
  return n;
}

MRG_EXPORT void GOMP_parallel(void (*fn)(void *), void *data, unsigned nthreads, unsigned flags) {
  (void)flags;  // proc_bind: engines are placed by --thread-pinning
  parallel(fn, data, nthreads, nullptr);
}

// The GOMP_1.0 form: the caller runs fn(data) itself between the two calls.
MRG_EXPORT void GOMP_parallel_start(void (*fn)(void *), void *data, unsigned nthreads) {
  parallel_begin(fn, data, nthreads, nullptr);
}

MRG_EXPORT void GOMP_parallel_end(void) {
  Task *self = current();
  if (!self->implicit || self->thread_num != 0 || !self->team->encountering)
    die("GOMP_parallel_end outside the region's member 0");
  parallel_end(self->team);
}

MRG_EXPORT void GOMP_barrier(void) {
  Task *self = current();
  join_children(self);
  team_barrier(self->team);
}

// ---- cancellation ------------------------------------------------------------------------
//
// With OMP_CANCELLATION=true (cancel-var), `cancel` sets the flag of the construct it names and
// cancellation points report it: a cancelled parallel region's waiters at a barrier are
// released, its tasks that have not started are discarded, a cancelled loop or sections hands
// out no more work, and a cancelled taskgroup's tasks that have not started are discarded.
// With cancel-var false, cancel does nothing (OpenMP) and every cancellation point says no.

namespace {

constexpr int kCancelParallel = 1, kCancelLoop = 2, kCancelSections = 4, kCancelTaskgroup = 8;

bool is_cancelled(int which) {
  Task *self = current();
  switch (which) {
    case kCancelParallel:
      // acquire: as team_barrier_cancellable.
      return self->team->cancelled.load(std::memory_order_acquire);
    case kCancelLoop:
    case kCancelSections:
      // acquire: as above.
      return self->ws && self->ws->cancelled.load(std::memory_order_acquire);
    case kCancelTaskgroup:
      // acquire: as above.
      if (std::atomic<bool> *f = group_flag(self)) return f->load(std::memory_order_acquire);
      return false;
    default:
      return false;
  }
}

}  // namespace

MRG_EXPORT bool GOMP_cancellation_point(int which) {
  if (!G.cancel_var) return false;
  return is_cancelled(which);
}

MRG_EXPORT bool GOMP_cancel(int which, bool do_cancel) {
  if (!G.cancel_var) return false;
  if (!do_cancel) return is_cancelled(which);
  Task *self = current();
  Team *t = self->team;
  switch (which) {
    case kCancelParallel: {
      // release: pairs with the acquire loads of the cancellation points.
      t->cancelled.store(true, std::memory_order_release);
      // Release the members waiting at the current barrier generation (signalling it again
      // when its last member also arrives is allowed: the same value).
      // acquire: the generation whose future we signal is one its waiters use.
      unsigned g = t->generation.load(std::memory_order_acquire);
      if (t->n > 1) MR_future_signal(&t->bar[g & 1], 1);
      set_current(self);
      return true;
    }
    case kCancelLoop:
    case kCancelSections:
      // release: as above.
      if (self->ws) self->ws->cancelled.store(true, std::memory_order_release);
      return true;
    case kCancelTaskgroup:
      // release: as above.
      if (std::atomic<bool> *f = group_flag(self)) f->store(true, std::memory_order_release);
      return true;
    default:
      return false;
  }
}

MRG_EXPORT bool GOMP_barrier_cancel(void) {
  Task *self = current();
  join_children(self);
  return team_barrier_cancellable(self->team);
}

MRG_EXPORT void GOMP_loop_end_nowait(void);
MRG_EXPORT bool GOMP_loop_end_cancel(void) {
  Task *self = current();
  GOMP_loop_end_nowait();
  join_children(self);
  return team_barrier_cancellable(self->team);
}

MRG_EXPORT bool GOMP_sections_end_cancel(void) { return GOMP_loop_end_cancel(); }

// ---- host teams -----------------------------------------------------------------------------
//
// A teams construct on the host: the league's initial tasks run one after the other on the
// encountering thread (teams may not synchronise with each other), each seeing its team number.


MRG_EXPORT int omp_get_max_teams(void);
MRG_EXPORT int omp_get_teams_thread_limit(void);
MRG_EXPORT void GOMP_teams_reg(void (*fn)(void *), void *data, unsigned num_teams,
                               unsigned thread_limit, unsigned flags) {
  (void)flags;
  int n = num_teams ? static_cast<int>(num_teams) : std::max(1, omp_get_max_teams());
  if (thread_limit == 0) thread_limit = static_cast<unsigned>(omp_get_teams_thread_limit());
  Task *self = current();
  Team *t = self->team;  // the thread's initial team: teams constructs are outermost
  Team saved_league;
  saved_league.team_num = t->team_num;
  saved_league.num_teams = t->num_teams;
  saved_league.teams_thread_limit = t->teams_thread_limit;
  t->num_teams = n;
  t->teams_thread_limit = static_cast<int>(thread_limit);
  for (int i = 0; i < n; i++) {
    t->team_num = i;
    fn(data);
    set_current(self);
  }
  t->team_num = saved_league.team_num;
  t->num_teams = saved_league.num_teams;
  t->teams_thread_limit = saved_league.teams_thread_limit;
}
