// yield.hpp: MR_yield, a running context giving its engine to other work.
#ifndef MR_ENGINE_YIELD_HPP
#define MR_ENGINE_YIELD_HPP

namespace mr::engine {

// Queue the calling context in its followup channel (or its engine's bound queue) and let the
// engine run what its policy picks; return when the context runs again. Returns 0, or
// MR_ENOTENGINE if the caller is not a context on an engine. Any thread.
int yield_now();

}  // namespace mr::engine

#endif
