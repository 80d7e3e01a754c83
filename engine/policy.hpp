// policy.hpp: which level an engine serves next, and from which of its channels (--schedule;
// doc/design.md, "Channels and levels").
//   highest-first  the highest level (lowest number) that has work.
//   round-robin    the levels with work in turn, each for --level-slice-us of the engine's time
//                  from when the engine began serving it; a context is never preempted: the
//                  slice is looked at only when the engine picks its next work.
// Within a level the engine takes its channels in turn, one context each.
#ifndef MR_ENGINE_POLICY_HPP
#define MR_ENGINE_POLICY_HPP

#include "engine.hpp"

namespace mr::engine {

// Called only by engine e: the level to serve among `busy` (bit L: level L has work), or -1 if
// busy is empty.
int next_level(Engine *e, unsigned busy);

// Called only by engine e: the next context queued at level L, its channels taken in turn after
// the one it took from last; nullptr if they are all empty.
Context *take_level(Engine *e, int L);

// Called only by engine e: the levels (bit L) of the channels that hold contexts. A hint, as
// Channels::work.
inline unsigned queued_levels() { return g_rt->channels.levels_of(g_rt->channels.work()); }

// Is a context queued at a level above L (a lower number)? Any thread; a hint.
inline bool queued_above(int L) {
  return L > 0 && (g_rt->channels.work() & g_rt->channels.at_or_above(L - 1)) != 0;
}

// Called only by engine e, going on with level L's work without its scheduler (a context that
// drains sparks): under round-robin, is it another level's turn? Yes if a context is queued at
// another level and e's turn at L has ended (its slice is used up, or e serves another level):
// e then goes through its scheduler, whose next_level passes the turn. Highest-first never
// ends a turn here (a higher level's queued context is queued_above's).
bool round_robin_turn_over(Engine *e, int L);
inline bool turn_over(Engine *e, int L) {
  return g_rt->p.policy != Policy::HIGHEST_FIRST && round_robin_turn_over(e, L);
}

}  // namespace mr::engine

#endif
