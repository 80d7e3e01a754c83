// channel.hpp: channels, the scheduling classes of runnable contexts (doc/design.md, "Channels
// and levels"). A channel is a locked queue (FIFO, or earliest deadline first) with a priority
// level, a close policy and a followup channel; one word holds a bit per channel that has queued
// contexts, so that "is there anything?" is one load, and the level masks turn it into "which
// levels have work?".
#ifndef MR_ENGINE_CHANNEL_HPP
#define MR_ENGINE_CHANNEL_HPP

#include <boost/intrusive/set.hpp>

#include <atomic>
#include <cstdint>
#include <mutex>

#include "context.hpp"
#include "future.hpp"
#include "mrengine.h"

namespace mr::engine {

inline constexpr int kLevels = MR_LEVELS;
inline constexpr int kMaxChannels = MR_MAX_CHANNELS;
static_assert(kMaxChannels <= 64, "one bit per channel in the work word");
static_assert(kLevels <= 32, "one bit per level in a level set");

enum class ChannelKind : unsigned char { FIFO = MR_CHANNEL_FIFO, DEADLINE = MR_CHANNEL_DEADLINE };
enum class Close : unsigned char { COMPLETE = MR_CLOSE_COMPLETE, DROP = MR_CLOSE_DROP };

struct ByDeadline {
  bool operator()(const Context &a, const Context &b) const { return a.deadline < b.deadline; }
};
// A deadline channel's contexts in deadline order (equal deadlines in the order queued): an
// intrusive tree through Context::deadline_hook, so queueing allocates nothing.
using DeadlineQueue = boost::intrusive::multiset<
    Context,
    boost::intrusive::member_hook<Context, boost::intrusive::set_member_hook<>,
                                  &Context::deadline_hook>,
    boost::intrusive::compare<ByDeadline>>;

struct Channel {
  // Set by Channels::create before the channel is published, then never written.
  int level = 0;
  ChannelKind kind = ChannelKind::FIFO;
  Close close = Close::COMPLETE;
  int followup = 0;
  // The queue, under `lock`: a FIFO list through Context::next, or the deadline tree.
  std::mutex lock;
  Context *head = nullptr, *tail = nullptr;
  DeadlineQueue by_deadline;
  // What MR_shutdown or MR_channel_close dropped of the channel (relaxed: read after the
  // engines stopped, or by MR_channel_stats, exact at a quiescent point).
  std::atomic<std::uint64_t> contexts_dropped{0};
  std::atomic<std::uint64_t> sparks_dropped{0};
  // MR_channel_close (close.cpp; doc/design.md, "Closing a channel"): the closed bit and the
  // spawned contexts whose function has not returned and which were not dropped
  // (channel_roots.hpp). One word, so that every spawn's RMW is before the close's (and
  // counted) or after it (and refused). Channel 0 is never closed nor counted.
  std::atomic<std::uint64_t> roots{0};
  Future done{};  // signalled once the channel is closed and `roots` has none (MR_channel_wait)
};

class Channels {
 public:
  Channels();

  // Make a channel (mrengine.h, MR_channel_create, has the codes); its number, or an MR_E* code.
  // Any thread.
  int create(int level, ChannelKind kind, Close close, int followup);

  // How many channels exist (0..n-1). acquire: pairs with create's release, so the channel's
  // fields are visible to whoever saw its number counted.
  int count() const { return count_.load(std::memory_order_acquire); }
  bool exists(int ch) const { return ch >= 0 && ch < count(); }

  Channel &operator[](int ch) { return ch_[ch]; }
  const Channel &operator[](int ch) const { return ch_[ch]; }
  int level(int ch) const { return ch_[ch].level; }
  // The channel a context of channel ch is queued in when it becomes runnable after a suspension.
  int followup(int ch) const { return ch_[ch].followup; }

  // Queue c in channel ch. Any thread; the caller then runs the post-work check (P1: the bit is
  // set before its fence).
  void push(int ch, Context *c);

  // The next context of channel ch, or nullptr. Any thread.
  Context *pop(int ch);

  // Which channels may hold contexts (bit ch). Relaxed: a hint; a caller that needs it ordered
  // puts a seq_cst fence before the load (P1, P3).
  std::uint64_t work() const { return work_.load(std::memory_order_relaxed); }

  // The channels of level L, and of levels 0..L (any thread; channels are only ever added).
  std::uint64_t of_level(int L) const { return levels_[L].load(std::memory_order_acquire); }
  std::uint64_t at_or_above(int L) const;

  // The set of levels (bit L) of the channels in `chans`.
  unsigned levels_of(std::uint64_t chans) const;

 private:
  Channel ch_[kMaxChannels];
  std::mutex create_lock_;     // serialises create
  std::atomic<int> count_{1};  // channel 0 exists from the start
  // One bit per channel whose queue is not empty: set and cleared under that channel's lock, so
  // that it matches the queue whenever the lock is free. relaxed RMWs: the lock orders them per
  // channel, and P1's fences order them against the census.
  std::atomic<std::uint64_t> work_{0};
  std::atomic<std::uint64_t> levels_[kLevels]{};  // channels per level (release at create)
};

}  // namespace mr::engine

#endif
