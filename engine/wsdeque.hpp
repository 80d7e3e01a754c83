// wsdeque.hpp: the per-engine work-stealing deque of sparks (Chase–Lev), with a held part.
//
// The orderings are those proved correct for C11 by Lê, Pop, Cohen and Zappa Nardelli,
// "Correct and Efficient Work-Stealing for Weak Memory Models" (PPoPP 2013), figure 1. The owner
// pushes and pops at the bottom; thieves steal at the top. The array grows by doubling; a retired
// array is kept until the deque is destroyed, because a thief that read the old array pointer may
// still read from it (the retired arrays together are smaller than the live one, so this costs at
// most the live size again). Elements are stored word by word in relaxed atomics so that a thief
// reading a slot the owner is overwriting is a benign, defined race whose value the thief's CAS
// on `top` then discards.
//
// Held sparks (doc/design.md, section 5, H1). The owner's sparks run from top to held_; thieves
// see only those below bottom_ (the published part), the oldest. The newer ones, from bottom_ to
// held_, are the owner's alone: a push there is a few plain stores and a pop takes one back with
// no fence and no CAS, since no thief can reach an index at or above bottom_. The owner reads
// top_ only when it must (a full array, the pop of a published spark, a thief's request) and
// counts from its own copy, top_cache_, which is never ahead of top_: a thief's steal does not
// reach the owner's cache lines. One word, wanted_, says whether the owner must publish: its
// kShort bit, the owner's, while fewer than publish_below_ sparks are published by that count;
// its kAsked bit, set by a thief that found nothing published or is taking the last published
// spark. A push or pop that finds it nonzero publishes (moves bottom_ up, a store-release, as
// the Chase–Lev push does), the oldest held first: up to publish_below_, or half of the held
// ones when a thief asked. publish() is that check after a pop, publish_all() publishes
// everything. The caller of a push or publish that published runs the post-work check (P1),
// which sees only published sparks.
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

  // Publishing every push (publish_below = kAlwaysPublish) is the plain Chase–Lev deque.
  static constexpr std::int64_t kAlwaysPublish = std::int64_t{1} << 40;

  explicit WsDeque(std::size_t log_capacity = 8, std::int64_t publish_below = kAlwaysPublish);
  ~WsDeque();
  WsDeque(const WsDeque &) = delete;
  WsDeque &operator=(const WsDeque &) = delete;

  // The bits of wanted_ (and of MR_EngineView's publish_wanted).
  static constexpr std::int64_t kAsked = 1, kShort = 2;

  // Called only by the owning engine: keep at least n sparks published when there are that many
  // (the engines that could steal them: N - 1; kAlwaysPublish in a blocking region in place).
  std::int64_t publish_below() const { return publish_below_; }
  void set_publish_below(std::int64_t n) {
    publish_below_ = n;
    note_count(bottom_.load(std::memory_order_relaxed), top_cache_.load(std::memory_order_relaxed));
  }

  // Called only by the owning engine. Returns true if it published a spark (the caller then runs
  // the post-work check, P1); false if the new spark is held.
  bool push(const Task &t) {
    std::int64_t h = held_.load(std::memory_order_relaxed);  // owner's own fields
    std::int64_t t0 = top_cache_.load(std::memory_order_relaxed);
    Array *a = array_.load(std::memory_order_relaxed);  // only the owner stores it
    MR_DASSERT(h >= t0, "deque: top passed bottom outside a pop");
    if (__builtin_expect(h - t0 > static_cast<std::int64_t>(a->mask), 0)) {
      t0 = refresh_top();  // the copy may be behind: full only if top_ says so
      note_count(bottom_.load(std::memory_order_relaxed), t0);  // and thieves took some
      if (h - t0 > static_cast<std::int64_t>(a->mask)) a = grow(a, t0, h);
    }
    a->put(h, t);
    // relaxed: held_ is the owner's; other threads read it only as an estimate.
    held_.store(h + 1, std::memory_order_relaxed);
    return publish();
  }

  // Called only by the owning engine, after a push or a pop: publish held sparks if a thief
  // asked (half of them), or if fewer than publish_below are published by the owner's count.
  // Returns true if it did (the caller runs the post-work check).
  bool publish() {
    // relaxed: a thief's request is a hint; the owner's own bit is its own store.
    std::int64_t w = wanted_.load(std::memory_order_relaxed);
    if (__builtin_expect(w == 0, 1)) return false;
    std::int64_t h = held_.load(std::memory_order_relaxed);  // owner's own fields
    std::int64_t b = bottom_.load(std::memory_order_relaxed);
    if (h == b) return false;  // nothing held: the word stays, for the next push
    std::int64_t t0 = top_cache_.load(std::memory_order_relaxed);
    std::int64_t nb = b;
    if (w & kAsked) {
      t0 = refresh_top();
      nb = b + (h - b + 1) / 2;
    }
    std::int64_t want = h - t0 <= publish_below_ ? h : t0 + publish_below_;
    if (want > nb) nb = want;
    // relaxed: answered, before the publication, whose store-release orders it: a thief that
    // takes the last of these sparks read the new bottom with acquire, so its request comes
    // after this store and stays. One made before it is lost; the sparks published now answer
    // it, unless w was a kShort left over from before publish_all (which does not rewrite the
    // word) and nothing is published: the request then waits for the thief's next look, or,
    // if that thief sleeps, for the owner's next publication, at the latest its next switch (H1).
    wanted_.store(nb - t0 < publish_below_ ? kShort : 0, std::memory_order_relaxed);
    if (nb > b) release_bottom(nb);
    return nb > b;
  }

  // Called only by the owning engine: publish every held spark (before it runs something else
  // than its own sparks). Returns true if there was one (the caller runs the post-work check).
  bool publish_all() {
    std::int64_t h = held_.load(std::memory_order_relaxed);  // owner's own fields
    if (h == bottom_.load(std::memory_order_relaxed)) return false;
    release_bottom(h);
    return true;
  }

  // Called only by the owning engine: the newest spark, held or published. Returns false if the
  // deque was empty or the last spark was taken by a thief.
  bool pop(Task &out) {
    std::int64_t h = held_.load(std::memory_order_relaxed);        // owner's own field
    std::int64_t b = bottom_.load(std::memory_order_relaxed) - 1;  // written only by the owner
    Array *a = array_.load(std::memory_order_relaxed);             // only the owner stores it
    if (h > b + 1) {  // held: no thief reads at or above bottom_ (H1)
      out = a->get(h - 1);
      held_.store(h - 1, std::memory_order_relaxed);  // relaxed: as in push
      return true;
    }
    // store-release: a thief that reads this bottom with acquire sees the pushes of the slots
    // below it (C++20's release sequences no longer hold a thread's later plain stores, so the
    // pushes' own releases do not reach such a thief: proof D1). A plain store on x86.
    bottom_.store(b, MR_WEAK_MUTANT(POP_BOTTOM, std::memory_order_release));
    // seq_cst fence: proof D1 in doc/design.md (the owner's bottom store and a thief's top load
    // must not both miss each other for the last element).
    std::atomic_thread_fence(MR_WEAK_MUTANT(POP_FENCE, std::memory_order_seq_cst));
    // acquire: the copy taken here lets push and the inline fork write slots below t again, and
    // a slot is reused only after an acquire read of a top past it (H1): the thieves' reads of
    // those slots, before their CASes, come before. A plain load on x86, ldar on arm64.
    std::int64_t t = top_.load(MR_WEAK_MUTANT(POP_TOP, std::memory_order_acquire));
    MR_DASSERT(t <= b + 1, "deque: top more than one past the popped bottom");
    top_cache_.store(t, std::memory_order_relaxed);  // relaxed: the owner's own copy
    if (t > b) {                                     // empty
      bottom_.store(b + 1, std::memory_order_relaxed);
      note_count(b + 1, t);
      return false;
    }
    out = a->get(b);
    held_.store(b, std::memory_order_relaxed);  // relaxed: as in push
    if (t == b) {                               // the last element: race the thieves for it
      // CAS seq_cst on success (part of proof D1); acquire on failure, for the copy below, as
      // the load above (the thief that won read slot b before its CAS).
      bool won =
          top_.compare_exchange_strong(t, t + 1, MR_WEAK_MUTANT(POP_CAS, std::memory_order_seq_cst),
                                       MR_WEAK_MUTANT(POP_TOP, std::memory_order_acquire));
      bottom_.store(b + 1, std::memory_order_relaxed);
      held_.store(b + 1, std::memory_order_relaxed);
      // Won or lost, one CAS moved top past b: the copy may follow (the deque is empty), and
      // must, or the next push would count a published spark that is gone and hold its own.
      top_cache_.store(b + 1, std::memory_order_relaxed);  // relaxed: the owner's own copy
      note_count(b + 1, b + 1);
      return won;
    }
    note_count(b, t);
    return true;
  }

  // Called only by the owning engine: the join of the newest spark, held or published, without
  // taking it; nullptr if the deque is empty by the owner's count. Only the owner writes slots,
  // so it may look before the pop that decides whether the spark is still there (a thief may
  // have taken the last published one: the pop then fails). A spark of another conjunction is
  // thus left where it is, published or held (the inline join of mrengine_view.h looks the same
  // way), rather than popped and pushed back held.
  Join *newest_join() const {
    std::int64_t h = held_.load(std::memory_order_relaxed);  // owner's own fields
    if (h <= top_cache_.load(std::memory_order_relaxed)) return nullptr;
    const Array *a = array_.load(std::memory_order_relaxed);  // only the owner stores it
    return a->get(h - 1).join;
  }

