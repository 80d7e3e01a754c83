/* channelutil.h: what the channel suites (check_channel.c, check_channel_close.c) share. */
#ifndef MR_CHANNELUTIL_H
#define MR_CHANNELUTIL_H

#include <stdint.h>

#include "mrengine.h"
#include "testutil.h"

/* Busy for ns nanoseconds of wall time (the backlog's "work"). */
static inline void spin_ns(uint64_t ns) {
  uint64_t end = MR_now() + ns;
  while (MR_now() < end) {}
}

static inline int make_channel(int level, int kind, int close, int followup) {
  MR_ChannelOptions c;
  MR_channel_options_default(&c);
  c.level = level;
  c.kind = kind;
  c.close = close;
  c.followup = followup;
  int ch = MR_channel_create(&c);
  ck_assert_int_gt(ch, 0);
  return ch;
}

static inline int spawn_in(MR_TaskFn fn, void *arg, int ch, uint64_t deadline) {
  MR_SpawnOptions o;
  MR_spawn_options_default(&o);
  o.channel = ch;
  o.deadline = deadline;
  return MR_spawn(fn, arg, &o);
}

static inline uint64_t ns_run(int ch) {
  MR_ChannelStats s;
  s.size = sizeof s;
  ck_assert_int_eq(MR_channel_stats(ch, &s), 0);
  return s.ns_run;
}

static inline uint64_t contexts_run(int ch) {
  MR_ChannelStats s;
  s.size = sizeof s;
  ck_assert_int_eq(MR_channel_stats(ch, &s), 0);
  return s.contexts_run;
}

static inline void nothing(void *arg) { (void)arg; }

#endif
