// policy.cpp: the level an engine serves, and the turn of its channels (policy.hpp).
#include "config.h"

#include "policy.hpp"

namespace mr::engine {

namespace {

int lowest(unsigned s) { return __builtin_ctz(s); }

}  // namespace

int next_level(Engine *e, unsigned busy) {
  if (busy == 0) return -1;
  if (g_rt->p.policy == Policy::HIGHEST_FIRST) return lowest(busy);
  std::uint64_t now = now_ns();
  bool mine = (busy >> e->rr_level) & 1u;
  if (mine && now - e->rr_since < std::uint64_t{g_rt->p.level_slice_us} * 1000u) return e->rr_level;
  // The turn passes to the next level with work after this one (round the levels), or stays
  // with this one if no other has work; its slice starts now.
  unsigned after = e->rr_level + 1 < kLevels ? busy & ~((2u << e->rr_level) - 1u) : 0u;
  e->rr_level = after ? lowest(after) : lowest(busy);
  e->rr_since = now;
  return e->rr_level;
}

bool round_robin_turn_over(Engine *e, int L) {
  if ((queued_levels() & ~(1u << L)) == 0) return false;
  return e->rr_level != L ||
         now_ns() - e->rr_since >= std::uint64_t{g_rt->p.level_slice_us} * 1000u;
}

Context *take_level(Engine *e, int L) {
  Channels &chs = g_rt->channels;
  std::uint64_t m = chs.work() & chs.of_level(L);
  while (m != 0) {
    // The first channel after the last one taken from, round the level's channels.
    int last = e->last_channel[L];
    std::uint64_t after = last + 1 < kMaxChannels ? m & ~((std::uint64_t{2} << last) - 1u) : 0u;
    int ch = __builtin_ctzll(after ? after : m);
    if (Context *c = chs.pop(ch)) {
      e->last_channel[L] = static_cast<signed char>(ch);
      return c;
    }
    m &= ~(std::uint64_t{1} << ch);  // emptied meanwhile
  }
  return nullptr;
}

}  // namespace mr::engine
