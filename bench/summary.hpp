// summary.hpp: the median with min..max of a benchmark's repetitions, and its printed row, for
// the benchmarks outside the comparison harness (timers, levels).
#ifndef MR_BENCH_SUMMARY_HPP
#define MR_BENCH_SUMMARY_HPP

#include <algorithm>
#include <cstdio>
#include <vector>

namespace bench {

struct Summary {
  double med, lo, hi;
};

inline Summary summarise(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return {v[v.size() / 2], v.front(), v.back()};
}

inline void print_row(const char *what, const Summary &s, const char *unit) {
  std::printf("  %-52s %10.1f %s  (%.1f..%.1f)\n", what, s.med, unit, s.lo, s.hi);
}

}  // namespace bench

#endif
