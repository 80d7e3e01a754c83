// trace_eventlog.cpp: the GHC eventlog writer (trace.hpp's Writer), for ThreadScope and the
// ghc-events tools. The format: a header declaring every event type used (id, payload size,
// description), then blocks of events, each opened by a block marker naming its capability
// (an engine; 0xffff for threads that are not engines), then the end marker 0xffff. All
// numbers are big-endian; timestamps are ns since the trace began.
#include "config.h"

#include <algorithm>
#include <cstring>

#include "trace.hpp"

namespace mr::engine::trace {

namespace {

// The event types of the GHC eventlog format that mrengine writes, and two of its own.
#define MR_EVENTLOG_TYPE_MAP(XX)                                                       \
  XX(CREATE_THREAD, 0, 4, "Create thread")                                             \
  XX(RUN_THREAD, 1, 4, "Run thread")                                                   \
  XX(STOP_THREAD, 2, 10, "Stop thread")                                                \
  XX(MIGRATE_THREAD, 4, 6, "Migrate thread")                                           \
  XX(BLOCK_MARKER, 18, 14, "Block marker")                                             \
  XX(SPARK_COUNTERS, 34, 56, "Spark counters")                                         \
  XX(SPARK_CREATE, 35, 0, "Spark create")                                              \
  XX(SPARK_RUN, 38, 0, "Spark run")                                                    \
  XX(SPARK_STEAL, 39, 2, "Spark steal")                                                \
  XX(CAP_CREATE, 45, 2, "Create capability")                                           \
  XX(CAP_DELETE, 46, 2, "Delete capability")                                           \
  XX(USER_MARKER, 58, -1, "User marker")                                               \
  /* Declared with USER_MARKER so that readers decode stop statuses as GHC >= 7.8.3 */ \
  XX(HACK_BUG_T9003, 59, 0, "Empty event for bug #9003")                               \
  XX(MER_FUT_WAIT_NOSUSPEND, 105, 8, "Wait on a future without suspending")            \
  XX(MER_FUT_WAIT_SUSPENDED, 106, 8, "Wait on a future by suspending this thread")     \
  XX(MER_FUT_SIGNAL, 107, 8, "Signal a future")                                        \
  XX(MER_LOOKING_FOR_GLOBAL_CONTEXT, 108, 0, "Engine looking for global work")         \
  XX(MER_WORK_STEALING, 109, 0, "Engine trying to steal work")                         \
  XX(MER_ENGINE_SLEEPING, 111, 0, "Engine sleeping")                                   \
  XX(MR_NOTIFY_SENT, 200, 4, "mrengine: notification sent (kind, target engine)")      \
  XX(MR_NOTIFY_RECEIVED, 201, 2, "mrengine: notification received (kind)")

enum Type : std::uint16_t {
#define MR_EVENTLOG_ENUM_(name, id, size, text) name = (id),
  MR_EVENTLOG_TYPE_MAP(MR_EVENTLOG_ENUM_)
#undef MR_EVENTLOG_ENUM_
};

constexpr std::uint16_t kNoCap = 0xffff;  // the block of threads that are not engines
constexpr std::size_t kEventHeader = 2 + 8;
constexpr std::size_t kBlockMarker = kEventHeader + 14;
constexpr std::size_t kMaxFixed = kEventHeader + 56;  // the largest event but a marker
constexpr std::size_t kMaxMarker = 0xfff0;            // a marker's length is 16 bits

// Big-endian output into space reserved beforehand (the encoding of a block is the hot part of
// writing a trace, so it writes through a pointer rather than appending byte by byte).
class Out {
 public:
  explicit Out(char *p) : p_(p) {}
  char *at() const { return p_; }
  void u16(std::uint16_t v) { put(__builtin_bswap16(v)); }
  void u32(std::uint32_t v) { put(__builtin_bswap32(v)); }
  void u64(std::uint64_t v) { put(__builtin_bswap64(v)); }
  void bytes(const char *s, std::size_t n) {
    std::memcpy(p_, s, n);
    p_ += n;
  }
  void head(std::uint16_t type, std::uint64_t ts) {
    u16(type);
    u64(ts);
  }

 private:
  template <class T>
  void put(T v) {
    std::memcpy(p_, &v, sizeof v);
    p_ += sizeof v;
  }
  char *p_;
};

// The Mercury event of an engine state, if it has one (WORKING shows as a running thread,
// NOTIFIED as MR_NOTIFY_RECEIVED).
void state_event(Out &o, State s, std::uint64_t ts) {
  switch (s) {
    case State::IDLE:
      o.head(MER_LOOKING_FOR_GLOBAL_CONTEXT, ts);
      break;
    case State::STEALING:
      o.head(MER_WORK_STEALING, ts);
      break;
    case State::SLEEPING:
      o.head(MER_ENGINE_SLEEPING, ts);
      break;
    default:
      break;
  }
}

class EventlogWriter final : public Writer {
 public:
  void begin(std::string *s, int) override {
    std::size_t size = 5 * 4;  // hdrb, hetb, hete, hdre, datb
#define MR_EVENTLOG_SIZE_(name, id, size_, text) size += 4 + 2 + 2 + 4 + sizeof text - 1 + 4 + 4;
    MR_EVENTLOG_TYPE_MAP(MR_EVENTLOG_SIZE_)
#undef MR_EVENTLOG_SIZE_
    std::size_t start = s->size();
    s->resize(start + size);
    Out o(s->data() + start);
    o.u32(0x68647262);  // "hdrb"
    o.u32(0x68657462);  // "hetb"
#define MR_EVENTLOG_DECLARE_(name, id, size_, text) \
  o.u32(0x65746200); /* "etb\0" */                  \
  o.u16(id);                                        \
  o.u16(static_cast<std::uint16_t>(size_));         \
  o.u32(sizeof text - 1);                           \
  o.bytes(text, sizeof text - 1);                   \
  o.u32(0);          /* no extra info */            \
  o.u32(0x65746500); /* "ete\0" */
    MR_EVENTLOG_TYPE_MAP(MR_EVENTLOG_DECLARE_)
#undef MR_EVENTLOG_DECLARE_
    o.u32(0x68657465);  // "hete"
    o.u32(0x68647265);  // "hdre"
    o.u32(0x64617462);  // "datb"
  }

