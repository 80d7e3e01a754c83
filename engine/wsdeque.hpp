// wsdeque.hpp: the per-engine work-stealing deque of sparks (Chase–Lev).
//
// The orderings are those proved correct for C11 by Lê, Pop, Cohen and Zappa Nardelli,
// "Correct and Efficient Work-Stealing for Weak Memory Models" (PPoPP 2013), figure 1. The owner
// pushes and pops at the bottom; thieves steal at the top. The array grows by doubling; a retired
// array is kept until the deque is destroyed, because a thief that read the old array pointer may
// still read from it (the retired arrays together are smaller than the live one, so this costs at
// most the live size again). Elements are stored word by word in relaxed atomics so that a thief
// reading a slot the owner is overwriting is a benign, defined race whose value the thief's CAS
// on `top` then discards.
#ifndef MR_ENGINE_WSDEQUE_HPP
#define MR_ENGINE_WSDEQUE_HPP

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "fatal.hpp"
#include "mutant.hpp"
#include "task.hpp"

namespace mr::engine {

class WsDeque {
 public:
  enum class Steal { TAKEN, EMPTY, ABORT };

  explicit WsDeque(std::size_t log_capacity = 8);
  ~WsDeque();
  WsDeque(const WsDeque &) = delete;
  WsDeque &operator=(const WsDeque &) = delete;

  // Called only by the owning engine.
  void push(const Task &t) {
    std::int64_t b = bottom_.load(std::memory_order_relaxed);  // owner's own field
    // acquire: pairs with a thief's CAS.
    std::int64_t t0 = top_.load(MR_WEAK_MUTANT(PUSH_TOP, std::memory_order_acquire));
    Array *a = array_.load(std::memory_order_relaxed);  // only the owner stores it
    MR_DASSERT(b >= t0, "deque: top passed bottom outside a pop");
    if (__builtin_expect(b - t0 > static_cast<std::int64_t>(a->mask), 0)) a = grow(a, t0, b);
    a->put(b, t);
    // store-release: the slot's words (and whatever the pusher wrote before, such as the
    // spark's environment) are visible to a thief that reads the new bottom with acquire (the
    // acquire load of bottom_ in steal()). A plain store on x86; and unlike a release fence
    // followed by a relaxed store, ThreadSanitizer sees the pairing.
    bottom_.store(b + 1, MR_WEAK_MUTANT(PUSH_BOTTOM, std::memory_order_release));
  }

  // Called only by the owning engine. Returns false if the deque was empty or the last spark
  // was taken by a thief.
  bool pop(Task &out) {
    std::int64_t b = bottom_.load(std::memory_order_relaxed) - 1;  // owner's own field
    Array *a = array_.load(std::memory_order_relaxed);             // only the owner stores it
    // store-release: a thief that reads this bottom with acquire sees the pushes of the slots
    // below it (C++20's release sequences no longer hold a thread's later plain stores, so the
    // pushes' own releases do not reach such a thief: proof D1). A plain store on x86.
    bottom_.store(b, MR_WEAK_MUTANT(POP_BOTTOM, std::memory_order_release));
    // seq_cst fence: proof D1 in doc/design.md (the owner's bottom store and a thief's top load
    // must not both miss each other for the last element).
    std::atomic_thread_fence(MR_WEAK_MUTANT(POP_FENCE, std::memory_order_seq_cst));
    std::int64_t t = top_.load(std::memory_order_relaxed);
    MR_DASSERT(t <= b + 1, "deque: top more than one past the popped bottom");
    if (t > b) {  // empty
      bottom_.store(b + 1, std::memory_order_relaxed);
      return false;
    }
    out = a->get(b);
    if (t == b) {  // the last element: race the thieves for it
      // CAS seq_cst on success (part of proof D1), relaxed on failure.
      bool won = top_.compare_exchange_strong(
          t, t + 1, MR_WEAK_MUTANT(POP_CAS, std::memory_order_seq_cst), std::memory_order_relaxed);
      bottom_.store(b + 1, std::memory_order_relaxed);
      return won;
    }
    return true;
  }

  // Called only by the owning engine: the join of the newest element (the one pop would take),
  // or nullptr if the deque looks empty. Only the owner writes slots, so the slot can be read
  // before it is popped; a thief may still take it first, so the answer is a hint.
  Join *peek_join() const {
    std::int64_t b = bottom_.load(std::memory_order_relaxed) - 1;  // owner's own field
    // relaxed: a hint (a stale top only makes the deque look fuller).
    if (b < top_.load(std::memory_order_relaxed)) return nullptr;
    // relaxed: the owner's own stores.
    return array_.load(std::memory_order_relaxed)->get(b).join;
  }

