// mrengine.hpp: the C++ API of mrengine, a thin layer over the C ABI in mrengine.h.
//
//   mr::runtime rt;                        // MR_init; the destructor calls MR_shutdown
//   mr::parallel_invoke([&]{ a = f(); },   // run the callables as one parallel conjunction:
//                       [&]{ b = g(); });  // the first here, the others as sparks
//
// An exception thrown by a branch of parallel_invoke is carried to the caller and rethrown there
// after every branch has finished (the first one, in argument order, if several threw); no
// engine dies and nothing crosses the C ABI as an exception.
#ifndef MRENGINE_HPP
#define MRENGINE_HPP

#include <exception>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "mrengine.h"

namespace mr {

// The error MR_init (or another call) reported, as an exception.
class error : public std::runtime_error {
 public:
  error(int code, const std::string &what) : std::runtime_error(what), code_(code) {}
  int code() const noexcept { return code_; }

 private:
  int code_;
};

// Starts the runtime in the constructor (the calling thread becomes engine 0) and shuts it down
// in the destructor. Throws mr::error if MR_init fails.
class runtime {
 public:
  runtime() : runtime(nullptr) {}
  explicit runtime(const MR_Config *cfg) {
    int rc = MR_init(cfg);
    if (rc != 0) {
      std::string msg = MR_init_error_message();
      throw error(rc, msg.empty() ? std::string(MR_strerror(rc)) : msg);
    }
  }
  ~runtime() { (void)MR_shutdown(); }
  runtime(const runtime &) = delete;
  runtime &operator=(const runtime &) = delete;

  static int engines() noexcept { return MR_num_engines(); }
};

// The id of the engine running the caller, or -1.
inline int engine_id() noexcept { return MR_engine_id(); }
inline int num_engines() noexcept { return MR_num_engines(); }

// The OS index of the PU engine e is bound to, or -1 if it is not pinned. Throws mr::error
// (MR_ENOTINIT, MR_ERANGE).
inline int engine_cpu(int e) {
  int cpu = -1;
  int rc = MR_engine_cpu(e, &cpu);
  if (rc != 0) throw error(rc, MR_strerror(rc));
  return cpu;
}

// Every engine's counters, indexed by engine id (empty when the runtime is not running).
// Exact at a quiescent point.
inline std::vector<MR_EngineStats> stats() {
  std::vector<MR_EngineStats> out;
  int n = MR_num_engines();
  out.reserve(static_cast<std::size_t>(n));
  for (int e = 0; e < n; e++) {
    MR_EngineStats s{};
    s.size = sizeof s;
    if (MR_stats_get(e, &s) != 0) break;
    out.push_back(s);
  }
  return out;
}

namespace detail {

template <class F>
struct branch {
  F *fn;
  std::exception_ptr error;
  static void run(void *self) noexcept {
    auto *b = static_cast<branch *>(self);
    try {
      (*b->fn)();
    } catch (...) {
      b->error = std::current_exception();
    }
  }
};

}  // namespace detail

// Run every callable (each invocable with no arguments) as one parallel conjunction: the first
// on the calling context, the others as sparks that idle engines may steal. Returns when all have
// finished; rethrows the first exception (in argument order) any of them threw. Context code
// only (the primordial context, a spawned context, or a branch).
template <class F, class... Fs>
void parallel_invoke(F &&first, Fs &&...rest) {
  MR_SyncTerm st;
  MR_sync_term_init(&st, static_cast<unsigned>(1 + sizeof...(Fs)));
  std::tuple<detail::branch<std::remove_reference_t<Fs>>...> branches{
      detail::branch<std::remove_reference_t<Fs>>{&rest, nullptr}...};
  // Fork the others in argument order; a thief takes the oldest (the second callable) first.
  std::apply(
      [&](auto &...b) {
        auto fork_one = [&](auto &br) {
          MR_fork_new_child(&st, &std::remove_reference_t<decltype(br)>::run, &br);
        };
        (void)fork_one;
        int dummy[] = {0, (fork_one(b), 0)...};
        (void)dummy;
      },
      branches);
  std::exception_ptr first_error;
  try {
    std::forward<F>(first)();
  } catch (...) {
    first_error = std::current_exception();
  }
  MR_join_and_continue(&st);
  if (first_error) std::rethrow_exception(first_error);
  std::apply(
      [](auto &...b) {
        std::exception_ptr e;
        ((e = e ? e : b.error), ...);
        if (e) std::rethrow_exception(e);
      },
      branches);
}

}  // namespace mr

#endif
