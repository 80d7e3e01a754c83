// trace_json.cpp: the Chrome trace-event JSON writer (trace.hpp's Writer), for Perfetto and
// chrome://tracing. One JSON array: process 1 "engines" has a track per engine whose slices
// are its states (they follow each other without gap from the engine's start in the trace to
// its stop) and instants for steals, notifications and markers, and the counters; process 2
// "contexts" has a track per context task (thread id) with a slice per run. Timestamps are in
// microseconds (with ns precision) since the trace began.
#include "config.h"

#include <cinttypes>
#include <cstdio>

#include "trace.hpp"

namespace mr::engine::trace {

namespace {

constexpr int kForeignTid = 100000;  // the track of threads that are not engines

class JsonWriter final : public Writer {
 public:
  void begin(std::string *o, int engines) override {
    tracks_.assign(static_cast<std::size_t>(engines), Track{});
    o->append("[\n");
    meta(o, "process_name", 1, 0, "engines");
    meta(o, "process_name", 2, 0, "contexts");
    for (int i = 0; i < engines; i++) {
      char name[32];
      std::snprintf(name, sizeof name, "engine %d", i);
      meta(o, "thread_name", 1, i, name);
    }
    meta(o, "thread_name", 1, kForeignTid, "threads that are not engines");
  }

  void block(std::string *o, int engine, const Record *ev, std::size_t n,
             const std::vector<std::string> &markers) override {
    for (std::size_t i = 0; i < n; i++) one(o, engine, ev[i], markers);
  }

  void end(std::string *o) override { o->append("\n]\n"); }

 private:
  // What one engine's track has open: its state since when, and the context running on it.
  struct Track {
    int state = -1;  // -1: not started; else a State, or kNotified
    std::uint64_t since = 0;
    std::uint32_t run_tid = 0;
    std::uint64_t run_since = 0;
  };
  static constexpr int kNotified = 100;  // NOTIFIED as the engine found it (NOTIFY_RECV)
  std::vector<Track> tracks_;

  static void ts(std::string *o, std::uint64_t ns) {
    char b[40];
    std::snprintf(b, sizeof b, "%" PRIu64 ".%03" PRIu64, ns / 1000, ns % 1000);
    o->append(b);
  }

  // Every object but the first (begin's first metadata) begins with ",\n": a trace cut short
  // is valid JSON but for its closing bracket, which readers of this format do not require.
  // Every object has a category and arguments: Chrome DevTools' parser requires both.
  static void open(std::string *o, const char *ph, const char *cat, const std::string &name,
                   int pid, int tid, std::uint64_t t) {
    o->append(",\n{\"ph\":\"");
    o->append(ph);
    o->append("\",\"cat\":\"");
    o->append(cat);
    o->append("\",\"name\":");
    quote(o, name);
    char b[64];
    std::snprintf(b, sizeof b, ",\"pid\":%d,\"tid\":%d,\"ts\":", pid, tid);
    o->append(b);
    ts(o, t);
  }

  static void meta(std::string *o, const char *what, int pid, int tid, const char *name) {
    if (*o != "[\n") o->append(",\n");
    char b[128];
    std::snprintf(b, sizeof b,
                  "{\"ph\":\"M\",\"cat\":\"__metadata\",\"name\":\"%s\",\"pid\":%d,"
                  "\"tid\":%d,\"args\":{\"name\":",
                  what, pid, tid);
    o->append(b);
    quote(o, name);
    o->append("}}");
  }

  static void quote(std::string *o, const std::string &s) {
    o->push_back('"');
    for (unsigned char c : s) {
      if (c == '"' || c == '\\') {
        o->push_back('\\');
        o->push_back(static_cast<char>(c));
      } else if (c < 0x20) {
        char b[8];
        std::snprintf(b, sizeof b, "\\u%04x", c);
        o->append(b);
      } else {
        o->push_back(static_cast<char>(c));
      }
    }
    o->push_back('"');
  }

  static const char *state_text(int s) {
    return s == kNotified ? "NOTIFIED" : state_name(static_cast<State>(s));
  }

  // Close engine e's state slice at t and open `next` (-1: none).
  void set_state(std::string *o, int e, int next, std::uint64_t t) {
    Track &k = tracks_[static_cast<std::size_t>(e)];
    if (k.state >= 0) {
      open(o, "X", "state", state_text(k.state), 1, e, k.since);
      o->append(",\"dur\":");
      ts(o, t - k.since);
      o->append(",\"args\":{}}");
    }
    k.state = next;
    k.since = t;
  }

