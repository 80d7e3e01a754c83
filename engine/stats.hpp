// stats.hpp: reading the engines' counters (counters.hpp): MR_stats_get and the --stats table.
#ifndef MR_ENGINE_STATS_HPP
#define MR_ENGINE_STATS_HPP

#include <cstdio>

#include "mrengine.h"

namespace mr::engine {

// Copy engine e's counters (out->size bytes at most). Any thread while running.
void stats_get(int e, MR_EngineStats *out);

// Copy channel ch's counters (summed over the engines) into *out, whose size covers them. Any
// thread while running.
void channel_stats_get(int ch, MR_ChannelStats *out);

// Print every engine's counters and their totals as a table (the --stats table), then a row per
// channel. Any thread while running; exact at a quiescent point.
void print_stats(FILE *out);

}  // namespace mr::engine

#endif
