// spectral.cpp: the spectral norm of the infinite matrix A(i, j) = 1 / ((i + j)(i + j + 1) / 2
// + i + 1) truncated to N x N, by 10 rounds of the power method on A^T A. Each of the 40
// matrix-vector products is a parallel loop over chunks of rows (loop control in mrengine,
// parallel_for in oneTBB, a taskloop in OpenMP): 40 joins, each after an even loop.
//
//   ./bench/spectral N [harness options]     a table (bench/harness.hpp)
//   ./bench/spectral --check                 N = 100 everywhere (make check)
//
// Every row is summed in the same order in every implementation, so the result must equal the
// sequential one exactly; for N = 100 that is the published 1.274219991 (to 9 places).
#include <cmath>

#include "harness.hpp"

namespace {

constexpr long kRowsPerChunk = 16;

double a(long i, long j) { return 1.0 / static_cast<double>((i + j) * (i + j + 1) / 2 + i + 1); }

// out = A x (transpose: out = A^T x).
void times(int impl, const std::vector<double> &x, std::vector<double> &out, bool transpose) {
  long n = static_cast<long>(x.size());
  bench::parallel_loop(impl, n, kRowsPerChunk, [&](long lo, long hi) {
    for (long i = lo; i < hi; i++) {
      double s = 0;
      for (long j = 0; j < n; j++)
        s += (transpose ? a(j, i) : a(i, j)) * x[static_cast<std::size_t>(j)];
      out[static_cast<std::size_t>(i)] = s;
    }
  });
}

double spectral_norm(int impl, long n) {
  std::vector<double> u(static_cast<std::size_t>(n), 1.0), v(u.size()), t(u.size());
  for (int k = 0; k < 10; k++) {
    times(impl, u, t, false);
    times(impl, t, v, true);
    times(impl, v, t, false);
    times(impl, t, u, true);
  }
  double vbv = 0, vv = 0;
  for (std::size_t i = 0; i < u.size(); i++) {
    vbv += u[i] * v[i];
    vv += v[i] * v[i];
  }
  return std::sqrt(vbv / vv);
}

}  // namespace

int main(int argc, char **argv) {
  bench::Options o = bench::parse(argc, argv);
  long n = o.check ? 100 : 0;
  if (o.rest.size() == 1 && !o.check) n = bench::parse_int(argv[0], o.rest[0], 1, 1 << 20, "N");
  if (n == 0 || o.rest.size() > (o.check ? 0u : 1u))
    bench::usage_error(argv[0], "usage: spectral N [--runs R] [--workers L] [--impls L] [--csv F]");
  double expect = spectral_norm(bench::kSeq, n);
  if (n == 100 && std::fabs(expect - 1.274219991) > 5e-10) {
    std::fprintf(stderr, "spectral: N = 100 gave %.9f, not 1.274219991\n", expect);
    return 1;
  }
  bench::Report rep("spectral-norm", std::to_string(n), o);
  rep.run([&](int impl) { return spectral_norm(impl, n) == expect; });
  if (o.check) {
    std::printf("spectral: every implementation computed %.9f for N = 100: %s\n", expect,
                rep.ok() ? "yes" : "NO");
  } else {
    rep.print();
    std::printf("  spectral norm %.9f\n", expect);
  }
  return rep.ok() ? 0 : 1;
}
