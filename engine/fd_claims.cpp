// fd_claims.cpp: the claims table of MR_wait_fd (fd_claims.hpp).
#include "config.h"

#include "fd_claims.hpp"

#include <iterator>
#include <mutex>
#include <unordered_map>

#include "mrengine.h"

namespace mr::engine {

namespace {

// One lock and a map from descriptor to the directions waited on: a claim is made once per wait,
// beside an epoll_ctl system call, so a lock costs nothing that shows. Process-wide (not the
// runtime's): threads wait on descriptors with no runtime too. Function-local, so that it is
// made before its first use whatever the order of static initialisation.
struct Held {
  int contexts = 0, threads = 0;  // the directions waited on by contexts, by threads
};
struct Claims {
  std::mutex lock;
  std::unordered_map<int, Held> held;  // under lock; a descriptor with no waiter has no entry
};

Claims &claims() {
  static Claims c;
  return c;
}

}  // namespace

int fd_claim(int fd, int events, bool context, int *other) {
  Claims &c = claims();
  std::lock_guard<std::mutex> g(c.lock);
  Held &h = c.held[fd];
  const int held = h.contexts | h.threads;
  if (held & events) return MR_EINUSE;  // h had an entry: it holds a direction
  (context ? h.contexts : h.threads) |= events;
  *other = held;
  return 0;
}

void fd_release(int fd, int events, bool context) {
  Claims &c = claims();
  std::lock_guard<std::mutex> g(c.lock);
  auto it = c.held.find(fd);
  if (it == c.held.end()) return;
  (context ? it->second.contexts : it->second.threads) &= ~events;
  if ((it->second.contexts | it->second.threads) == 0) c.held.erase(it);
}

void fd_claims_forget_contexts() {
  Claims &c = claims();
  std::lock_guard<std::mutex> g(c.lock);
  for (auto it = c.held.begin(); it != c.held.end();) {
    it->second.contexts = 0;
    it = it->second.threads == 0 ? c.held.erase(it) : std::next(it);
  }
}

void fd_claims_fork_prepare() { claims().lock.lock(); }

void fd_claims_fork_parent() { claims().lock.unlock(); }

void fd_claims_fork_child() {
  Claims &c = claims();
  c.held.clear();
  c.lock.unlock();  // taken by this thread in fd_claims_fork_prepare
}

}  // namespace mr::engine