#ifdef MR_DEBUG
  // For the debug build's liveness watchdog: one past the newest spark, and whether a spark
  // below index i is held. Any thread; relaxed loads: estimates.
  std::int64_t held_end() const { return held_.load(std::memory_order_relaxed); }
  bool holds_below(std::int64_t i) const {
    std::int64_t b = bottom_.load(std::memory_order_relaxed);
    std::int64_t h = held_.load(std::memory_order_relaxed);
    return b < (i < h ? i : h);
  }
#endif

  // Any thread but the owner.
  Steal steal(Task &out) {
    // relaxed: the seq_cst fence below is an acquire fence too (what another thief's CAS
    // released is visible after it), and the slots come from the owner, through bottom.
    std::int64_t t = top_.load(std::memory_order_relaxed);
    // seq_cst fence: proof D1 in doc/design.md.
    std::atomic_thread_fence(MR_WEAK_MUTANT(STEAL_FENCE, std::memory_order_seq_cst));
    // acquire: pairs with push's store-release.
    std::int64_t b = bottom_.load(MR_WEAK_MUTANT(STEAL_BOTTOM, std::memory_order_acquire));
    if (t >= b) {
      ask();  // nothing published
      return Steal::EMPTY;
    }
    // acquire (the paper's consume): pairs with grow()'s store-release of the new array.
    Array *a = array_.load(MR_WEAK_MUTANT(STEAL_ARRAY, std::memory_order_acquire));
    Task x = a->get(t);
    // The last published spark: ask, and before the CAS that takes it. The owner's copy of top
    // still counts this one, so it holds what it forks from here on until asked; and the request
    // this thief would make later, finding nothing, may come after the owner's last push: a
    // task producer past its cut-off forks only when a steal has shortened its deque. Asked
    // before the CAS (whose release orders the request), an owner that reads the shortened
    // deque with acquire reads the request too, and its next fork answers (unless its own pop
    // of a published spark raced this steal: then this one was not the last by the bottom read
    // here, and the request waits for this thief's next look, H1). A lost CAS leaves a request
    // that publishes early, nothing worse.
    if (t + 1 == b) ask();
    // CAS seq_cst on success (proof D1), relaxed on failure.
    if (!top_.compare_exchange_strong(t, t + 1,
                                      MR_WEAK_MUTANT(STEAL_CAS, std::memory_order_seq_cst),
                                      std::memory_order_relaxed))
      return Steal::ABORT;
    out = x;
    return Steal::TAKEN;
  }

  // The addresses of the indices, for the frozen MR_EngineView that generated code reads
  // with libatomic_ops (AO_load) to estimate the length without a call.
  const void *top_address() const { return &top_; }
  const void *bottom_address() const { return &bottom_; }
  const void *held_address() const { return &held_; }
  const void *top_cache_address() const { return &top_cache_; }
  const void *wanted_address() const { return &wanted_; }
  // And of the array pointer, for the inline fork and join (MR_EngineView.deque_array), which
  // read an array as an MR_SparkArray of MR_SparkSlots (the layout asserted below).
  const void *array_address() const { return &array_; }

  // The live array's slots, held and published alike, as one range of memory: what a collector
  // scans for the sparks' words (gc.hpp's roots). Any thread; acquire: pairs with grow()'s
  // store-release of a new array (the sparks it holds were copied before). A retired array
  // holds only copies.
  void slots_range(void **lo, void **hi) const {
    const Array *a = array_.load(std::memory_order_acquire);
    *lo = a->slots;
    *hi = a->slots + a->mask + 1;
  }

  // An estimate of the number of sparks, held ones included: for the owner (statistics, traces),
  // or once the owner has stopped. Any thread; relaxed loads.
  std::int64_t size_estimate() const {
    std::int64_t h = held_.load(std::memory_order_relaxed);
    std::int64_t t = top_.load(std::memory_order_relaxed);
    return h > t ? h - t : 0;
  }

  // An estimate of the number of published sparks, those a thief can take: for the idle loop's
  // last look and the wake choice. Any thread; relaxed loads: callers that need it ordered put a
  // fence before the call.
  std::int64_t published_estimate() const {
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

  // Owner only: top_ read afresh into the owner's copy.
  std::int64_t refresh_top() {
    // acquire: pairs with a thief's CAS (a slot it read may be reused after this).
    std::int64_t t = top_.load(MR_WEAK_MUTANT(PUSH_TOP, std::memory_order_acquire));
    top_cache_.store(t, std::memory_order_relaxed);  // relaxed: the owner's own copy
    return t;
  }

  // A thief's request for sparks (relaxed: a hint the owner reads at its next push or pop; read
  // first, so that a thief that keeps looking does not keep writing the line; a plain store,
  // since the owner recomputes its own bit whenever the word is nonzero).
  void ask() {
    std::int64_t w = wanted_.load(std::memory_order_relaxed);
    if ((w & kAsked) == 0) wanted_.store(w | kAsked, std::memory_order_relaxed);
  }

  // Owner only: with bottom b and top t0 by its count, set kShort if too few are published.
  void note_count(std::int64_t b, std::int64_t t0) {
    if (b - t0 >= publish_below_) return;
    // relaxed: the owner's bit (a thief's kAsked read here stays).
    std::int64_t w = wanted_.load(std::memory_order_relaxed);
    if ((w & kShort) == 0) wanted_.store(w | kShort, std::memory_order_relaxed);
  }

  // Owner only: move bottom_ up to nb, publishing the held slots below it.
  void release_bottom(std::int64_t nb) {
    // store-release: the slots' words (and whatever the pusher wrote before, such as the
    // spark's environment) are visible to a thief that reads the new bottom with acquire (the
    // acquire load of bottom_ in steal()). A plain store on x86; and unlike a release fence
    // followed by a relaxed store, ThreadSanitizer sees the pairing.
    bottom_.store(nb, MR_WEAK_MUTANT(PUSH_BOTTOM, std::memory_order_release));
  }

  static Array *new_array(std::size_t capacity);
  Array *grow(Array *a, std::int64_t t, std::int64_t b);

  // top_: written by thieves and the owner's last-element pop, only by CAS.
  alignas(64) std::atomic<std::int64_t> top_{0};
  // bottom_ and array_: written only by the owner; read by thieves.
  alignas(64) std::atomic<std::int64_t> bottom_{0};
  std::atomic<Array *> array_;
  // held_: one past the newest spark; written only by the owner at every push and pop, read by
  // others only as an estimate. A line of its own: thieves read bottom_'s line at every steal,
  // and the owner's stores here would miss each time if it were the same.
  alignas(64) std::atomic<std::int64_t> held_{0};
  // top_cache_: the owner's copy of top_, never ahead of it; only the owner touches it (atomic
  // for the inline fork and join of mrengine_view.h, which reach it through the view).
  std::atomic<std::int64_t> top_cache_{0};
  std::int64_t publish_below_;  // owner only, set before the thread starts
  // wanted_: kAsked set by a thief that found nothing published or is taking the last published
  // spark, kShort by the owner while too few are published; rewritten by the owner when it
  // publishes. A line of its own: the owner reads it at every push and pop, and thieves write
  // it.
  alignas(64) std::atomic<std::int64_t> wanted_{0};
  char wanted_line_[64 - sizeof(std::atomic<std::int64_t>)];
};

}  // namespace mr::engine

#endif
