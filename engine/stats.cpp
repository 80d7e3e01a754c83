// stats.cpp: reading the per-engine counters, and the --stats table (stats.hpp). Both are made
// from MR_ENGINE_STATS_MAP, so a counter added there appears in each.
#include "config.h"

#include "stats.hpp"

#include <cstring>
#include <string>
#include <vector>

#include "engine.hpp"

namespace mr::engine {

namespace {

// The column heads of the wake-up counters, after their prefix: one per notification kind.
constexpr const char *kKindColumns[kNumActions] = {
#define MR_KIND_COLUMN_(name, value, column) column,
    MR_NOTIFY_MAP(MR_KIND_COLUMN_)
#undef MR_KIND_COLUMN_
};

// The table's column heads, in the order of MR_ENGINE_STATS_MAP.
std::vector<std::string> column_names() {
  std::vector<std::string> names;
#define MR_NAME_(field, column) names.emplace_back(column);
#define MR_NAMES_(field, column) \
  for (const char *k : kKindColumns) names.push_back(std::string(column) + k);
  MR_ENGINE_STATS_MAP(MR_NAME_, MR_NAMES_)
#undef MR_NAME_
#undef MR_NAMES_
  return names;
}

// Engine i's counters as one row, in the same order.
std::vector<std::uint64_t> row_of(int i) {
  const Counters &c = g_rt->engines[i]->stats;
  std::vector<std::uint64_t> row;
  // relaxed: each counter has one writer; the figures are exact at a quiescent point.
#define MR_VALUE_(field, column) row.push_back(c.field.load(std::memory_order_relaxed));
#define MR_VALUES_(field, column) \
  for (const auto &x : c.field) row.push_back(x.load(std::memory_order_relaxed));
  MR_ENGINE_STATS_MAP(MR_VALUE_, MR_VALUES_)
#undef MR_VALUE_
#undef MR_VALUES_
  return row;
}

}  // namespace

void stats_get(int i, MR_EngineStats *out) {
  const Counters &c = g_rt->engines[i]->stats;
  MR_EngineStats s{};
  s.size = out->size;
  // relaxed: as in row_of.
#define MR_COPY_(field, column) s.field = c.field.load(std::memory_order_relaxed);
#define MR_COPY_KINDS_(field, column) \
  for (int k = 0; k < kNumActions; k++) s.field[k] = c.field[k].load(std::memory_order_relaxed);
  MR_ENGINE_STATS_MAP(MR_COPY_, MR_COPY_KINDS_)
#undef MR_COPY_
#undef MR_COPY_KINDS_
  std::size_t n = out->size < sizeof s ? out->size : sizeof s;
  std::memcpy(out, &s, n);
}

void channel_stats_get(int ch, MR_ChannelStats *out) {
  std::uint64_t runs = 0, ns = 0;
  for (int i = 0; i < g_rt->n; i++) {
    // relaxed: owner-written counters, as in row_of.
    runs += g_rt->engines[i]->channel_runs[ch].load(std::memory_order_relaxed);
    ns += g_rt->engines[i]->channel_ns[ch].load(std::memory_order_relaxed);
  }
  const Channel &c = g_rt->channels[ch];
  out->contexts_run = runs;
  out->ns_run = ns;
  // relaxed: counts, exact once the engines stopped.
  out->contexts_dropped = c.contexts_dropped.load(std::memory_order_relaxed);
  out->sparks_dropped = c.sparks_dropped.load(std::memory_order_relaxed);
}

namespace {

// The per-channel rows of the --stats table.
void print_channels(FILE *out) {
  std::fprintf(out, "%-7s %5s %8s %8s %9s %12s %12s %8s %8s\n", "channel", "level", "kind", "close",
               "followup", "run", "ms", "dropped", "sparks");
  for (int ch = 0; ch < g_rt->channels.count(); ch++) {
    const Channel &c = g_rt->channels[ch];
    MR_ChannelStats s{};
    s.size = sizeof s;
    channel_stats_get(ch, &s);
    std::fprintf(out, "%-7d %5d %8s %8s %9d %12llu %12.3f %8llu %8llu\n", ch, c.level,
                 c.kind == ChannelKind::FIFO ? "fifo" : "deadline",
                 c.close == Close::COMPLETE ? "complete" : "drop", c.followup,
                 static_cast<unsigned long long>(s.contexts_run),
                 static_cast<double>(s.ns_run) / 1e6,
                 static_cast<unsigned long long>(s.contexts_dropped),
                 static_cast<unsigned long long>(s.sparks_dropped));
  }
}

}  // namespace

void print_stats(FILE *out) {
  // Rows: each engine, then the totals. Columns: the counters, each as wide as its widest figure.
  const std::vector<std::string> names = column_names();
  const std::size_t cols = names.size();
  const std::size_t n = static_cast<std::size_t>(g_rt->n);
  std::vector<std::vector<std::uint64_t>> rows;
  std::vector<std::uint64_t> total(cols, 0);
  for (std::size_t i = 0; i < n; i++) {
    rows.push_back(row_of(static_cast<int>(i)));
    for (std::size_t c = 0; c < cols; c++) total[c] += rows.back()[c];
  }
  rows.push_back(total);
  std::vector<int> width(cols);
  for (std::size_t c = 0; c < cols; c++) {
    width[c] = static_cast<int>(names[c].size());
    int digits = std::snprintf(nullptr, 0, "%llu", static_cast<unsigned long long>(total[c]));
    if (digits > width[c]) width[c] = digits;
  }
  std::fprintf(out, "mrengine statistics, %d engine(s)\n%-6s %4s", g_rt->n, "engine", "cpu");
  for (std::size_t c = 0; c < cols; c++) std::fprintf(out, " %*s", width[c], names[c].c_str());
  std::fprintf(out, "\n");
  for (std::size_t i = 0; i <= n; i++) {
    if (i < n)
      std::fprintf(out, "%-6d %4d", static_cast<int>(i), engine_cpu(static_cast<int>(i)));
    else
      std::fprintf(out, "%-6s %4s", "total", "");
    for (std::size_t c = 0; c < cols; c++)
      std::fprintf(out, " %*llu", width[c], static_cast<unsigned long long>(rows[i][c]));
    std::fprintf(out, "\n");
  }
  print_channels(out);
  std::fflush(out);
}

}  // namespace mr::engine
