// iter.hpp: the trip count of a loop, the one computation of it for work-sharing loops and
// taskloops. Iterations are numbered 0..n-1 and mapped back to the program's bounds per chunk;
// the count is computed in 128 bits, so no bounds overflow it.
#ifndef MR_GOMP_ITER_HPP
#define MR_GOMP_ITER_HPP

#include <cstdint>

namespace mrg {

// The iterations of `for (i = start; i < end (or > end when incr < 0); i += incr)`.
inline std::uint64_t trip_count(std::int64_t start, std::int64_t end, std::int64_t incr) {
  __int128 s = start, e = end, i = incr;
  if (i > 0) return s < e ? static_cast<std::uint64_t>((e - s + i - 1) / i) : 0;
  if (i < 0) return s > e ? static_cast<std::uint64_t>((s - e - i - 1) / -i) : 0;
  return 0;
}

// The same for unsigned long long loops: counting up, or down (incr is then negative as bits).
inline std::uint64_t trip_count_ull(bool up, std::uint64_t start, std::uint64_t end,
                                    std::uint64_t incr) {
  unsigned __int128 s = start, e = end;
  if (up) return s < e ? static_cast<std::uint64_t>((e - s + incr - 1) / incr) : 0;
  unsigned __int128 step = static_cast<std::uint64_t>(-incr);  // incr is negative as bits
  return s > e ? static_cast<std::uint64_t>((s - e + step - 1) / step) : 0;
}

}  // namespace mrg

#endif
