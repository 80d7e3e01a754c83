// pool.cpp: the threads of our own that run team members. Such a thread is not an engine: it
// forks into mrengine's injector and blocks at joins and barriers. A slot thread runs member i
// of every top-level team that has one, so member i is again the same thread in the next region;
// a generic thread returns to the idle list after each member it runs. After a team with more
// members than processors, a thread yields its processor for a while (wait.hpp) before it sleeps
// for its next job (doc/gomp.md, "Waiting": Oversubscription).
#include <pthread.h>

#include <atomic>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <new>
#include <vector>

#include "env.hpp"
#include "fatal.hpp"
#include "pool.hpp"
#include "records.hpp"
#include "team.hpp"
#include "wait.hpp"

namespace mrg {

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
  // Jobs given so far (written under m): what the thread looks at, without the lock, while it
  // yields before sleeping.
  std::atomic<unsigned> given{0};
  bool generic = true;  // returns to the idle list after each job (slot threads do not)
};

// Never destroyed (as G): a pool thread may return itself to the idle list while the program
// exits.
std::mutex &pool_lock = *new std::mutex;
std::vector<PoolThread *> &idle_threads = *new std::vector<PoolThread *>;  // waiting for a job
std::vector<PoolThread *> &slot_threads = *new std::vector<PoolThread *>;  // member i of top teams

void *pool_main(void *arg) {
  auto *p = static_cast<PoolThread *>(arg);
  unsigned taken = 0;
  bool oversubscribed = false;  // the last job's team had more members than processors
  for (;;) {
    // relaxed: a hint that a job is there; the job itself is read under the lock.
    if (oversubscribed)
      yield_until([p, taken] { return p->given.load(std::memory_order_relaxed) != taken; });
    Job j;
    {
      std::unique_lock<std::mutex> lk(p->m);
      p->cv.wait(lk, [p] { return !p->jobs.empty(); });
      j = p->jobs.front();
      p->jobs.pop_front();
    }
    taken++;
    oversubscribed = j.team->oversubscribed();  // (run_member lets go of the team)
    run_member(j.team, j.member);
    if (p->generic) {
      std::lock_guard<std::mutex> lk(pool_lock);
      idle_threads.push_back(p);
    }
  }
}

// A new thread of our own, detached, with the stack OMP_STACKSIZE asks for (the implicit and
// explicit tasks it runs need it, as the engines' contexts have it: runtime.cpp), else the
// system's default.
PoolThread *new_pool_thread(bool generic) {
  auto *p = new PoolThread;
  p->generic = generic;
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
  if (size_t stack = env_stacksize()) {
    int rc = pthread_attr_setstacksize(&attr, stack);
    if (rc != 0) die("OMP_STACKSIZE: cannot give a thread a stack of %zu bytes", stack);
  }
  pthread_t th;
  int rc = pthread_create(&th, &attr, pool_main, p);
  pthread_attr_destroy(&attr);
  if (rc != 0) die("cannot start a thread for a team member (error %d)", rc);
  return p;
}

void give_job(PoolThread *p, Job j) {
  {
    std::lock_guard<std::mutex> lk(p->m);
    p->jobs.push_back(j);
    // relaxed: the lock publishes the job; this only tells a yielding thread to take the lock.
    p->given.fetch_add(1, std::memory_order_relaxed);
  }
  p->cv.notify_one();
}

}  // namespace

void pool_post(Team *t, int i, bool slot) {
  PoolThread *p;
  {
    std::lock_guard<std::mutex> lk(pool_lock);
    if (slot) {
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

void forget_pool() {
  new (&pool_lock) std::mutex;
  new (&idle_threads) std::vector<PoolThread *>;
  new (&slot_threads) std::vector<PoolThread *>;
}

}  // namespace mrg
