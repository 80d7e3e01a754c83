// uts.cpp: the Unbalanced Tree Search benchmark (Olivier et al., LCPC 2006), as specified in
// ../shared/UTS.md: an implicit tree whose shape comes from a splittable SHA-1 stream (nettle's
// SHA-1), so a node's children are known only when it is visited.
//
//   ./bench/uts [tree flags]                     one search with mrengine's C ABI on every PU,
//                                                printing the original's result line
//   ./bench/uts --bench [tree flags] [harness options]   the five implementations, a table
//   ./bench/uts --check                          small trees and the sample trees (make check)
//
// Tree flags, as in the original: -t type (0 binomial, 1 geometric, 2 hybrid), -b b_0, -r root
// seed, -m children of a binomial non-leaf, -q probability of a binomial non-leaf, -d gen_mx,
// -a shape (0 linear, 1 exponential decrease, 2 cyclic, 3 fixed), -f shift depth; and -T NAME
// for a published sample tree (T1, T2, T3, T4, T5, T1L, T3L), whose counts every run must give.
//
// Every implementation visits a node's children by halving their index range: one half is a
// spark (task), the other runs in place, so each child costs one spark and the stack of a
// context grows by O(log children) frames per tree level (T3 is 1572 levels deep).
#include <nettle/sha1.h>

#include <cmath>
#include <cstdint>
#include <cstring>

#include "harness.hpp"

#include <tbb/task_group.h>

