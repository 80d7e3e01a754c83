// fd_slots.hpp: one engine's records of the descriptors its contexts wait on (MR_wait_fd;
// doc/design.md section 23). While contexts of the engine wait on a descriptor number, it has
// one record: its read and write waiters, and the state of its one registration in the engine's
// epoll instance (both directions on one registration: no duplicate descriptor). The
// registration's epoll data is the record's token, its index and generation, never a pointer:
// an event of a registration that outlived its wait (the descriptor was closed while its file
// stayed open through another one, so the kernel kept the registration and the delete failed)
// carries a generation that no longer matches, and is ignored. Owner only: every call is on the
// engine's own thread (its park, its idle loop, the publish step of its waiting contexts, those
// contexts on it, and its scheduler dropping one).
#ifndef MR_ENGINE_FD_SLOTS_HPP
#define MR_ENGINE_FD_SLOTS_HPP

#include <cstdint>
#include <deque>
#include <memory>
#include <vector>

namespace mr::engine {

struct FdWaiter;  // io_wait.cpp: one context's wait

struct FdSlot {
  std::uint32_t index = 0;  // its place in the table (the token's low half); fixed
  int fd = -1;              // -1: free or retired
  std::uint32_t gen = 0;    // the token's generation; a new one whenever the slot is let go
  // The epoll bits the registration is armed with; 0 once an epoll_wait reported it
  // (EPOLLONESHOT disabled it) or a re-arm failed.
  std::uint32_t armed = 0;
  FdWaiter *waiter[2] = {};  // the read and the write waiter (one waiter for both may be in both)
};

// The token the eventfd is registered with: never a slot's (slot indexes stay below it).
constexpr std::uint64_t kEventfdToken = ~std::uint64_t{0};

class FdSlots {
 public:
  // fd's record, or nullptr.
  FdSlot *find(int fd);
  // A new record for fd, which find(fd) returns from now on (a record fd had is then to be
  // retired). Throws std::bad_alloc (nothing changed).
  FdSlot *make(int fd);
  // What goes in the registration's epoll data.
  static std::uint64_t token(const FdSlot *s) { return std::uint64_t{s->gen} << 32 | s->index; }
  // The record a token names, or nullptr if the token is stale (its record was let go since).
  FdSlot *of_token(std::uint64_t token);
  // Let s go (no waiter left, and no registration of it armed): its index is used again.
  void free(FdSlot *s);
  // Let s go when a registration of it may still be armed in the instance (a delete failed): its
  // index is never used again, so that no later record takes the token's generation back.
  void retire(FdSlot *s);

 private:
  // fd -> index + 1 (0: none), in blocks of 2^kBlockBits numbers made at their first record, so
  // that one large descriptor number costs one block, not a table up to it.
  static constexpr int kBlockBits = 12;
  std::uint32_t *entry(int fd);  // fd's entry, or nullptr if its block was never made
  void forget(FdSlot *s);
  std::deque<FdSlot> slots_;         // a deque: growing it moves no record
  std::vector<std::uint32_t> free_;  // indexes of free records
  std::vector<std::unique_ptr<std::uint32_t[]>> of_fd_;
};

}  // namespace mr::engine

#endif
