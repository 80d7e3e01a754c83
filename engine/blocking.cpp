// blocking.cpp: backup threads and the regions that move a context onto one (blocking.hpp).
#include "config.h"

#include "blocking.hpp"

#include <errno.h>
#include <pthread.h>
#include <semaphore.h>

#include <mutex>
#include <new>
#include <vector>

#include "events.hpp"
#include "fatal.hpp"
#include "switch.hpp"
#include "wake.hpp"
#include "watchdog.hpp"

namespace mr::engine {

// A backup thread: it runs one context in a blocking region at a time, off every engine
// (doc/design.md, "Blocking regions").
struct Backup {
  pthread_t thread{};
  sem_t go;  // posted once per context handed over, and once to exit
  // Written by whoever hands a context over, before the post; read by the backup after its
  // wait (sem_post/sem_wait order them). nullptr with `exit` set: leave.
  Context *ctx = nullptr;
  bool exit = false;
  boost::context::fiber home;   // the backup's own continuation while it runs ctx
  san::Fiber home_san;          // the backup thread's own stack, for the sanitizers
  gc::Stack home_gc;            // and for a collector (gc.hpp)
  overflow::AltStack altstack;  // the backup thread's alternate signal stack
  Backup *next_idle = nullptr;  // protected by Runtime::backup_lock
};

namespace {

// The backup record of a backup thread, nullptr on every other thread. initial-exec, like
// t_engine: the stack overflow handler reads both, and must not call __tls_get_addr.
thread_local Backup *t_backup __attribute__((tls_model("initial-exec"))) = nullptr;

}  // namespace

const Context *context_on_this_thread() {
  if (Engine *e = t_engine) return e->current;
  if (Backup *b = t_backup) return b->ctx;
  return nullptr;
}

void blocking_forget_thread() { t_backup = nullptr; }

namespace {

// The backup thread's own loop: wait for a context, run it until it leaves its blocking region
// (blocking_end switches back here, having put the backup back on the idle list).
void *backup_main(void *arg) {
  auto *b = static_cast<Backup *>(arg);
  gc::thread_begin();  // a collector's, before anything else
  t_backup = b;
  san::init_thread(b->home_san);
  gc::add_own(&b->home_gc);
  (void)overflow::altstack_on(b->altstack);
  for (;;) {
    sem_wait_posted(&b->go);
    if (b->exit) {
      overflow::altstack_off(b->altstack);
      gc::remove(&b->home_gc);
      gc::thread_end();  // last of all
      return nullptr;
    }
    resume_context(b->ctx, b->home_san, b->home_gc, b->home);
    // The context has left its region: blocking_end's ontop function put this backup back on
    // the idle list (it may already have a new context: the semaphore counts it) and scheduled
    // the context onto an engine.
  }
}

// Called only by backup b's thread, from blocking_end's ontop function, once its context is
// saved: b is free for the next region. Before the context is scheduled, so that a context that
// begins its next region at once finds b idle instead of making another thread.
void backup_idle(Backup *b) {
  b->ctx = nullptr;
  std::lock_guard<std::mutex> lk(g_rt->backup_lock);
  b->next_idle = g_rt->idle_backups;
  g_rt->idle_backups = b;
}

// An idle backup, a new one while fewer than --max-backup-threads exist, or nullptr. Any thread.
// A new one is counted (in Runtime::backups) under the lock that checked the cap, before its
// thread is created outside it, so that racing callers never make more than the cap.
Backup *take_backup() {
  Backup *b;
  {
    std::lock_guard<std::mutex> lk(g_rt->backup_lock);
    if ((b = g_rt->idle_backups) != nullptr) {
      g_rt->idle_backups = b->next_idle;
      return b;
    }
    if (g_rt->backups.size() >= g_rt->p.max_backup_threads) return nullptr;
    b = new (std::nothrow) Backup;
    if (!b) return nullptr;
    try {
      g_rt->backups.push_back(b);
    } catch (const std::bad_alloc &) {
      delete b;
      return nullptr;
    }
  }
  sem_init(&b->go, 0, 0);
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  // The backup's own stack only holds its loop and the hand-back (blocking_end's ontop).
  pthread_attr_setstacksize(&attr, 256 * 1024);
  int rc = pthread_create(&b->thread, &attr, backup_main, b);
  pthread_attr_destroy(&attr);
  if (rc != 0) {
    {
      std::lock_guard<std::mutex> lk(g_rt->backup_lock);
      std::erase(g_rt->backups, b);
    }
    sem_destroy(&b->go);
    delete b;
    return nullptr;
  }
  return b;
}

// Never inlined, and re-read after every switch: a context moves between threads here.
Backup *current_backup() __attribute__((noinline));
Backup *current_backup() {
  __asm__ __volatile__("" ::: "memory");
  return t_backup;
}

}  // namespace

void stop_backups() {
  for (Backup *b : g_rt->backups) {
    b->exit = true;
    sem_post(&b->go);
  }
  for (Backup *b : g_rt->backups) {
    pthread_join(b->thread, nullptr);
    sem_destroy(&b->go);
    delete b;
  }
  g_rt->backups.clear();
  g_rt->idle_backups = nullptr;
}

// Set errno of the thread that runs the caller now. Never inlined: __errno_location() is a
// const function, so a compiler may keep the address it returned before a switch to another
// thread (ThreadSanitizer caught exactly that: the write went to the backup thread's errno).
static void set_errno_here(int v) __attribute__((noinline));
static void set_errno_here(int v) {
  __asm__ __volatile__("" ::: "memory");
  errno = v;
}

void blocking_begin() {
  Engine *e = this_engine();
  if (!e) {
    if (Backup *b = current_backup()) b->ctx->blocking_depth++;
    return;  // a thread that is not an engine blocks nobody else
  }
  Context *c = e->current;
  MR_CHECK(c != nullptr, "MR_blocking_begin outside a context");
  Backup *b = nullptr;
  if (c->blocking_depth++ == 0) {
    b = take_backup();
    c->offloaded = b != nullptr;
  }
  if (!b) {
    // The region runs in place and may block the engine for as long as it likes: the sparks it
    // holds go to the other engines first (H1), or nothing may run them (a held spark can be
    // what the region waits for).
    publish_held(e);
    watchdog_note_switch(e);
    // And so is each spark it forks inside the region (set_in_region).
    set_in_region(e, true);
    if (c->blocking_depth == 1) note(e, Event::blocking_inline);
    return;
  }
  note(e, Event::blocking_offloaded);
  // The context leaves the engine as a suspension (the engine that runs it after the region
  // counts the resumption), handed over only once it is saved (J1's rule): the backup
  // resumes it at once.
  suspend_self(e, "MR_blocking_begin outside a context", trace::Why::BLOCKING, [b](Context *self) {
    b->ctx = self;
    sem_post(&b->go);
    return false;
  });
  // Now on the backup thread, with no engine.
}

void blocking_end() {
  Backup *b = current_backup();
  Context *c = b ? b->ctx : nullptr;
  Engine *e = nullptr;
  if (!c) {
    e = this_engine();
    if (!e) return;  // a thread that is not an engine: nothing began
    c = e->current;
    MR_CHECK(c != nullptr, "MR_blocking_end outside a context");
  }
  if (c->blocking_depth == 0) fatal("MR_blocking_end without a matching MR_blocking_begin");
  if (--c->blocking_depth > 0) return;
  if (!c->offloaded) {
    set_in_region(e, false);  // the region in place is over: pushes may hold again
    return;
  }
  c->offloaded = false;
  int saved_errno = errno;  // the region's last errno, set on the backup thread
  // Back to the backup's loop; once c is saved, make it runnable on an engine again.
  leave_context(c, std::move(b->home), b->home_san, b->home_gc, [b, c] {
    backup_idle(b);
    schedule(c);
  });
  // Now on an engine again: on another thread, whose errno is elsewhere.
  set_errno_here(saved_errno);
}

}  // namespace mr::engine