  void end_run(std::string *o, int e, std::uint64_t t, const char *why) {
    Track &k = tracks_[static_cast<std::size_t>(e)];
    if (k.run_tid == 0) return;
    char name[32];
    std::snprintf(name, sizeof name, "context %" PRIu32, k.run_tid);
    open(o, "X", "context", name, 2, static_cast<int>(k.run_tid), k.run_since);
    o->append(",\"dur\":");
    ts(o, t - k.run_since);
    char b[96];
    std::snprintf(b, sizeof b, ",\"args\":{\"engine\":%d,\"stop\":\"%s\"}}", e, why);
    o->append(b);
    k.run_tid = 0;
  }

  void instant(std::string *o, const char *cat, int e, std::uint64_t t, const std::string &name) {
    open(o, "i", cat, name, 1, e < 0 ? kForeignTid : e, t);
    o->append(",\"s\":\"t\",\"args\":{}}");
  }

  void counter(std::string *o, const std::string &name, std::uint64_t t, const char *series,
               std::uint64_t v) {
    open(o, "C", "counter", name, 1, 0, t);
    char b[64];
    std::snprintf(b, sizeof b, ",\"args\":{\"%s\":%" PRIu64 "}}", series, v);
    o->append(b);
  }

  void one(std::string *o, int e, const Record &ev, const std::vector<std::string> &markers) {
    char b[96];
    switch (ev.kind) {
      case Kind::ENGINE_START:
        set_state(o, e, ev.x, ev.ts);
        break;
      case Kind::ENGINE_STOP:
        set_state(o, e, -1, ev.ts);
        break;
      case Kind::STATE: {
        int before = tracks_[static_cast<std::size_t>(e)].state;
        set_state(o, e, ev.x, ev.ts);
        constexpr int kSleeping = static_cast<int>(State::SLEEPING);
        if (before == kSleeping || ev.x == kSleeping)
          counter(o, "engines asleep", ev.ts, "engines", ev.y);
        break;
      }
      case Kind::CTX_CREATE:
        break;  // the context's track begins with its first run
      case Kind::CTX_RUN: {
        Track &k = tracks_[static_cast<std::size_t>(e)];
        k.run_tid = ev.y;
        k.run_since = ev.ts;
        break;
      }
      case Kind::CTX_STOP:
        end_run(o, e, ev.ts, why_name(static_cast<Why>(ev.x)));
        break;
      case Kind::CTX_MIGRATE:
        std::snprintf(b, sizeof b, "context %" PRIu32 " migrates from engine %u", ev.y, ev.x);
        instant(o, "context", e, ev.ts, b);
        break;
      case Kind::SPARK_CREATE:
      case Kind::SPARK_RUN:
        break;  // in the counters: one object per spark would drown the file
      case Kind::SPARK_STEAL:
        std::snprintf(b, sizeof b, "steal from engine %u", ev.x);
        instant(o, "spark", e, ev.ts, b);
        break;
      case Kind::COUNTERS:
        std::snprintf(b, sizeof b, "sparks queued, engine %d", e);
        counter(o, b, ev.ts, "sparks", ev.y);
        break;
      case Kind::NOTIFY_SENT:
        std::snprintf(b, sizeof b, "notify %s to engine %" PRIu32,
                      action_name(static_cast<Action>(ev.x)), ev.y);
        instant(o, "notification", e, ev.ts, b);
        break;
      case Kind::NOTIFY_RECV:
        if (tracks_[static_cast<std::size_t>(e)].state == static_cast<int>(State::SLEEPING))
          counter(o, "engines asleep", ev.ts, "engines", ev.y);
        set_state(o, e, kNotified, ev.ts);
        std::snprintf(b, sizeof b, "notified: %s", action_name(static_cast<Action>(ev.x)));
        instant(o, "notification", e, ev.ts, b);
        break;
      case Kind::FUT_WAIT:
        std::snprintf(b, sizeof b, "future %#" PRIx64 " waited on%s", ev.z,
                      ev.x ? " (suspends)" : "");
        instant(o, "future", e, ev.ts, b);
        break;
      case Kind::FUT_SIGNAL:
        std::snprintf(b, sizeof b, "future %#" PRIx64 " signalled", ev.z);
        instant(o, "future", e, ev.ts, b);
        break;
      case Kind::MARKER:
        open(o, "i", "marker", markers[ev.y], 1, e < 0 ? kForeignTid : e, ev.ts);
        o->append(",\"s\":\"g\",\"args\":{}}");
        break;
    }
  }
};

}  // namespace

Writer *make_json_writer() { return new JsonWriter; }

}  // namespace mr::engine::trace
