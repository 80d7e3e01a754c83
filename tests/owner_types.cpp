// owner_types.cpp: an engine's owner-only fields are out of reach of other threads' code, by
// type (engine/engine.hpp): Runtime::engines hands out the Shared part, which lacks them, and
// nothing turns a Shared into the whole Engine implicitly. All checks are at compile time; the
// file is built into check_table, whose run it does not change.

#include <type_traits>

#include "engine/engine.hpp"

using namespace mr::engine;

// Every owner-only field of Engine: each must be a field of Engine and not of Shared (the
// first half keeps the second from passing because of a misspelt name).
// clang-format off
#define MR_OWNER_ONLY_FIELDS(X) \
  X(current)                    \
  X(next_ctx)                   \
  X(handoffs)                   \
  X(search)                     \
  X(rr_level)                   \
  X(rr_since)                   \
  X(last_channel)               \
  X(run_channel)                \
  X(run_since)                  \
  X(sched)                      \
  X(sched_san)                  \
  X(sched_stack)                \
  X(free_small)                 \
  X(free_regular)               \
  X(n_free_small)               \
  X(n_free_regular)             \
  X(start_asleep)               \
  X(planned_pu)                 \
  X(altstack)
// clang-format on

#define MR_OWNER_ONLY_(field)                                                              \
  template <class T>                                                                       \
  concept has_##field = requires(T * t) {                                                  \
    t->field;                                                                              \
  };                                                                                       \
  static_assert(has_##field<Engine> && !has_##field<Shared> && !has_##field<const Shared>, \
                "Engine::" #field " is not owner-only: another thread reaches it");
MR_OWNER_ONLY_FIELDS(MR_OWNER_ONLY_)

// Other threads get engines only as their shared part ...
static_assert(std::is_same_v<decltype(Runtime::engines), Shared **>);
// ... which becomes the whole engine only by an explicit unowned() (lifecycle.cpp, cache.cpp).
static_assert(!std::is_convertible_v<Shared *, Engine *>);
static_assert(std::is_convertible_v<Engine *, Shared *>);
// The calling thread's own engine is the whole one.
static_assert(std::is_same_v<decltype(t_engine), Engine *>);
static_assert(std::is_same_v<decltype(this_engine()), Engine *>);
// The owner-only part starts on a cache line of its own.
static_assert(alignof(Engine) >= 64 && sizeof(Shared) % 64 == 0);
