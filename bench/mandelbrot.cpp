// mandelbrot.cpp: escape-time iteration counts of an N x N image of the Mandelbrot set, rows as
// the iterations of a parallel loop (loop control in mrengine, parallel_for in oneTBB, a
// taskloop in OpenMP). The work per row varies across the image, so the loop must balance.
//
//   ./bench/mandelbrot N [--max-iter M] [harness options]   a table (bench/harness.hpp)
//   ./bench/mandelbrot --check                                 N = 64 everywhere (make check)
//
// The answer checked is the total of every pixel's iteration count, which must equal the
// sequential loop's: each pixel is computed by the same code in every implementation.
#include "harness.hpp"

namespace {

int g_max_iter = 1000;
constexpr long kRowsPerChunk = 1;

// Iterations of z = z^2 + c before |z| > 2, at most g_max_iter, for pixel (x, y) of an n x n
// image of [-2, 1] x [-1.5, 1.5].
int escape(long x, long y, long n) {
  double cr = -2.0 + 3.0 * static_cast<double>(x) / static_cast<double>(n);
  double ci = -1.5 + 3.0 * static_cast<double>(y) / static_cast<double>(n);
  double zr = 0, zi = 0;
  int i = 0;
  while (i < g_max_iter && zr * zr + zi * zi <= 4.0) {
    double t = zr * zr - zi * zi + cr;
    zi = 2.0 * zr * zi + ci;
    zr = t;
    i++;
  }
  return i;
}

long image(int impl, long n, std::vector<long> &row_sum) {
  bench::parallel_loop(impl, n, kRowsPerChunk, [&](long lo, long hi) {
    for (long y = lo; y < hi; y++) {
      long s = 0;
      for (long x = 0; x < n; x++) s += escape(x, y, n);
      row_sum[static_cast<std::size_t>(y)] = s;
    }
  });
  long total = 0;
  for (long s : row_sum) total += s;
  return total;
}

}  // namespace

int main(int argc, char **argv) {
  bench::Options o = bench::parse(argc, argv);
  long n = 0;
  for (std::size_t i = 0; i < o.rest.size(); i++) {
    if (o.rest[i] == "--max-iter" && i + 1 < o.rest.size())
      g_max_iter = bench::parse_int(argv[0], o.rest[++i], 1, 1 << 30, "--max-iter");
    else if (n == 0 && !o.check)
      n = bench::parse_int(argv[0], o.rest[i], 1, 1 << 16, "N");
    else
      bench::usage_error(argv[0], "unexpected argument '" + o.rest[i] + "'");
  }
  if (o.check) n = 64;
  if (n == 0)
    bench::usage_error(
        argv[0],
        "usage: mandelbrot N [--max-iter M] [--runs R] [--workers L] [--impls L] [--csv F]");
  std::vector<long> rows(static_cast<std::size_t>(n));
  long expect = image(bench::kSeq, n, rows);
  bench::Report rep("mandelbrot", std::to_string(n), o);
  rep.run([&](int impl) {
    std::fill(rows.begin(), rows.end(), -1);
    return image(impl, n, rows) == expect;
  });
  if (o.check) {
    std::printf("mandelbrot: every implementation computed the %ld x %ld image: %s\n", n, n,
                rep.ok() ? "yes" : "NO");
  } else {
    rep.print();
    std::printf("  %ld x %ld pixels, at most %d iterations each, %ld in all\n", n, n, g_max_iter,
                expect);
  }
  return rep.ok() ? 0 : 1;
}
