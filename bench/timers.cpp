// timers.cpp: what timers cost (doc/performance.md, "Timers").
//
//   bench/timers arm [--reps R]       arm+cancel of one timer with 10^3 and 10^6 timers pending,
//                                     ns per pair, from a context; next to the same pairs on a
//                                     std::multiset (a balanced tree, the other usual store)
//   bench/timers lateness [--reps R]  how late 1 ms sleeps wake (median and p99, us): one context
//                                     sleeping 2000 times, 100 contexts sleeping 100 times each,
//                                     and a plain thread's clock_nanosleep (the floor)
//   bench/timers idle [--reps R]      CPU time of 2 s of an idle runtime, without timers and with
//                                     10^5 far-future timers pending
//   bench/timers all [--reps R]       the three
//   bench/timers --check              each once with small counts (make check: it runs, it
//                                     measures nothing)
// Every figure is the median of R processes' worth of repetitions (default 5) with min..max.
#include <sys/resource.h>
#include <time.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "mrengine.h"
#include "summary.hpp"

namespace {

bool g_check = false;

using bench::print_row;
using bench::summarise;
using bench::Summary;

void start_runtime() {
  MR_Config c;
  MR_config_default(&c);
  if (MR_init(&c) != 0) {
    std::fprintf(stderr, "MR_init failed: %s\n", MR_init_error_message());
    std::exit(1);
  }
}

double cpu_s() {
  struct rusage u {};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

void noop(void *) {}

// ---- arm + cancel ----
// ns per arm+cancel pair with `pending` timers pending, through the C ABI, run in the calling
// context (the primordial, a context bound to engine 0).
double arm_cancel_ns(std::size_t pending, int pairs) {
  std::vector<MR_Timer> bg(pending, MR_Timer{});  // zeroed: never started
  const uint64_t far = MR_now() + 3600ull * 1000000000ull;
  for (std::size_t i = 0; i < pending; i++)
    (void)MR_timer_start(&bg[i], far + (i * 7919) % 1000000007ull, noop, nullptr);
  MR_Timer t;
  std::memset(&t, 0, sizeof t);
  uint64_t t0 = MR_now();
  for (int k = 0; k < pairs; k++) {
    (void)MR_timer_start(&t, far + static_cast<uint64_t>(k) * 997 % 1000000007ull, noop, nullptr);
    (void)MR_timer_cancel(&t);
  }
  double ns = static_cast<double>(MR_now() - t0) / pairs;
  for (auto &x : bg) (void)MR_timer_cancel(&x);
  return ns;
}

// The same pairs on a std::multiset of (deadline, id), erased by iterator.
double tree_ns(std::size_t pending, int pairs) {
  std::multiset<std::pair<uint64_t, std::size_t>> s;
  const uint64_t far = 3600ull * 1000000000ull;
  for (std::size_t i = 0; i < pending; i++) s.emplace(far + (i * 7919) % 1000000007ull, i);
  uint64_t t0 = MR_now();
  for (int k = 0; k < pairs; k++) {
    auto it = s.emplace(far + static_cast<uint64_t>(k) * 997 % 1000000007ull, pending);
    s.erase(it);
  }
  return static_cast<double>(MR_now() - t0) / pairs;
}

void bench_arm(int reps) {
  start_runtime();
  const int pairs = g_check ? 1000 : 200000;
  std::printf("timer arm+cancel, ns per pair (%d pairs, median of %d, min..max)\n", pairs, reps);
  for (std::size_t pending : {std::size_t{1000}, std::size_t{g_check ? 10000u : 1000000u}}) {
    std::vector<double> heap, tree;
    for (int r = 0; r < reps; r++) {
      heap.push_back(arm_cancel_ns(pending, pairs));
      tree.push_back(tree_ns(pending, pairs));
    }
    Summary h = summarise(heap), t = summarise(tree);
    char what[96];
    std::snprintf(what, sizeof what, "mrengine (4-ary heap per engine), %zu pending", pending);
    print_row(what, h, "ns");
    std::snprintf(what, sizeof what, "std::multiset, %zu pending", pending);
    print_row(what, t, "ns");
    std::printf("  ratio heap/multiset: %.2f\n", h.med / t.med);
  }
  (void)MR_shutdown();
}

// ---- lateness ----
struct SleepJob {
  int count;
  double *out;  // us late, one per sleep
};
void sleep_job(void *p) {
  auto *j = static_cast<SleepJob *>(p);
  for (int k = 0; k < j->count; k++) {
    uint64_t due = MR_now() + 1000000;
    (void)MR_sleep_until(due);
    j->out[k] = static_cast<double>(MR_now() - due) / 1000.0;
  }
}

void late_summary(const char *what, std::vector<std::vector<double>> &runs) {
  std::vector<double> med, p99;
  for (auto &v : runs) {
    std::sort(v.begin(), v.end());
    med.push_back(v[v.size() / 2]);
    p99.push_back(v[v.size() * 99 / 100]);
  }
  char w[96];
  std::snprintf(w, sizeof w, "%s: median", what);
  print_row(w, summarise(med), "us");
  std::snprintf(w, sizeof w, "%s: p99", what);
  print_row(w, summarise(p99), "us");
}

// `contexts` contexts sleep `each` times 1 ms, in parallel; the lateness of every sleep.
std::vector<double> mr_lateness(int contexts, int each) {
  std::vector<double> late(static_cast<std::size_t>(contexts * each));
  std::vector<SleepJob> jobs(static_cast<std::size_t>(contexts));
  MR_SyncTerm st;
  MR_sync_term_init(&st, static_cast<unsigned>(contexts) + 1);
  for (int c = 0; c < contexts; c++) {
    jobs[static_cast<std::size_t>(c)] = {each, &late[static_cast<std::size_t>(c * each)]};
    MR_fork_new_child(&st, sleep_job, &jobs[static_cast<std::size_t>(c)]);
  }
  MR_join_and_continue(&st);
  return late;
}

std::vector<double> thread_lateness(int count) {
  std::vector<double> late;
  std::thread th([&] {
    for (int k = 0; k < count; k++) {
      struct timespec now;
      clock_gettime(CLOCK_MONOTONIC, &now);
      uint64_t due = static_cast<uint64_t>(now.tv_sec) * 1000000000ull +
                     static_cast<uint64_t>(now.tv_nsec) + 1000000;
      struct timespec ts = {static_cast<time_t>(due / 1000000000ull),
                            static_cast<long>(due % 1000000000ull)};
      while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nullptr) != 0) {}
      late.push_back(static_cast<double>(MR_now() - due) / 1000.0);
    }
  });
  th.join();
  return late;
}

