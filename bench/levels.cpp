// levels.cpp: what channels and levels give (doc/api.md, "Channels").
//
//   bench/levels latency [--reps R]  start latency of a context spawned into the top level by a
//                                    thread that is not an engine, while 2 engines are saturated
//                                    by a backlog (32 contexts of 1 ms steps, MR_yield between
//                                    steps, forever refilled): median and p99 (us) with the
//                                    backlog a level below (highest-first), against backlog and
//                                    probes in one FIFO channel; the ratio of the two
//   bench/levels shares [--reps R]   --schedule=round-robin on 2 engines with 2 and 3 saturated
//                                    levels and slices of 100, 1000 and 10000 us: each level's
//                                    share of the time run (MR_channel_stats) over 1 s, against
//                                    its configured share (the slice is the same for every level,
//                                    so 1/2 or 1/3)
//   bench/levels all [--reps R]      both
//   bench/levels --check             each once with small counts (make check: it runs, it
//                                    measures nothing)
// Every figure is the median of R runs (a runtime each; default 5) with min..max.
#include <time.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "mrengine.h"
#include "summary.hpp"

namespace {

bool g_check = false;

using bench::print_row;
using bench::summarise;
using bench::Summary;

void start_runtime(const std::string &opts) {
  MR_Config c;
  MR_config_default(&c);
  c.flags |= MR_CONFIG_IGNORE_ENV;
  c.options = opts.c_str();
  if (MR_init(&c) != 0) {
    std::fprintf(stderr, "MR_init failed: %s\n", MR_init_error_message());
    std::exit(1);
  }
}

int make_channel(int level) {
  MR_ChannelOptions c;
  MR_channel_options_default(&c);
  c.level = level;
  int ch = MR_channel_create(&c);
  if (ch < 0) {
    std::fprintf(stderr, "MR_channel_create: %s\n", MR_strerror(ch));
    std::exit(1);
  }
  return ch;
}

void spawn_in(MR_TaskFn fn, void *arg, int ch) {
  MR_SpawnOptions o;
  MR_spawn_options_default(&o);
  o.channel = ch;
  int rc = MR_spawn(fn, arg, &o);
  if (rc != 0) {
    std::fprintf(stderr, "MR_spawn: %s\n", MR_strerror(rc));
    std::exit(1);
  }
}

void busy(uint64_t ns) {
  uint64_t end = MR_now() + ns;
  while (MR_now() < end) {}
}

void sleep_us(long us) {
  struct timespec ts = {us / 1000000, (us % 1000000) * 1000};
  nanosleep(&ts, nullptr);
}

// ---- the backlog: contexts doing `step` ns of work, then MR_yield, until `stop` ----
struct Backlog {
  uint64_t step;
  // relaxed: a flag polled between steps; MR_shutdown waits for the contexts to see it.
  std::atomic<bool> stop{false};
  static void run(void *p) {
    auto *b = static_cast<Backlog *>(p);
    while (!b->stop.load(std::memory_order_relaxed)) {
      busy(b->step);
      MR_yield();
    }
  }
};

// ---- start latency ----
struct Probe {
  uint64_t started = 0;
  MR_Future done;
  static void run(void *p) {
    auto *pr = static_cast<Probe *>(p);
    pr->started = MR_now();
    MR_future_signal(&pr->done, 1);
  }
};

// One run: the probes' start latencies (ns), sorted. levels: backlog at level 3, probes at 0;
// otherwise both in the default channel.
std::vector<double> latency_run(bool levels, int backlog_n, uint64_t step, int probes) {
  start_runtime("-P 2");
  int top = levels ? make_channel(0) : MR_CHANNEL_DEFAULT;
  int low = levels ? make_channel(3) : MR_CHANNEL_DEFAULT;
  Backlog b;
  b.step = step;
  for (int i = 0; i < backlog_n; i++) spawn_in(Backlog::run, &b, low);
  std::vector<double> lat;
  MR_Future finished;
  MR_future_init(&finished);
  std::thread net([&] {
    sleep_us(20000);  // the backlog fills both engines
    unsigned seed = 7;
    for (int i = 0; i < probes; i++) {
      Probe p;
      MR_future_init(&p.done);
      uint64_t t0 = MR_now();
      spawn_in(Probe::run, &p, top);
      MR_future_wait(&p.done);  // blocks this thread
      lat.push_back(static_cast<double>(p.started - t0));
      seed = seed * 1103515245u + 12345u;
      sleep_us(1000 + static_cast<long>((seed >> 16) % 2000));  // probes at random phases
    }
    MR_future_signal(&finished, 1);
  });
  MR_future_wait(&finished);  // engine 0 serves the backlog meanwhile
  net.join();
  b.stop.store(true, std::memory_order_relaxed);
  MR_shutdown();
  std::sort(lat.begin(), lat.end());
  return lat;
}

void latency(int reps) {
  int backlog_n = g_check ? 4 : 32, probes = g_check ? 5 : 100;
  uint64_t step = g_check ? 200000 : 1000000;
  std::vector<double> med[2], p99[2], ratio_med, ratio_p99;
  for (int r = 0; r < reps; r++) {
    for (int levels = 0; levels < 2; levels++) {
      std::vector<double> lat = latency_run(levels != 0, backlog_n, step, probes);
      med[levels].push_back(lat[lat.size() / 2] / 1e3);
      p99[levels].push_back(lat[static_cast<std::size_t>(0.99 * static_cast<double>(lat.size()))] /
                            1e3);
    }
    ratio_med.push_back(med[0].back() / med[1].back());
    ratio_p99.push_back(p99[0].back() / p99[1].back());
  }
  std::printf(
      "start latency of a top-level context under a backlog of %d x %.1f ms steps on 2 "
      "engines, us (%d probes a run, median of %d runs, min..max)\n",
      backlog_n, static_cast<double>(step) / 1e6, probes, reps);
  print_row("levels (backlog at level 3): median", summarise(med[1]), "us");
  print_row("levels (backlog at level 3): p99", summarise(p99[1]), "us");
  print_row("one FIFO channel: median", summarise(med[0]), "us");
  print_row("one FIFO channel: p99", summarise(p99[0]), "us");
  print_row("FIFO / levels, median", summarise(ratio_med), "x ");
  print_row("FIFO / levels, p99", summarise(ratio_p99), "x ");
}

// ---- round-robin shares ----
// One run: each of `nlevels` saturated levels' share (%) of the time run over `secs`.
std::vector<double> shares_run(int nlevels, int slice_us, double secs) {
  start_runtime("-P 2 --schedule=round-robin --level-slice-us=" + std::to_string(slice_us));
  std::vector<int> ch;
  Backlog b;
  b.step = 100000;  // 0.1 ms steps: a slice ends within 0.1 ms of its length
  for (int l = 0; l < nlevels; l++) {
    ch.push_back(make_channel(l * 2));
    for (int i = 0; i < 4; i++) spawn_in(Backlog::run, &b, ch.back());
  }
  auto ns_run = [](int c) {
    MR_ChannelStats s;
    MR_channel_stats_init(&s);
    if (MR_channel_stats(c, &s) != 0) std::exit(1);
    return static_cast<double>(s.ns_run);
  };
  std::vector<double> before;
  for (int c : ch) before.push_back(ns_run(c));
  MR_sleep_for(static_cast<uint64_t>(secs * 1e9));  // engine 0 serves the levels meanwhile
  std::vector<double> ran;
  double total = 0;
  for (std::size_t i = 0; i < ch.size(); i++) {
    ran.push_back(ns_run(ch[i]) - before[i]);
    total += ran.back();
  }
  b.stop.store(true, std::memory_order_relaxed);
  MR_shutdown();
  for (double &x : ran) x = total > 0 ? 100.0 * x / total : 0;
  return ran;
}

void shares(int reps) {
  double secs = g_check ? 0.1 : 1.0;
  std::printf(
      "round-robin: each saturated level's share of the time run over %.1f s on 2 "
      "engines, %% (median of %d runs, min..max)\n",
      secs, reps);
  for (int nlevels : {2, 3}) {
    for (int slice : {100, 1000, 10000}) {
      if (g_check && slice != 1000) continue;
      std::vector<std::vector<double>> per(static_cast<std::size_t>(nlevels));
      for (int r = 0; r < reps; r++) {
        std::vector<double> s = shares_run(nlevels, slice, secs);
        for (int l = 0; l < nlevels; l++)
          per[static_cast<std::size_t>(l)].push_back(s[static_cast<std::size_t>(l)]);
      }
      for (int l = 0; l < nlevels; l++) {
        char what[96];
        std::snprintf(what, sizeof what, "%d levels, slice %5d us: level %d (configured %.1f%%)",
                      nlevels, slice, l * 2, 100.0 / nlevels);
        print_row(what, summarise(per[static_cast<std::size_t>(l)]), "% ");
      }
    }
  }
}

}  // namespace

int main(int argc, char **argv) {
  std::string what = argc > 1 ? argv[1] : "";
  int reps = 5;
  for (int i = 1; i < argc; i++) {
    if (!std::strcmp(argv[i], "--check")) {
      g_check = true;
      what = "all";
      reps = 1;
    } else if (!std::strcmp(argv[i], "--reps") && i + 1 < argc) {
      reps = std::max(1, std::atoi(argv[++i]));
    }
  }
  if (what != "latency" && what != "shares" && what != "all") {
    std::fprintf(stderr, "usage: %s latency|shares|all [--reps R] | --check\n", argv[0]);
    return 2;
  }
  if (what == "latency" || what == "all") latency(reps);
  if (what == "shares" || what == "all") shares(reps);
  return 0;
}
