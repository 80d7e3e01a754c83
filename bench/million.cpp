// million.cpp: a million contexts alive at once, each suspended on a future, against Go's
// goroutines blocked on a channel (bench/million.go), the same count in the same invocation.
//
//   bench/million [--count N] [--reps R] [--stack-size KiB] [--engines P] [--go PROGRAM]
//                 [--map-count M]
//       R times (default 3), alternately: a process of mrengine and one of PROGRAM (if given),
//       each with a fresh round and a reused round of N contexts (default 10^6). A round spawns N
//       contexts from the primordial context, each of which counts itself and waits on one
//       future; once all N wait, the future is signalled and each context finishes. Printed:
//       the resident memory per waiting context (VmRSS growth over the fresh round / N, in
//       bytes), the page tables per context (VmPTE, kernel memory outside VmRSS), and the time
//       per context from the first spawn to the last finish (ns; wall, and the process's CPU
//       time), fresh (every stack mapped) and reused (every context from the free cache). With
//       --map-count M above the current vm.max_map_count, one process first runs at the current
//       value and shows how far the spawns get (MR_ENOMEM, the warning, and then a reused round
//       and a clean shutdown: nothing else breaks); if that is short of N, the value is raised
//       to M for the timed runs (as root) and restored at the end.
//   bench/million --check [--count N]
//       one round of each with N contexts (default 50,000), checking that every spawned context
//       waited, resumed and finished and that the counters balance (make check). A spawn that
//       meets the mapping limit first (kernels before 6.13: two mappings per stack) ends the
//       round at the count reached, which is checked the same way.
//   bench/million --one ...
//       one process's rounds, printed as one line of key=value (what the default mode runs).
#include <signal.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "mrengine.h"
#include "summary.hpp"

