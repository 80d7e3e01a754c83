// task.hpp: the unit of work that a context runs.
#ifndef MR_ENGINE_TASK_HPP
#define MR_ENGINE_TASK_HPP

#include "mrengine.h"

namespace mr::engine {

struct Join;

// A spark or a spawned context's body: fn(env), then one arrival at join. Three words, copied by
// value. Must be executed exactly once.
struct Task {
  MR_TaskFn fn;
  void *env;
  Join *join;
};

}  // namespace mr::engine

#endif
