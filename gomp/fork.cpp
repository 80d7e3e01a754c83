// fork.cpp: the child of a fork() starts OpenMP afresh (doc/gomp.md, "fork()"). Only the thread
// that forked is in the child: the engines, the residents on them, the pool's threads and the
// members of the kept team all belong to the parent. mrengine's own fork handler leaves the child
// with no runtime; this one makes libmrgomp forget what it kept of the parent's, so that the
// child's next construct that needs engines starts mrengine again and builds new teams. Nothing
// is freed: another thread may have been using any of it at the moment of the fork.
#include <pthread.h>

#include "fatal.hpp"
#include "parallel.hpp"
#include "pool.hpp"
#include "resident.hpp"
#include "runtime.hpp"
#include "team.hpp"

namespace mrg {

namespace {

void in_child() {
  forget_runtime();
  forget_residents();
  forget_kept_team();
  forget_teams();
  forget_pool();
}

// Registered when the library is loaded, before any thread of ours exists.
const int fork_handlers = [] {
  int rc = pthread_atfork(nullptr, nullptr, in_child);
  if (rc != 0) die("cannot register the fork handler (pthread_atfork)");
  return rc;
}();

}  // namespace

}  // namespace mrg
