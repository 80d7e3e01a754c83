// fd_claims.cpp: the claims table of MR_wait_fd (fd_claims.hpp).
#include "config.h"

#include "fd_claims.hpp"

#include <atomic>
#include <cstdint>
#include <new>

#include "mrengine.h"

namespace mr::engine {

namespace {

// One byte per descriptor number: the directions contexts wait on (MR_FD_READ, MR_FD_WRITE) and,
// shifted by kThreadShift, those threads wait on. A claim is a CAS on its byte and a release a
// fetch_and: no lock and no allocation per wait (a map under a lock was 30% of bench/echo's
// instructions, doc/design.md section 23). The bytes are in blocks of 2^16
// descriptors, made at the first claim in their range and kept until the process ends: 64 KiB
// for a process whose descriptors are below 65536, and every int has its block. Process-wide
// (not the runtime's): threads wait on descriptors with no runtime too.
constexpr int kThreadShift = 2;
constexpr int kBlockBits = 16;
constexpr std::size_t kBlockSize = std::size_t{1} << kBlockBits;
constexpr std::size_t kBlocks = (std::size_t{INT32_MAX} >> kBlockBits) + 1;
struct Block {
  std::atomic<std::uint8_t> bits[kBlockSize];
};

std::atomic<Block *> g_blocks[kBlocks];  // zero-initialised: no block yet

int held_of(std::uint8_t bits) {
  return (bits | bits >> kThreadShift) & (MR_FD_READ | MR_FD_WRITE);
}

// fd's byte, made with its block if need be (nullptr: no memory). Any thread.
std::atomic<std::uint8_t> *byte_of(int fd) {
  std::atomic<Block *> &slot = g_blocks[static_cast<unsigned>(fd) >> kBlockBits];
  // acquire: pairs with the release of the CAS that published the block, so that its zeroed
  // bytes are seen.
  Block *b = slot.load(std::memory_order_acquire);
  if (!b) {
    auto *made = new (std::nothrow) Block{};
    if (!made) return nullptr;
    // acq_rel: release publishes the zeroed block; acquire (on failure too) sees the winner's.
    if (slot.compare_exchange_strong(b, made, std::memory_order_acq_rel,
                                     std::memory_order_acquire)) {
      b = made;
    } else {
      delete made;
    }
  }
  return &b->bits[static_cast<unsigned>(fd) & (kBlockSize - 1)];
}

template <typename F>
void for_each_byte(F f) {
  for (std::atomic<Block *> &slot : g_blocks) {
    // acquire: as in byte_of.
    Block *b = slot.load(std::memory_order_acquire);
    if (b)
      for (std::atomic<std::uint8_t> &x : b->bits) f(x);
  }
}

}  // namespace

int fd_claim(int fd, int events, bool context) {
  std::atomic<std::uint8_t> *x = byte_of(fd);
  if (!x) return MR_ENOMEM;
  const auto mine = static_cast<std::uint8_t>(context ? events : events << kThreadShift);
  // relaxed: only a first guess for the CAS.
  std::uint8_t bits = x->load(std::memory_order_relaxed);
  do {
    if (held_of(bits) & events) return MR_EINUSE;
    // acquire: pairs with the release of the last fd_release of these directions, so that the
    // previous waiter's wait (its epoll_ctl calls) comes before ours, as a lock's would.
    // relaxed on failure: we try again with what we read.
  } while (!x->compare_exchange_weak(bits, static_cast<std::uint8_t>(bits | mine),
                                     std::memory_order_acquire, std::memory_order_relaxed));
  return 0;
}

void fd_release(int fd, int events, bool context) {
  // acquire: as in byte_of; the claim made the block, so it is there.
  Block *b = g_blocks[static_cast<unsigned>(fd) >> kBlockBits].load(std::memory_order_acquire);
  const auto mine = static_cast<std::uint8_t>(context ? events : events << kThreadShift);
  // release: pairs with the next claim's acquire (fd_claim).
  b->bits[static_cast<unsigned>(fd) & (kBlockSize - 1)].fetch_and(static_cast<std::uint8_t>(~mine),
                                                                  std::memory_order_release);
}

void fd_claims_forget_contexts() {
  for_each_byte([](std::atomic<std::uint8_t> &x) {
    // relaxed: with no engine running, no context claims or releases; a thread's bits are kept.
    if (x.load(std::memory_order_relaxed) & (MR_FD_READ | MR_FD_WRITE))
      x.fetch_and(static_cast<std::uint8_t>(~(MR_FD_READ | MR_FD_WRITE)),
                  std::memory_order_relaxed);
  });
}

void fd_claims_fork_child() {
  for_each_byte([](std::atomic<std::uint8_t> &x) {
    // relaxed: the child has one thread, which was not waiting. Stored only where a bit is set,
    // so that the child does not copy the pages of blocks it does not change.
    if (x.load(std::memory_order_relaxed) != 0) x.store(0, std::memory_order_relaxed);
  });
}

}  // namespace mr::engine