void bench_lateness(int reps) {
  start_runtime();
  const int seq = g_check ? 20 : 2000, ctxs = g_check ? 4 : 100, each = g_check ? 5 : 100;
  std::printf("1 ms sleep lateness, us (median of %d runs, min..max)\n", reps);
  std::vector<std::vector<double>> one, many, floor;
  for (int r = 0; r < reps; r++) {
    one.push_back(mr_lateness(1, seq));
    many.push_back(mr_lateness(ctxs, each));
    floor.push_back(thread_lateness(seq));
  }
  char w[96];
  std::snprintf(w, sizeof w, "mrengine, 1 context x %d sleeps", seq);
  late_summary(w, one);
  std::snprintf(w, sizeof w, "mrengine, %d contexts x %d sleeps", ctxs, each);
  late_summary(w, many);
  std::snprintf(w, sizeof w, "thread clock_nanosleep x %d", seq);
  late_summary(w, floor);
  (void)MR_shutdown();
}

// ---- idle CPU ----
double idle_cpu_ms(std::size_t timers, double seconds) {
  start_runtime();
  std::vector<MR_Timer> t(timers, MR_Timer{});  // zeroed: never started
  const uint64_t far = MR_now() + 3600ull * 1000000000ull;
  for (std::size_t i = 0; i < timers; i++) (void)MR_timer_start(&t[i], far + i, noop, nullptr);
  double c0 = cpu_s();
  (void)MR_sleep_for(static_cast<uint64_t>(seconds * 1e9));
  double used = (cpu_s() - c0) * 1000.0;
  for (auto &x : t) (void)MR_timer_cancel(&x);
  (void)MR_shutdown();
  return used;
}

void bench_idle(int reps) {
  const double secs = g_check ? 0.05 : 2.0;
  std::printf("CPU of %.2f s of an idle runtime, ms (median of %d, min..max)\n", secs, reps);
  std::vector<double> none, many;
  for (int r = 0; r < reps; r++) {
    none.push_back(idle_cpu_ms(0, secs));
    many.push_back(idle_cpu_ms(g_check ? 1000 : 100000, secs));
  }
  print_row("no timers", summarise(none), "ms");
  print_row(g_check ? "10^3 far-future timers pending" : "10^5 far-future timers pending",
            summarise(many), "ms");
}

}  // namespace

int main(int argc, char **argv) {
  std::string what = argc > 1 ? argv[1] : "all";
  int reps = 5;
  for (int i = 1; i < argc; i++) {
    if (!std::strcmp(argv[i], "--reps") && i + 1 < argc) reps = std::atoi(argv[++i]);
    if (!std::strcmp(argv[i], "--check")) {
      g_check = true;
      what = "all";
      reps = 1;
    }
  }
  if (reps < 1) reps = 1;
  if (what == "arm" || what == "all") bench_arm(reps);
  if (what == "lateness" || what == "all") bench_lateness(reps);
  if (what == "idle" || what == "all") bench_idle(reps);
  if (what != "arm" && what != "lateness" && what != "idle" && what != "all") {
    std::fprintf(stderr, "usage: %s arm|lateness|idle|all [--reps R] | --check\n", argv[0]);
    return 2;
  }
  return 0;
}
