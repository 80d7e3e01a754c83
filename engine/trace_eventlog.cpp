// trace_eventlog.cpp: the GHC eventlog writer (trace.hpp's Writer), for ThreadScope and the
// ghc-events tools. The format: a header declaring every event type used (id, payload size,
// description), then blocks of events, each opened by a block marker naming its capability
// (an engine; 0xffff for threads that are not engines), then the end marker 0xffff. All
// numbers are big-endian; timestamps are ns since the trace began.
#include "config.h"

#include "trace.hpp"

namespace mr::engine::trace {

namespace {

// The event types of the GHC eventlog format that mrengine writes, and two of its own.
#define MR_EVENTLOG_TYPE_MAP(XX)                                                       \
  XX(CREATE_THREAD, 0, 4, "Create thread")                                            \
  XX(RUN_THREAD, 1, 4, "Run thread")                                                  \
  XX(STOP_THREAD, 2, 10, "Stop thread")                                               \
  XX(MIGRATE_THREAD, 4, 6, "Migrate thread")                                          \
  XX(BLOCK_MARKER, 18, 14, "Block marker")                                            \
  XX(SPARK_COUNTERS, 34, 56, "Spark counters")                                        \
  XX(SPARK_CREATE, 35, 0, "Spark create")                                             \
  XX(SPARK_RUN, 38, 0, "Spark run")                                                   \
  XX(SPARK_STEAL, 39, 2, "Spark steal")                                               \
  XX(CAP_CREATE, 45, 2, "Create capability")                                          \
  XX(CAP_DELETE, 46, 2, "Delete capability")                                          \
  XX(USER_MARKER, 58, -1, "User marker")                                              \
  /* Declared with USER_MARKER so that readers decode stop statuses as GHC >= 7.8.3 */ \
  XX(HACK_BUG_T9003, 59, 0, "Empty event for bug #9003")                              \
  XX(MER_FUT_WAIT_NOSUSPEND, 105, 8, "Wait on a future without suspending")           \
  XX(MER_FUT_WAIT_SUSPENDED, 106, 8, "Wait on a future by suspending this thread")    \
  XX(MER_FUT_SIGNAL, 107, 8, "Signal a future")                                       \
  XX(MER_LOOKING_FOR_GLOBAL_CONTEXT, 108, 0, "Engine looking for global work")        \
  XX(MER_WORK_STEALING, 109, 0, "Engine trying to steal work")                        \
  XX(MER_ENGINE_SLEEPING, 111, 0, "Engine sleeping")                                  \
  XX(MR_NOTIFY_SENT, 200, 4, "mrengine: notification sent (kind, target engine)")     \
  XX(MR_NOTIFY_RECEIVED, 201, 2, "mrengine: notification received (kind)")

enum Type : std::uint16_t {
#define MR_EVENTLOG_ENUM_(name, id, size, text) name = (id),
  MR_EVENTLOG_TYPE_MAP(MR_EVENTLOG_ENUM_)
#undef MR_EVENTLOG_ENUM_
};

constexpr std::uint16_t kNoCap = 0xffff;  // the block of threads that are not engines
constexpr std::size_t kEventHeader = 2 + 8;
constexpr std::size_t kBlockMarker = kEventHeader + 14;

void put8(std::string *o, std::uint8_t v) { o->push_back(static_cast<char>(v)); }
void put16(std::string *o, std::uint16_t v) {
  put8(o, static_cast<std::uint8_t>(v >> 8));
  put8(o, static_cast<std::uint8_t>(v));
}
void put32(std::string *o, std::uint32_t v) {
  put16(o, static_cast<std::uint16_t>(v >> 16));
  put16(o, static_cast<std::uint16_t>(v));
}
void put64(std::string *o, std::uint64_t v) {
  put32(o, static_cast<std::uint32_t>(v >> 32));
  put32(o, static_cast<std::uint32_t>(v));
}
void put_text(std::string *o, const char *s) {
  std::size_t n = std::char_traits<char>::length(s);
  put32(o, static_cast<std::uint32_t>(n));
  o->append(s, n);
}

void head(std::string *o, Type t, std::uint64_t ts) {
  put16(o, t);
  put64(o, ts);
}

// The Mercury event of an engine state, if it has one (WORKING shows as a running thread,
// NOTIFIED as MR_NOTIFY_RECEIVED).
void state_event(std::string *o, State s, std::uint64_t ts) {
  switch (s) {
    case State::IDLE: head(o, MER_LOOKING_FOR_GLOBAL_CONTEXT, ts); break;
    case State::STEALING: head(o, MER_WORK_STEALING, ts); break;
    case State::SLEEPING: head(o, MER_ENGINE_SLEEPING, ts); break;
    default: break;
  }
}

class EventlogWriter final : public Writer {
 public:
  void begin(std::string *o, int) override {
    put32(o, 0x68647262);  // "hdrb"
    put32(o, 0x68657462);  // "hetb"
#define MR_EVENTLOG_DECLARE_(name, id, size, text) \
  put32(o, 0x65746200); /* "etb\0" */              \
  put16(o, id);                                    \
  put16(o, static_cast<std::uint16_t>(size));      \
  put_text(o, text);                               \
  put32(o, 0); /* no extra info */                 \
  put32(o, 0x65746500); /* "ete\0" */
    MR_EVENTLOG_TYPE_MAP(MR_EVENTLOG_DECLARE_)
#undef MR_EVENTLOG_DECLARE_
    put32(o, 0x68657465);  // "hete"
    put32(o, 0x68647265);  // "hdre"
    put32(o, 0x64617462);  // "datb"
  }

