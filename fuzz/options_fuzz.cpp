// options_fuzz.cpp: a libFuzzer target for the options parser, the runtime's only text input
// (runtime/options.cpp). `make fuzz` builds it with clang (-fsanitize=fuzzer,address,undefined)
// and runs a bounded campaign from fuzz/corpus/.
//
// For every input: parse_options either accepts it, leaving every parameter in its documented
// range (doc/options.md), or returns MR_EOPTION with a one-line message that starts with the
// source's name, is bounded in length and holds only printable characters (input bytes are
// quoted and escaped). Anything else aborts, and libFuzzer saves the input.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "engine/topology.hpp"
#include "runtime/options.hpp"

// make_params (not fuzzed, but in the same file) needs these; the parser never calls them.
int mr::engine::topo::allowed_pus() { std::abort(); }
extern "C" void MR_config_default(MR_Config *) { std::abort(); }

namespace {

void check(bool ok, const char *what, const std::string &text) {
  if (ok) return;
  std::fprintf(stderr, "options_fuzz: %s for input '%s'\n", what, text.c_str());
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size) {
  std::string text(reinterpret_cast<const char *>(data), size);
  text = text.c_str();  // the C ABI passes a NUL-terminated string: cut at the first NUL
  mr::engine::Params p;
  std::string err;
  int rc = mr::runtime::parse_options(text.c_str(), "fuzz", &p, &err);
  if (rc == 0) {
    check(err.empty(), "a message with success", text);
    check(p.engines >= 1 && p.engines <= 1024, "engines out of range", text);
    check(p.spin_rounds >= 0 && p.spin_rounds <= 1000000, "spin rounds out of range", text);
    check(p.stack_size >= 16 * 1024 && p.stack_size <= 1024ull * 1024 * 1024, "stack size", text);
    check(p.small_stack_size >= 16 * 1024 && p.small_stack_size <= 1024ull * 1024 * 1024,
          "small stack size", text);
    check(p.poll_interval_us >= 1 && p.poll_interval_us <= 10000000, "poll interval", text);
    check(p.lc_contexts_per_engine >= 1 && p.lc_contexts_per_engine <= 1024, "lc contexts", text);
    check(p.granularity_factor <= 1000000, "granularity factor", text);
    check(p.max_backup_threads <= 4096, "backup threads", text);
    check(p.pinning == mr::engine::Pinning::NONE || p.pinning == mr::engine::Pinning::CORES ||
              p.pinning == mr::engine::Pinning::PUS,
          "pinning", text);
    return 0;
  }
  check(rc == MR_EOPTION, "an error other than MR_EOPTION", text);
  check(err.compare(0, 6, "fuzz: ") == 0, "a message that does not name its source", text);
  check(err.size() < 400, "an unbounded message", text);
  for (char c : err)
    check(static_cast<unsigned char>(c) >= 0x20 && static_cast<unsigned char>(c) < 0x7f,
          "an unprintable byte in the message", text);
  return 0;
}
