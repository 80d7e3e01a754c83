// fd_slots.cpp: one engine's descriptor records (fd_slots.hpp).
#include "config.h"

#include "fd_slots.hpp"

#include <new>

namespace mr::engine {

std::uint32_t *FdSlots::entry(int fd) {
  const auto b = static_cast<std::size_t>(fd) >> kBlockBits;
  if (b >= of_fd_.size() || !of_fd_[b]) return nullptr;
  return &of_fd_[b][static_cast<std::size_t>(fd) & ((std::size_t{1} << kBlockBits) - 1)];
}

FdSlot *FdSlots::find(int fd) {
  const std::uint32_t *x = entry(fd);
  return x && *x != 0 ? &slots_[*x - 1] : nullptr;
}

FdSlot *FdSlots::make(int fd) {
  const auto b = static_cast<std::size_t>(fd) >> kBlockBits;
  if (b >= of_fd_.size()) of_fd_.resize(b + 1);
  if (!of_fd_[b]) of_fd_[b] = std::make_unique<std::uint32_t[]>(std::size_t{1} << kBlockBits);
  FdSlot *s;
  if (!free_.empty()) {
    s = &slots_[free_.back()];
    free_.pop_back();
  } else {
    // Every index below kEventfdToken's low half, so that no token is the eventfd's.
    if (slots_.size() >= 0xffffffffu) throw std::bad_alloc();
    free_.reserve(slots_.size() + 1);  // room for its index when it is freed: free() never throws
    slots_.emplace_back();
    s = &slots_.back();
    s->index = static_cast<std::uint32_t>(slots_.size() - 1);
  }
  s->fd = fd;
  s->armed = 0;
  s->waiter[0] = s->waiter[1] = nullptr;
  *entry(fd) = s->index + 1;
  return s;
}

FdSlot *FdSlots::of_token(std::uint64_t token) {
  const auto i = static_cast<std::size_t>(token & 0xffffffffu);
  if (i >= slots_.size()) return nullptr;
  FdSlot *s = &slots_[i];
  return s->fd >= 0 && s->gen == static_cast<std::uint32_t>(token >> 32) ? s : nullptr;
}

void FdSlots::forget(FdSlot *s) {
  std::uint32_t *of = entry(s->fd);  // made with s
  if (*of == s->index + 1) *of = 0;  // else a record made since names fd (io_wait.cpp's move)
  s->fd = -1;
  s->gen++;
}

void FdSlots::free(FdSlot *s) {
  forget(s);
  free_.push_back(s->index);  // within the capacity make() reserved
}

void FdSlots::retire(FdSlot *s) { forget(s); }

}  // namespace mr::engine
