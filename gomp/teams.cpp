// teams.cpp: the teams construct on the host. The league's teams run one after the other on the
// encountering thread (teams may not synchronise with each other), each seeing its team number;
// nteams-var and teams-thread-limit-var (env.hpp) give the defaults.
#include <algorithm>
#include <atomic>

#include "current.hpp"
#include "env.hpp"
#include "export.hpp"
#include "omp.hpp"
#include "records.hpp"

using namespace mrg;

MRG_EXPORT int omp_get_num_teams(void) { return current()->team->num_teams; }
MRG_EXPORT int omp_get_team_num(void) { return current()->team->team_num; }
// relaxed: a value of its own, with no data published through it.
MRG_EXPORT int omp_get_max_teams(void) { return nteams_var.load(std::memory_order_relaxed); }
MRG_EXPORT void omp_set_num_teams(int n) {
  // relaxed: as above.
  if (n > 0) nteams_var.store(n, std::memory_order_relaxed);
}
MRG_EXPORT int omp_get_teams_thread_limit(void) {
  // relaxed: as above.
  return teams_thread_limit_var.load(std::memory_order_relaxed);
}
MRG_EXPORT void omp_set_teams_thread_limit(int n) {
  // relaxed: as above.
  if (n > 0) teams_thread_limit_var.store(n, std::memory_order_relaxed);
}

// A teams construct outside target regions.
MRG_EXPORT void GOMP_teams_reg(void (*fn)(void *), void *data, unsigned num_teams,
                               unsigned thread_limit, unsigned flags) {
  (void)flags;
  int n = num_teams ? static_cast<int>(num_teams) : std::max(1, omp_get_max_teams());
  if (thread_limit == 0) thread_limit = static_cast<unsigned>(omp_get_teams_thread_limit());
  Task *self = current();
  Team *t = self->team;  // the thread's initial team: teams constructs are outermost
  int saved_team_num = t->team_num, saved_num_teams = t->num_teams;
  int saved_thread_limit = t->teams_thread_limit;
  t->num_teams = n;
  t->teams_thread_limit = static_cast<int>(thread_limit);
  for (int i = 0; i < n; i++) {
    t->team_num = i;
    fn(data);
    set_current(self);
  }
  t->team_num = saved_team_num;
  t->num_teams = saved_num_teams;
  t->teams_thread_limit = saved_thread_limit;
}

// teams inside a target region: the league's teams one after the other, as the caller loops
// `while (GOMP_teams4 (...)) body;`.
MRG_EXPORT bool GOMP_teams4(unsigned num_teams_low, unsigned num_teams_high, unsigned thread_limit,
                            bool first) {
  (void)num_teams_high;
  Team *t = current()->team;
  if (first) {
    t->num_teams = num_teams_low ? static_cast<int>(num_teams_low) : 1;
    t->team_num = 0;
    t->teams_thread_limit = static_cast<int>(thread_limit);
    return true;
  }
  if (t->team_num + 1 < t->num_teams) {
    t->team_num++;
    return true;
  }
  t->teams_thread_limit = 0;
  return false;
}