namespace {

struct Args {
  long count = 1000000;
  int reps = 3;
  long stack_kib = 16;
  int engines = 2;
  std::string go;
  long map_count = 0;
  bool check = false;
  bool one = false;
};

// One round's shared state. seq_cst throughout: the counts are read against the target by
// whoever reaches it last (a context or the spawner), and only the round's ends are timed.
MR_Future g_release, g_all_waiting, g_all_done;
std::atomic<long> g_waiting{0}, g_done{0};
std::atomic<long> g_target{LONG_MAX};  // the contexts spawned, once the spawner knows

// Signal *f when `reached` is the round's target (both the last context and the spawner look:
// signalling twice with the same value is allowed).
void signal_if_last(long reached, MR_Future *f) {
  if (reached == g_target.load()) MR_future_signal(f, 1);
}

void waiter(void *) {
  signal_if_last(g_waiting.fetch_add(1) + 1, &g_all_waiting);
  MR_future_wait(&g_release);
  signal_if_last(g_done.fetch_add(1) + 1, &g_all_done);
}

double now_ns() {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e9 + ts.tv_nsec;
}

// The process's CPU time (user + system, every thread), in ns: what the load of other processes
// on the machine does not add to, as it does to the wall time.
double cpu_ns() {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e9 +
         (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1e3;
}

// A field of /proc/self/status in KiB ("VmRSS", "VmPTE").
long status_kib(const char *field) {
  FILE *f = std::fopen("/proc/self/status", "r");
  char line[256];
  long v = -1;
  std::size_t n = std::strlen(field);
  while (f && std::fgets(line, sizeof line, f))
    if (!std::strncmp(line, field, n) && line[n] == ':') v = std::strtol(line + n + 1, nullptr, 10);
  if (f) std::fclose(f);
  return v;
}

// Lines of /proc/self/maps: the mappings the process has (adjacent stacks may merge into one).
long mappings() {
  FILE *f = std::fopen("/proc/self/maps", "r");
  long n = 0;
  for (int c; f && (c = std::fgetc(f)) != EOF;) n += c == '\n';
  if (f) std::fclose(f);
  return n;
}

long read_map_count() {
  long v = -1;
  if (FILE *f = std::fopen("/proc/sys/vm/max_map_count", "r")) {
    if (std::fscanf(f, "%ld", &v) != 1) v = -1;
    std::fclose(f);
  }
  return v;
}

bool write_map_count(long v) {
  FILE *f = std::fopen("/proc/sys/vm/max_map_count", "w");
  if (!f) return false;
  bool ok = std::fprintf(f, "%ld\n", v) > 0;
  return std::fclose(f) == 0 && ok;
}

struct Round {
  long reached = 0;  // contexts spawned (fewer than asked: MR_spawn returned MR_ENOMEM)
  double ns = 0;     // first spawn to last finish
  double cpu = 0;    // the process's CPU time meanwhile
  long rss_kib = 0, pte_kib = 0;  // growth from before the spawns to all waiting
  long maps = 0;                  // the process's mappings with all waiting
};

Round round(long count) {
  Round r;
  MR_future_init(&g_release);
  MR_future_init(&g_all_waiting);
  MR_future_init(&g_all_done);
  g_waiting.store(0);
  g_done.store(0);
  g_target.store(LONG_MAX);
  const long rss0 = status_kib("VmRSS"), pte0 = status_kib("VmPTE");
  const double t0 = now_ns(), c0 = cpu_ns();
  int rc = 0;
  while (r.reached < count && (rc = MR_spawn(waiter, nullptr, nullptr)) == 0) r.reached++;
  if (rc != 0 && rc != MR_ENOMEM) {
    std::fprintf(stderr, "million: MR_spawn: %s\n", MR_strerror(rc));
    std::exit(1);
  }
  g_target.store(r.reached);
  if (r.reached == 0) return r;
  signal_if_last(g_waiting.load(), &g_all_waiting);
  MR_future_wait(&g_all_waiting);
  r.rss_kib = status_kib("VmRSS") - rss0;
  r.pte_kib = status_kib("VmPTE") - pte0;
  r.maps = mappings();
  MR_future_signal(&g_release, 1);
  signal_if_last(g_done.load(), &g_all_done);
  MR_future_wait(&g_all_done);
  r.ns = now_ns() - t0;
  r.cpu = cpu_ns() - c0;
  return r;
}

struct Totals {
  std::uint64_t created = 0, reused = 0, suspended = 0, resumed = 0;
};

Totals totals() {
  Totals t;
  for (int e = 0; e < MR_num_engines(); e++) {
    MR_EngineStats s;
    MR_engine_stats_init(&s);
    if (MR_stats_get(e, &s) != 0) std::exit(1);
    t.created += s.contexts_created;
    t.reused += s.contexts_reused;
    t.suspended += s.contexts_suspended;
    t.resumed += s.contexts_resumed;
  }
  return t;
}

void start(const Args &a) {
  char opts[96];
  std::snprintf(opts, sizeof opts, "-P %d --stack-size %ld", a.engines, a.stack_kib);
  MR_Config c;
  MR_config_default(&c);
  c.flags |= MR_CONFIG_IGNORE_ENV;
  c.options = opts;
  if (MR_init(&c) != 0) {
    std::fprintf(stderr, "million: MR_init: %s\n", MR_init_error_message());
    std::exit(1);
  }
}

// --one: a fresh round and a reused round in a runtime of our own, as one line.
int run_one(const Args &a) {
  start(a);
  const Round fresh = round(a.count);
  const Totals t1 = totals();
  const Round reused = round(fresh.reached);
  const Totals t2 = totals();
  const int rc = MR_shutdown();
  // What the shutdown gave back: every stack unmapped (an unmap that splits a merged mapping
  // needs a mapping of its own, which vm.max_map_count may refuse).
  const long rss_after = status_kib("VmRSS"), maps_after = mappings();
  const double n = fresh.reached > 0 ? static_cast<double>(fresh.reached) : 1;
  std::printf(
      "reached=%ld fresh_ns=%.1f reused_ns=%.1f fresh_cpu_ns=%.1f reused_cpu_ns=%.1f rss_kib=%.3f "
      "pte_kib=%.3f created=%llu "
      "reused=%llu reused_created=%llu maps=%ld shutdown=%d rss_after_kib=%ld maps_after=%ld\n",
      fresh.reached, fresh.ns / n, reused.ns / n, fresh.cpu / n, reused.cpu / n, fresh.rss_kib / n,
      fresh.pte_kib / n, static_cast<unsigned long long>(t1.created),
      static_cast<unsigned long long>(t2.reused),
      static_cast<unsigned long long>(t2.created - t1.created), fresh.maps, rc, rss_after,
      maps_after);
  return rc == 0 && reused.reached == fresh.reached ? 0 : 1;
}

#define MR_BENCH_EXPECT(cond)                                                           \
  do {                                                                                  \
    if (!(cond)) {                                                                      \
      std::fprintf(stderr, "million --check: failed: %s (line %d)\n", #cond, __LINE__); \
      std::exit(1);                                                                     \
    }                                                                                   \
  } while (0)

// --check: every context spawned waited, resumed and finished, fresh and reused.
int run_check(const Args &a) {
  start(a);
  const Round fresh = round(a.count);
  MR_BENCH_EXPECT(fresh.reached > 0);
  MR_BENCH_EXPECT(g_done.load() == fresh.reached);
  const Totals t1 = totals();
  MR_BENCH_EXPECT(t1.created == static_cast<std::uint64_t>(fresh.reached));
  const Round reused = round(fresh.reached);
  MR_BENCH_EXPECT(reused.reached == fresh.reached);
  MR_BENCH_EXPECT(g_done.load() == fresh.reached);
  const Totals t2 = totals();
  // The second round's contexts come from the free caches, but for those that stayed in the
  // other engines' own caches (16 each, engine/engine.hpp's kCacheMax) and the last of the first
  // round, which may still be on its way into a cache.
  MR_BENCH_EXPECT(t2.created + t2.reused == 2 * static_cast<std::uint64_t>(fresh.reached));
  MR_BENCH_EXPECT(t2.created - t1.created <= 16u * static_cast<unsigned>(a.engines) + 2);
  // The spawner (the primordial context) suspends twice per round; every suspension resumed.
  MR_BENCH_EXPECT(t2.suspended == t2.resumed);
  MR_BENCH_EXPECT(t2.suspended >= 2 * static_cast<std::uint64_t>(fresh.reached));
  MR_BENCH_EXPECT(MR_shutdown() == 0);
  std::printf("million --check: %ld contexts of %ld asked (%s), fresh and reused: ok\n",
              fresh.reached, a.count, fresh.reached < a.count ? "MR_ENOMEM" : "all");
  return 0;
}

// A child's line of key=value, by key (-1 when missing).
struct Line {
  std::string text;
  double get(const char *key) const {
    std::string k = std::string(" ") + key + "=";
    std::size_t at = (" " + text).find(k);
    return at == std::string::npos ? -1 : std::atof(text.c_str() + at + k.size() - 1);
  }
};

// Run `cmd` and return its last line of output (empty if it failed).
Line run_child(const std::string &cmd) {
  Line l;
  std::fflush(stdout);
  FILE *p = popen(cmd.c_str(), "r");
  char buf[512];
  while (p && std::fgets(buf, sizeof buf, p)) l.text = buf;
  if (!p || pclose(p) != 0) l.text.clear();
  return l;
}

std::string one_command(const char *self, const Args &a, long count) {
  return std::string(self) + " --one --count " + std::to_string(count) + " --engines " +
         std::to_string(a.engines) + " --stack-size " + std::to_string(a.stack_kib);
}

// The map count to restore at exit (0: none was changed).
long g_old_map_count = 0;

void restore_map_count() {
  if (g_old_map_count > 0 && write_map_count(g_old_map_count))
    std::printf("vm.max_map_count restored to %ld\n", g_old_map_count);
  g_old_map_count = 0;
}

void on_signal(int sig) {
  restore_map_count();
  signal(sig, SIG_DFL);
  raise(sig);
}

// At the current vm.max_map_count: where the spawns stop, and that the runtime goes on. Returns
// the contexts spawned.
long show_limit(const char *self, const Args &a) {
  std::printf("at vm.max_map_count=%ld: %ld contexts asked\n", read_map_count(), a.count);
  Line l = run_child(one_command(self, a, a.count));
  if (l.text.empty()) {
    std::printf("  the run failed\n");
    return 0;
  }
  const long reached = static_cast<long>(l.get("reached"));
  std::printf(
      "  spawned %ld (%s) in %.0f mappings; a reused round of as many: ok; MR_shutdown: "
      "%.0f, %.0f mappings left\n",
      reached, reached < a.count ? "then MR_ENOMEM" : "all", l.get("maps"), l.get("shutdown"),
      l.get("maps_after"));
  return reached;
}

void print_figure(const char *what, const char *key, const std::vector<Line> &v, double scale,
                  const char *unit) {
  std::vector<double> xs;
  for (const Line &l : v)
    if (!l.text.empty() && l.get(key) >= 0) xs.push_back(l.get(key) * scale);
  if (xs.empty()) return;
  bench::print_row(what, bench::summarise(xs), unit);
}

int run_compare(const char *self, Args a) {
  const long limit = read_map_count();
  // Raised only where the stacks need it: on 6.13 and later adjacent stacks merge into a few
  // mappings; before, each is two.
  if (a.map_count > limit && show_limit(self, a) < a.count) {
    if (write_map_count(a.map_count)) {
      g_old_map_count = limit;
      std::atexit(restore_map_count);
      signal(SIGINT, on_signal);
      signal(SIGTERM, on_signal);
      std::printf("vm.max_map_count raised to %ld for the runs below\n", a.map_count);
    } else {
      std::printf("vm.max_map_count stays %ld (raising it needs root)\n", limit);
    }
  }
  std::vector<Line> mr, go;
  for (int rep = 0; rep < a.reps; rep++) {
    mr.push_back(run_child(one_command(self, a, a.count)));
    if (!a.go.empty()) go.push_back(run_child(a.go + " --count " + std::to_string(a.count)));
  }
  restore_map_count();
  std::printf(
      "%ld contexts suspended on a future (mrengine, -P %d, --stack-size %ld) against "
      "as many goroutines blocked on a channel (Go); median of %d processes each "
      "(min..max)\n",
      a.count, a.engines, a.stack_kib, a.reps);
  if (!mr.empty() && mr[0].get("reached") >= 0 && mr[0].get("reached") < a.count)
    std::printf("  mrengine reached only %.0f contexts (MR_ENOMEM)\n", mr[0].get("reached"));
  // Each figure of both runtimes: its key in the children's lines, scale and unit, and what it is
  // for mrengine and for Go.
  static const struct {
    const char *key;
    double scale;
    const char *unit, *mr, *go;
  } kFigures[] = {
      {"rss_kib", 1024, "B  ", "resident per waiting context", "resident per blocked goroutine"},
      {"pte_kib", 1024, "B  ", "page tables per context (not in RSS)",
       "page tables per goroutine (not in RSS)"},
      {"fresh_ns", 1, "ns ", "spawn+suspend+resume per context, fresh",
       "go+block+wake per goroutine, fresh"},
      {"reused_ns", 1, "ns ", "spawn+suspend+resume per context, reused",
       "go+block+wake per goroutine, reused"},
      {"fresh_cpu_ns", 1, "ns ", "CPU time of that, fresh", "CPU time of that, fresh"},
      {"reused_cpu_ns", 1, "ns ", "CPU time of that, reused", "CPU time of that, reused"},
  };
  for (const auto &f : kFigures)
    print_figure(("mrengine: " + std::string(f.mr)).c_str(), f.key, mr, f.scale, f.unit);
  for (const auto &f : kFigures)
    print_figure(("Go: " + std::string(f.go)).c_str(), f.key, go, f.scale, f.unit);
  for (const Line &l : mr)
    if (l.text.empty()) return 1;
  return 0;
}

void usage(const char *self) {
  std::fprintf(stderr,
               "usage: %s [--count N] [--reps R] [--stack-size KiB] [--engines P] "
               "[--go PROGRAM] [--map-count M] | --check [--count N] | --one ...\n",
               self);
  std::exit(2);
}

Args parse(int argc, char **argv) {
  Args a;
  bool counted = false;
  for (int i = 1; i < argc; i++) {
    std::string s = argv[i];
    const bool has_value = i + 1 < argc;
    if (s == "--check") {
      a.check = true;
    } else if (s == "--one") {
      a.one = true;
    } else if (s == "--count" && has_value) {
      a.count = std::atol(argv[++i]);
      counted = true;
    } else if (s == "--reps" && has_value) {
      a.reps = std::atoi(argv[++i]);
    } else if (s == "--stack-size" && has_value) {
      a.stack_kib = std::atol(argv[++i]);
    } else if (s == "--engines" && has_value) {
      a.engines = std::atoi(argv[++i]);
    } else if (s == "--go" && has_value) {
      a.go = argv[++i];
    } else if (s == "--map-count" && has_value) {
      a.map_count = std::atol(argv[++i]);
    } else {
      usage(argv[0]);
    }
  }
  if (a.check && !counted) a.count = 50000;
  if (a.count < 1 || a.reps < 1 || a.engines < 1) usage(argv[0]);
  return a;
}

}  // namespace

int main(int argc, char **argv) {
  const Args a = parse(argc, argv);
  if (a.check) return run_check(a);
  if (a.one) return run_one(a);
  return run_compare(argv[0], a);
}
