// close.cpp: dropping the work of drop channels at MR_shutdown, and refusing what would come
// too late (close.hpp).
#include "config.h"

#include "close.hpp"

#include <cstddef>

namespace mr::engine {

void drop_context(Context *c) {
  // relaxed: a count read after the engines stopped.
  g_rt->channels[c->channel].contexts_dropped.fetch_add(1, std::memory_order_relaxed);
  c->dropped = true;  // freed with the runtime (Context::dropped says why not now)
}

bool keep_spark(const Task &t) {
  if (!dropping(t.join)) return true;
  // relaxed: as above.
  g_rt->channels[static_cast<int>(t.join->channel)].sparks_dropped.fetch_add(
      1, std::memory_order_relaxed);
  return false;
}

int create_channel(int level, ChannelKind kind, Close close, int followup) {
  // relaxed: a channel made while MR_shutdown begins is one more channel it closes.
  if (g_rt->closing.load(std::memory_order_relaxed)) return MR_ESHUTDOWN;
  return g_rt->channels.create(level, kind, close, followup);
}

void begin_closing() {
  // seq_cst: one more flag that engines read relaxed at their next pick; a context of a drop
  // channel that misses it runs once more, to its next suspension, and is dropped then.
  g_rt->closing.store(true, std::memory_order_seq_cst);
}

void report_drops(MR_ShutdownReport *r, const std::uint64_t *contexts,
                  const std::uint64_t *sparks) {
  bool per_channel = r->size >= sizeof *r;
  r->contexts_dropped = r->sparks_dropped = 0;
  for (int ch = 0; ch < kMaxChannels; ch++) {
    const Channel &c = g_rt->channels[ch];
    // relaxed: every engine has stopped.
    std::uint64_t nc = contexts[ch] + c.contexts_dropped.load(std::memory_order_relaxed);
    std::uint64_t ns = sparks[ch] + c.sparks_dropped.load(std::memory_order_relaxed);
    r->contexts_dropped += nc;
    r->sparks_dropped += ns;
    if (per_channel) {
      r->channel_contexts_dropped[ch] = nc;
      r->channel_sparks_dropped[ch] = ns;
    }
  }
}

}  // namespace mr::engine
