// params.hpp: what the scheduler needs from the options (runtime/options.cpp parses and
// validates them; doc/options.md documents each).
#ifndef MR_ENGINE_PARAMS_HPP
#define MR_ENGINE_PARAMS_HPP

#include <cstddef>
#include <string>

#include "mrengine_gc.h"
#include "park.hpp"

namespace mr::engine {

// --thread-pinning: the order is the order of the option's choices.
enum class Pinning { NONE, CORES, PUS };

// --schedule: which level an engine serves next (policy.hpp); the order of the option's choices.
enum class Policy { HIGHEST_FIRST, ROUND_ROBIN };

struct Params {
  int engines = 1;
  int spin_rounds = 32;
  std::size_t stack_size = 1024 * 1024;
  std::size_t small_stack_size = 256 * 1024;
  unsigned poll_interval_us = 1000;
  Pinning pinning = Pinning::NONE;
  unsigned lc_contexts_per_engine = 4;  // loop control: default worker slots per engine
  unsigned granularity_factor =
      8;  // MR_par_cond_local_wsdeque_length: spark below factor x engines
  unsigned max_backup_threads = 64;  // blocking regions: threads that run blocked contexts
  bool lazy_engines = false;         // start engines 1..N-1 only when work first needs them
  bool print_stats = false;          // --stats: a table per engine on stderr at shutdown
  bool quiet = false;                // MR_CONFIG_QUIET: no warnings on stderr
  std::string trace_path;            // --trace: the trace file (.eventlog or .json), or empty
  Park park;                         // MR_Config.park/unpark/park_ctx: how engines sleep (park.hpp)
  bool fd_waits = false;             // MR_CONFIG_FD_WAITS: engines park in epoll_wait (io_wait.hpp)
  Policy policy = Policy::HIGHEST_FIRST;  // --schedule
  unsigned level_slice_us = 1000;         // --level-slice-us: a level's turn under round-robin
  MR_GcHooks gc{};  // MR_Config.gc, copied: a collector's hooks (gc.hpp), all NULL for none
};

}  // namespace mr::engine

#endif