  void block(std::string *o, int engine, const Event *ev, std::size_t n,
             const std::vector<std::string> &markers) override {
    std::size_t start = o->size();
    std::uint16_t cap = engine < 0 ? kNoCap : static_cast<std::uint16_t>(engine);
    head(o, BLOCK_MARKER, ev[0].ts);
    put32(o, 0);  // the block's size, filled in below
    put64(o, ev[n - 1].ts);
    put16(o, cap);
    for (std::size_t i = 0; i < n; i++) one(o, cap, ev[i], markers);
    std::uint32_t size = static_cast<std::uint32_t>(o->size() - start);
    for (int k = 0; k < 4; k++)
      (*o)[start + kEventHeader + static_cast<std::size_t>(k)] =
          static_cast<char>(size >> (24 - 8 * k));
    static_assert(kBlockMarker == 24);
  }

  void end(std::string *o) override { put16(o, 0xffff); }

 private:
  static void one(std::string *o, std::uint16_t cap, const Event &e,
                  const std::vector<std::string> &markers) {
    switch (e.kind) {
      case Kind::ENGINE_START: {
        head(o, CAP_CREATE, e.ts);
        put16(o, cap);
        state_event(o, static_cast<State>(e.x), e.ts);
        break;
      }
      case Kind::ENGINE_STOP:
        head(o, CAP_DELETE, e.ts);
        put16(o, cap);
        break;
      case Kind::STATE:
        state_event(o, static_cast<State>(e.x), e.ts);
        break;
      case Kind::CTX_CREATE:
        head(o, CREATE_THREAD, e.ts);
        put32(o, e.y);
        break;
      case Kind::CTX_RUN:
        head(o, RUN_THREAD, e.ts);
        put32(o, e.y);
        break;
      case Kind::CTX_STOP:
        head(o, STOP_THREAD, e.ts);
        put32(o, e.y);
        put16(o, static_cast<std::uint16_t>(why_status(static_cast<Why>(e.x))));
        put32(o, 0);  // blocked on no thread
        break;
      case Kind::CTX_MIGRATE:
        head(o, MIGRATE_THREAD, e.ts);
        put32(o, e.y);
        put16(o, cap);
        break;
      case Kind::SPARK_CREATE: head(o, SPARK_CREATE, e.ts); break;
      case Kind::SPARK_RUN: head(o, SPARK_RUN, e.ts); break;
      case Kind::SPARK_STEAL:
        head(o, SPARK_STEAL, e.ts);
        put16(o, e.x);
        break;
      case Kind::COUNTERS:
        // created, dud, overflowed, converted, fizzled, GC'd, remaining
        head(o, SPARK_COUNTERS, e.ts);
        put64(o, e.z);
        put64(o, 0);
        put64(o, 0);
        put64(o, e.w);
        put64(o, 0);
        put64(o, 0);
        put64(o, e.y);
        break;
      case Kind::NOTIFY_SENT:
        head(o, MR_NOTIFY_SENT, e.ts);
        put16(o, e.x);
        put16(o, static_cast<std::uint16_t>(e.y));
        break;
      case Kind::NOTIFY_RECV:
        head(o, MR_NOTIFY_RECEIVED, e.ts);
        put16(o, e.x);
        break;
      case Kind::FUT_WAIT:
        head(o, e.x ? MER_FUT_WAIT_SUSPENDED : MER_FUT_WAIT_NOSUSPEND, e.ts);
        put64(o, e.z);
        break;
      case Kind::FUT_SIGNAL:
        head(o, MER_FUT_SIGNAL, e.ts);
        put64(o, e.z);
        break;
      case Kind::MARKER: {
        const std::string &m = markers[e.y];
        std::size_t len = m.size() < 0xfff0 ? m.size() : 0xfff0;  // the length is 16 bits
        head(o, USER_MARKER, e.ts);
        put16(o, static_cast<std::uint16_t>(len));
        o->append(m, 0, len);
        break;
      }
    }
  }
};

}  // namespace

Writer *make_eventlog_writer() { return new EventlogWriter; }

}  // namespace mr::engine::trace