namespace {

enum TreeType { kBinomial = 0, kGeometric = 1, kHybrid = 2 };
enum Shape { kLinear = 0, kExpDec = 1, kCyclic = 2, kFixed = 3 };

struct Params {
  int type = kGeometric;
  double b0 = 4.0;
  int seed = 0;
  int m = 4;
  double q = 15.0 / 64.0;
  int gen_mx = 6;
  int shape = kLinear;
  double shift = 0.5;
};
Params P;

struct Counts {
  long nodes = 0, leaves = 0;
  int depth = 0;
  Counts &operator+=(const Counts &o) {
    nodes += o.nodes;
    leaves += o.leaves;
    depth = std::max(depth, o.depth);
    return *this;
  }
  bool operator==(const Counts &o) const {
    return nodes == o.nodes && leaves == o.leaves && depth == o.depth;
  }
};

struct Node {
  int height;
  std::uint8_t state[SHA1_DIGEST_SIZE];
};

void put_be32(std::uint8_t *p, std::uint32_t v) {
  p[0] = static_cast<std::uint8_t>(v >> 24);
  p[1] = static_cast<std::uint8_t>(v >> 16);
  p[2] = static_cast<std::uint8_t>(v >> 8);
  p[3] = static_cast<std::uint8_t>(v);
}

Node root() {
  std::uint8_t in[20] = {0};
  put_be32(in + 16, static_cast<std::uint32_t>(P.seed));
  Node n{0, {}};
  sha1_ctx c;
  sha1_init(&c);
  sha1_update(&c, sizeof in, in);
  sha1_digest(&c, SHA1_DIGEST_SIZE, n.state);
  return n;
}

Node child(const Node &parent, int i) {
  std::uint8_t in[SHA1_DIGEST_SIZE + 4];
  std::memcpy(in, parent.state, SHA1_DIGEST_SIZE);
  put_be32(in + SHA1_DIGEST_SIZE, static_cast<std::uint32_t>(i));
  Node n{parent.height + 1, {}};
  sha1_ctx c;
  sha1_init(&c);
  sha1_update(&c, sizeof in, in);
  sha1_digest(&c, SHA1_DIGEST_SIZE, n.state);
  return n;
}

double probability(const Node &n) {
  std::uint32_t v = (std::uint32_t{n.state[16]} << 24) | (std::uint32_t{n.state[17]} << 16) |
                    (std::uint32_t{n.state[18]} << 8) | std::uint32_t{n.state[19]};
  return static_cast<double>(v & 0x7FFFFFFFu) / 2147483648.0;
}

int children_binomial(const Node &n) {
  if (n.height == 0) return static_cast<int>(std::floor(P.b0));
  return probability(n) < P.q ? P.m : 0;
}

int children_geometric(const Node &n) {
  double b = P.b0, depth = n.height, gmx = P.gen_mx;
  if (n.height > 0) switch (P.shape) {
      case kExpDec:
        b = P.b0 * std::pow(depth, -std::log(P.b0) / std::log(gmx));
        break;
      case kCyclic:
        b = depth > 5 * gmx ? 0 : std::pow(P.b0, std::sin(2.0 * 3.141592653589793 * depth / gmx));
        break;
      case kFixed:
        b = depth < gmx ? P.b0 : 0;
        break;
      default:
        b = P.b0 * (1.0 - depth / gmx);
    }
  double p = 1.0 / (1.0 + b);
  return static_cast<int>(std::floor(std::log(1.0 - probability(n)) / std::log(1.0 - p)));
}

int num_children(const Node &n) {
  bool binomial = P.type == kBinomial ||
                  (P.type == kHybrid && n.height >= P.shift * static_cast<double>(P.gen_mx));
  int k = binomial ? children_binomial(n) : children_geometric(n);
  int cap = binomial && n.height == 0 ? static_cast<int>(std::ceil(P.b0)) : 100;
  return std::clamp(k, 0, cap);
}

// What a node contributes by itself; its children's counts are added by the caller.
Counts self(const Node &n, int k) {
  Counts c;
  c.nodes = 1;
  c.leaves = k == 0 ? 1 : 0;
  c.depth = n.height;
  return c;
}

// ---- sequential ----
Counts seq_visit(const Node &n) {
  int k = num_children(n);
  Counts c = self(n, k);
  for (int i = 0; i < k; i++) c += seq_visit(child(n, i));
  return c;
}

// A node and, through Range (one implementation's split of the child index range), its
// subtree.
using RangeFn = Counts (*)(const Node &parent, int lo, int hi);
template <RangeFn Range>
Counts visit(const Node &n) {
  int k = num_children(n);
  Counts c = self(n, k);
  if (k > 0) c += Range(n, 0, k);
  return c;
}

// ---- mrengine, C ABI ----
Counts mr_c_range(const Node &parent, int lo, int hi);
struct Range {
  const Node *parent;
  int lo, hi;
  Counts out;
};
void mr_c_branch(void *env) {
  Range *r = static_cast<Range *>(env);
  r->out = mr_c_range(*r->parent, r->lo, r->hi);
}
Counts mr_c_range(const Node &parent, int lo, int hi) {
  if (hi - lo == 1) return visit<mr_c_range>(child(parent, lo));
  int mid = lo + (hi - lo) / 2;
  Range first{&parent, lo, mid, {}};
  MR_SyncTerm st;
  MR_sync_term_init(&st, 2);
  MR_fork_new_child(&st, mr_c_branch, &first);
  Counts c = mr_c_range(parent, mid, hi);
  MR_join_and_continue(&st);
  return c += first.out;
}

// ---- mrengine, C++ API ----
Counts mr_cxx_range(const Node &parent, int lo, int hi) {
  if (hi - lo == 1) return visit<mr_cxx_range>(child(parent, lo));
  int mid = lo + (hi - lo) / 2;
  Counts a, b;
  mr::parallel_invoke([&] { a = mr_cxx_range(parent, lo, mid); },
                      [&] { b = mr_cxx_range(parent, mid, hi); });
  return a += b;
}

// ---- oneTBB ----
Counts tbb_range(const Node &parent, int lo, int hi) {
  if (hi - lo == 1) return visit<tbb_range>(child(parent, lo));
  int mid = lo + (hi - lo) / 2;
  Counts a;
  tbb::task_group g;
  g.run([&] { a = tbb_range(parent, lo, mid); });
  Counts b = tbb_range(parent, mid, hi);
  g.wait();
  return a += b;
}

// ---- OpenMP ----
Counts omp_range(const Node &parent, int lo, int hi) {
  if (hi - lo == 1) return visit<omp_range>(child(parent, lo));
  int mid = lo + (hi - lo) / 2;
  Counts a;
  const Node *pp = &parent;
#pragma omp task shared(a) firstprivate(pp, lo, mid)
  a = omp_range(*pp, lo, mid);
  Counts b = omp_range(parent, mid, hi);
#pragma omp taskwait
  return a += b;
}

Counts search(int impl) {
  Node r = root();
  switch (impl) {
    case bench::kMrC:
      return visit<mr_c_range>(r);
    case bench::kMrCxx:
      return visit<mr_cxx_range>(r);
    case bench::kTbb:
      return visit<tbb_range>(r);
    case bench::kOmp:
      return visit<omp_range>(r);
    default:
      return seq_visit(r);
  }
}

// The published sample trees (../shared/UTS.md).
struct Sample {
  const char *name, *flags;
  Counts counts;
};
const Sample kSamples[] = {
    {"T1", "-t 1 -a 3 -d 10 -b 4 -r 19", {4130071, 3305118, 10}},
    {"T5", "-t 1 -a 0 -d 20 -b 4 -r 34", {4147582, 2181318, 20}},
    {"T2", "-t 1 -a 2 -d 16 -b 6 -r 502", {4117769, 2342762, 81}},
    {"T3", "-t 0 -b 2000 -q 0.124875 -m 8 -r 42", {4112897, 3599034, 1572}},
    {"T4", "-t 2 -a 0 -d 16 -b 6 -q 0.234375 -m 4 -r 1", {4132453, 3108986, 134}},
    {"T1L", "-t 1 -a 3 -d 13 -b 4 -r 29", {102181082, 81746377, 13}},
    {"T3L", "-t 0 -b 2000 -q 0.200014 -m 5 -r 7", {111345631, 89076904, 17844}},
};

std::vector<std::string> words(const char *s) {
  std::vector<std::string> out;
  std::string w;
  for (const char *p = s;; p++) {
    if (*p == ' ' || *p == '\0') {
      if (!w.empty()) out.push_back(w);
      w.clear();
      if (*p == '\0') return out;
    } else {
      w += *p;
    }
  }
}

double parse_double(const char *prog, const std::string &s, double lo, double hi,
                    const char *what) {
  char *end = nullptr;
  double v = std::strtod(s.c_str(), &end);
  if (s.empty() || *end != '\0' || !(v >= lo && v <= hi))
    bench::usage_error(prog, std::string("bad ") + what + " '" + s + "'");
  return v;
}

// Tree flags into P; returns the sample tree named by -T, or nullptr.
const Sample *parse_tree(const char *prog, const std::vector<std::string> &args) {
  const Sample *sample = nullptr;
  for (std::size_t i = 0; i < args.size(); i++) {
    const std::string &f = args[i];
    if (i + 1 >= args.size() || f.size() != 2 || f[0] != '-')
      bench::usage_error(prog,
                         "unknown argument '" + f + "' (tree flags: -t -b -r -m -q -d -a -f -T)");
    const std::string &v = args[++i];
    switch (f[1]) {
      case 't':
        P.type = bench::parse_int(prog, v, 0, 2, "-t");
        break;
      case 'b':
        P.b0 = parse_double(prog, v, 0, 1e9, "-b");
        break;
      case 'r':
        P.seed = bench::parse_int(prog, v, 0, 2147483647, "-r");
        break;
      case 'm':
        P.m = bench::parse_int(prog, v, 0, 100, "-m");
        break;
      case 'q':
        P.q = parse_double(prog, v, 0, 1, "-q");
        break;
      case 'd':
        P.gen_mx = bench::parse_int(prog, v, 1, 1000000, "-d");
        break;
      case 'a':
        P.shape = bench::parse_int(prog, v, 0, 3, "-a");
        break;
      case 'f':
        P.shift = parse_double(prog, v, 0, 1, "-f");
        break;
      case 'T': {
        sample = nullptr;
        for (const Sample &s : kSamples)
          if (v == s.name) sample = &s;
        if (sample == nullptr) bench::usage_error(prog, "unknown sample tree '" + v + "'");
        P = Params{};
        (void)parse_tree(prog, words(sample->flags));
        break;
      }
      default:
        bench::usage_error(prog,
                           "unknown flag '" + f + "' (tree flags: -t -b -r -m -q -d -a -f -T)");
    }
  }
  return sample;
}

void print_line(const Counts &c) {
  std::printf("Tree size = %ld, tree depth = %d, num leaves = %ld\n", c.nodes, c.depth, c.leaves);
}

// Every implementation on every worker count must give `expect` for the tree in P.
bool check_tree(const bench::Options &o, const std::string &name, const Counts &expect) {
  bench::Report rep("uts", name, o);
  rep.run([&](int impl) { return search(impl) == expect; });
  return rep.ok();
}

}  // namespace

