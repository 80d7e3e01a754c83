// single.cpp: the single construct, won by the member that moves the team's count of single
// constructs from k-1 to k; copyprivate passes the winner's pointer through two barriers.
#include <atomic>

#include "barrier.hpp"
#include "current.hpp"
#include "export.hpp"
#include "records.hpp"

using namespace mrg;

MRG_EXPORT bool GOMP_single_start(void) {
  Task *self = current();
  Team *t = self->team;
  if (t->n == 1) return true;
  unsigned mine = ++self->single_seq;
  // Every member meets the constructs in the same order, so when this member reaches its
  // construct `mine` the count is at least mine-1; whoever moves it from mine-1 to mine runs
  // the body. relaxed: the body's data is ordered by the barrier or copy that follows it.
  unsigned expected = mine - 1;
  return t->single_count.compare_exchange_strong(expected, mine, std::memory_order_relaxed);
}

MRG_EXPORT void *GOMP_single_copy_start(void) {
  if (GOMP_single_start()) return nullptr;
  Task *self = current();
  // The winner publishes its data, then arrives (GOMP_single_copy_end); the barrier orders it.
  team_barrier(self->team);
  return self->team->copy_ptr;
}

MRG_EXPORT void GOMP_single_copy_end(void *data) {
  Task *self = current();
  self->team->copy_ptr = data;
  team_barrier(self->team);
}