  // Any thread but the owner.
  Steal steal(Task &out) {
    // relaxed: the seq_cst fence below is an acquire fence too (what another thief's CAS
    // released is visible after it), and the slots come from the owner, through bottom.
    std::int64_t t = top_.load(std::memory_order_relaxed);
    // seq_cst fence: proof D1 in doc/design.md.
    std::atomic_thread_fence(MR_WEAK_MUTANT(STEAL_FENCE, std::memory_order_seq_cst));
    // acquire: pairs with push's store-release.
    std::int64_t b = bottom_.load(MR_WEAK_MUTANT(STEAL_BOTTOM, std::memory_order_acquire));
    if (t >= b) return Steal::EMPTY;
    // acquire (the paper's consume): pairs with grow()'s store-release of the new array.
    Array *a = array_.load(MR_WEAK_MUTANT(STEAL_ARRAY, std::memory_order_acquire));
    Task x = a->get(t);
    // CAS seq_cst on success (proof D1), relaxed on failure.
    if (!top_.compare_exchange_strong(t, t + 1,
                                      MR_WEAK_MUTANT(STEAL_CAS, std::memory_order_seq_cst),
                                      std::memory_order_relaxed))
      return Steal::ABORT;
    out = x;
    return Steal::TAKEN;
  }

  // The addresses of the two indices, for the frozen MR_EngineView that generated code reads
  // with libatomic_ops (AO_load) to estimate the length without a call.
  const void *top_address() const { return &top_; }
  const void *bottom_address() const { return &bottom_; }
  // And of the array pointer, for the inline fork and join (MR_EngineView.deque_array), which
  // read an array as an MR_SparkArray of MR_SparkSlots (the layout asserted below).
  const void *array_address() const { return &array_; }

  // An estimate of the number of sparks, for the idle loop's last look and for statistics.
  // Any thread; relaxed loads: callers that need it ordered put a fence before the call.
  std::int64_t size_estimate() const {
    std::int64_t b = bottom_.load(std::memory_order_relaxed);
    std::int64_t t = top_.load(std::memory_order_relaxed);
    return b > t ? b - t : 0;
  }

 private:
  struct Slot {
    std::atomic<MR_TaskFn> fn;
    std::atomic<void *> env;
    std::atomic<Join *> join;
  };
  struct Array {
    std::size_t mask;  // capacity - 1; immutable
    Array *retired;    // the array this one replaced; owner only
    Slot *slots;

    // Relaxed: the release store in push() and the acquire loads in steal() order them.
    void put(std::int64_t i, const Task &t) {
      Slot &s = slots[static_cast<std::size_t>(i) & mask];
      s.fn.store(t.fn, std::memory_order_relaxed);
      s.env.store(t.env, std::memory_order_relaxed);
      s.join.store(t.join, std::memory_order_relaxed);
    }
    Task get(std::int64_t i) const {
      const Slot &s = slots[static_cast<std::size_t>(i) & mask];
      return Task{s.fn.load(std::memory_order_relaxed), s.env.load(std::memory_order_relaxed),
                  s.join.load(std::memory_order_relaxed)};
    }
  };

  static_assert(sizeof(Slot) == sizeof(MR_SparkSlot) &&
                    offsetof(Slot, fn) == offsetof(MR_SparkSlot, fn) &&
                    offsetof(Slot, env) == offsetof(MR_SparkSlot, env) &&
                    offsetof(Slot, join) == offsetof(MR_SparkSlot, st),
                "Slot is not laid out as mrengine.h's MR_SparkSlot");
  static_assert(sizeof(std::atomic<Array *>) == sizeof(void *) &&
                    sizeof(std::size_t) == sizeof(AO_t) &&
                    offsetof(Array, mask) == offsetof(MR_SparkArray, mask) &&
                    offsetof(Array, slots) == offsetof(MR_SparkArray, slots),
                "Array is not laid out as mrengine.h's MR_SparkArray");

  static Array *new_array(std::size_t capacity);
  Array *grow(Array *a, std::int64_t t, std::int64_t b);

  // top_: written by thieves and the owner's last-element pop, only by CAS.
  alignas(64) std::atomic<std::int64_t> top_{0};
  // bottom_ and array_: written only by the owner; read by thieves.
  alignas(64) std::atomic<std::int64_t> bottom_{0};
  std::atomic<Array *> array_;
};

}  // namespace mr::engine

#endif