int main(int argc, char **argv) {
  bench::Options o = bench::parse(argc, argv);
  bool bench_mode = false;
  std::vector<std::string> tree;
  for (const std::string &a : o.rest) {
    if (a == "--bench")
      bench_mode = true;
    else
      tree.push_back(a);
  }
  if (o.check) {
    // Small trees of every type and shape against the sequential search; then T3 (the deep
    // one, where work moves most) against its published counts.
    static const char *const kSmall[] = {
        "-t 1 -a 3 -d 6 -b 4 -r 19",       "-t 1 -a 0 -d 10 -b 4 -r 34",
        "-t 1 -a 2 -d 6 -b 6 -r 502",      "-t 1 -a 1 -d 6 -b 4 -r 3",
        "-t 0 -b 200 -q 0.124 -m 8 -r 42", "-t 2 -a 0 -d 8 -b 5 -q 0.2 -m 4 -r 1"};
    bool ok = true;
    for (const char *flags : kSmall) {
      P = Params{};
      (void)parse_tree(argv[0], words(flags));
      ok = check_tree(o, flags, search(bench::kSeq)) && ok;
    }
    const Sample *t3 = parse_tree(argv[0], {"-T", "T3"});
    ok = check_tree(o, "T3", t3->counts) && ok;
    std::printf("uts: every implementation found the counts of 6 small trees and of T3: %s\n",
                ok ? "yes" : "NO");
    return ok ? 0 : 1;
  }
  const Sample *sample = parse_tree(argv[0], tree);
  std::string name = sample != nullptr ? sample->name : "custom";
  if (!bench_mode) {
    Counts c;
    int engines = 0;  // the runtime's own count: MRENGINE_OPTIONS (-P) may override the request
    double t0 = bench::now_s();
    bench::with_workers(bench::kMrC, bench::machine_pus(), [&] {
      engines = MR_num_engines();
      c = search(bench::kMrC);
    });
    double t = bench::now_s() - t0;
    print_line(c);
    std::printf("Time = %.3f s on %d engines (including start-up); %.0f nodes/s\n", t, engines,
                static_cast<double>(c.nodes) / t);
    if (sample != nullptr && !(c == sample->counts)) {
      std::fprintf(stderr, "uts: %s has %ld nodes, depth %d, %ld leaves\n", sample->name,
                   sample->counts.nodes, sample->counts.depth, sample->counts.leaves);
      return 1;
    }
    return 0;
  }
  Counts expect = sample != nullptr ? sample->counts : search(bench::kSeq);
  print_line(expect);
  bench::Report rep("uts", name, o);
  rep.run([&](int impl) { return search(impl) == expect; });
  rep.print(1.0, "s");
  return rep.ok() ? 0 : 1;
}
