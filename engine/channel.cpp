// channel.cpp: the channels' queues and the work word (channel.hpp).
#include "config.h"

#include "channel.hpp"

namespace mr::engine {

Channels::Channels() {
  // Channel 0, MR_CHANNEL_DEFAULT: level 0, FIFO, complete, its own followup.
  levels_[0].store(1, std::memory_order_relaxed);
}

int Channels::create(int level, ChannelKind kind, Close close, int followup) {
  std::lock_guard<std::mutex> g(create_lock_);
  int n = count_.load(std::memory_order_relaxed);  // only written under create_lock_
  if (n == kMaxChannels) return MR_ECHANNELS;
  if (followup >= n) return MR_ENOCHANNEL;
  Channel &c = ch_[n];
  c.level = level;
  c.kind = kind;
  c.close = close;
  c.followup = followup < 0 ? n : followup;
  // release (both): whoever reads the count or the level mask sees the fields above.
  levels_[level].fetch_or(std::uint64_t{1} << n, std::memory_order_release);
  count_.store(n + 1, std::memory_order_release);
  return n;
}

void Channels::push(int ch, Context *c) {
  Channel &q = ch_[ch];
  std::lock_guard<std::mutex> g(q.lock);
  if (q.kind == ChannelKind::DEADLINE) {
    q.by_deadline.insert(*c);  // after any equal deadline: FIFO among equals
  } else {
    c->next = nullptr;
    if (q.tail)
      q.tail->next = c;
    else
      q.head = c;
    q.tail = c;
  }
  // relaxed: under the lock (the pop that clears it takes it too); the caller's fence (P1).
  work_.fetch_or(std::uint64_t{1} << ch, std::memory_order_relaxed);
}

Context *Channels::pop(int ch) {
  // relaxed: a stale zero is covered by the callers' fence-then-recheck (P1, P3).
  if ((work_.load(std::memory_order_relaxed) & (std::uint64_t{1} << ch)) == 0) return nullptr;
  Channel &q = ch_[ch];
  std::lock_guard<std::mutex> g(q.lock);
  Context *c = nullptr;
  bool empty;
  if (q.kind == ChannelKind::DEADLINE) {
    if (!q.by_deadline.empty()) {
      c = &*q.by_deadline.begin();
      q.by_deadline.erase(q.by_deadline.begin());
    }
    empty = q.by_deadline.empty();
  } else {
    c = q.head;
    if (c) {
      q.head = c->next;
      if (!q.head) q.tail = nullptr;
    }
    empty = q.head == nullptr;
  }
  // relaxed, under the lock: see push.
  if (empty) work_.fetch_and(~(std::uint64_t{1} << ch), std::memory_order_relaxed);
  return c;
}

std::uint64_t Channels::at_or_above(int L) const {
  std::uint64_t m = 0;
  for (int l = 0; l <= L; l++) m |= of_level(l);
  return m;
}

unsigned Channels::levels_of(std::uint64_t chans) const {
  unsigned s = 0;
  for (int l = 0; l < kLevels && chans != 0; l++) {
    std::uint64_t m = of_level(l);
    if (chans & m) s |= 1u << l;
    chans &= ~m;
  }
  return s;
}

}  // namespace mr::engine