  void block(std::string *s, int engine, const Record *ev, std::size_t n,
             const std::vector<std::string> &markers) override {
    std::size_t room = kBlockMarker + n * kMaxFixed;
    for (std::size_t i = 0; i < n; i++)
      if (ev[i].kind == Kind::MARKER) room += 2 + std::min(markers[ev[i].y].size(), kMaxMarker);
    std::size_t start = s->size();
    s->resize(start + room);
    char *begin = s->data() + start;
    Out o(begin);
    std::uint16_t cap = engine < 0 ? kNoCap : static_cast<std::uint16_t>(engine);
    o.head(BLOCK_MARKER, ev[0].ts);
    Out size_at(o.at());
    o.u32(0);  // the block's size, filled in below
    o.u64(ev[n - 1].ts);
    o.u16(cap);
    for (std::size_t i = 0; i < n; i++) one(o, cap, ev[i], markers);
    std::size_t used = static_cast<std::size_t>(o.at() - begin);
    size_at.u32(static_cast<std::uint32_t>(used));
    s->resize(start + used);
  }

  void end(std::string *s) override {
    s->push_back('\xff');
    s->push_back('\xff');
  }

 private:
  // Record e as eventlog events: an engine's or a context's (thread_event), or any other.
  static void one(Out &o, std::uint16_t cap, const Record &e,
                  const std::vector<std::string> &markers) {
    if (!thread_event(o, cap, e)) other_event(o, e, markers);
  }

  // The capability's and the threads' events; false for a record of another kind.
  static bool thread_event(Out &o, std::uint16_t cap, const Record &e) {
    switch (e.kind) {
      case Kind::ENGINE_START:
        o.head(CAP_CREATE, e.ts);
        o.u16(cap);
        state_event(o, static_cast<State>(e.x), e.ts);
        return true;
      case Kind::ENGINE_STOP:
        o.head(CAP_DELETE, e.ts);
        o.u16(cap);
        return true;
      case Kind::STATE:
        state_event(o, static_cast<State>(e.x), e.ts);
        return true;
      case Kind::CTX_CREATE:
        o.head(CREATE_THREAD, e.ts);
        o.u32(e.y);
        return true;
      case Kind::CTX_RUN:
        o.head(RUN_THREAD, e.ts);
        o.u32(e.y);
        return true;
      case Kind::CTX_STOP:
        o.head(STOP_THREAD, e.ts);
        o.u32(e.y);
        o.u16(static_cast<std::uint16_t>(why_status(static_cast<Why>(e.x))));
        o.u32(0);  // blocked on no thread
        return true;
      case Kind::CTX_MIGRATE:
        o.head(MIGRATE_THREAD, e.ts);
        o.u32(e.y);
        o.u16(cap);
        return true;
      default:
        return false;
    }
  }

  // Sparks, notifications, futures and markers.
  static void other_event(Out &o, const Record &e, const std::vector<std::string> &markers) {
    switch (e.kind) {
      case Kind::SPARK_CREATE:
        o.head(SPARK_CREATE, e.ts);
        break;
      case Kind::SPARK_RUN:
        o.head(SPARK_RUN, e.ts);
        break;
      case Kind::SPARK_STEAL:
        o.head(SPARK_STEAL, e.ts);
        o.u16(e.x);
        break;
      case Kind::COUNTERS:
        // created, dud, overflowed, converted, fizzled, GC'd, remaining
        o.head(SPARK_COUNTERS, e.ts);
        o.u64(e.z);
        o.u64(0);
        o.u64(0);
        o.u64(e.w);
        o.u64(0);
        o.u64(0);
        o.u64(e.y);
        break;
      case Kind::NOTIFY_SENT:
        o.head(MR_NOTIFY_SENT, e.ts);
        o.u16(e.x);
        o.u16(static_cast<std::uint16_t>(e.y));
        break;
      case Kind::NOTIFY_RECV:
        o.head(MR_NOTIFY_RECEIVED, e.ts);
        o.u16(e.x);
        break;
      case Kind::FUT_WAIT:
        o.head(e.x ? MER_FUT_WAIT_SUSPENDED : MER_FUT_WAIT_NOSUSPEND, e.ts);
        o.u64(e.z);
        break;
      case Kind::FUT_SIGNAL:
        o.head(MER_FUT_SIGNAL, e.ts);
        o.u64(e.z);
        break;
      case Kind::MARKER: {
        const std::string &m = markers[e.y];
        std::size_t len = std::min(m.size(), kMaxMarker);
        o.head(USER_MARKER, e.ts);
        o.u16(static_cast<std::uint16_t>(len));
        o.bytes(m.data(), len);
        break;
      }
      default:  // thread_event's
        break;
    }
  }
};

}  // namespace

Writer *make_eventlog_writer() { return new EventlogWriter; }

}  // namespace mr::engine::trace
