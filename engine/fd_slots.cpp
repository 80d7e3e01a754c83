// fd_slots.cpp: one engine's descriptor records (fd_slots.hpp).
#include "config.h"

#include "fd_slots.hpp"

#include <algorithm>
#include <new>

namespace mr::engine {

FdSlot *FdSlots::find(int fd) {
  const auto i = static_cast<std::size_t>(fd);
  return i < of_fd_.size() && of_fd_[i] != 0 ? &slots_[of_fd_[i] - 1] : nullptr;
}

FdSlot *FdSlots::make(int fd) {
  const auto i = static_cast<std::size_t>(fd);
  if (i >= of_fd_.size()) of_fd_.resize(std::max(i + 1, 2 * of_fd_.size()), 0);
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
  of_fd_[i] = s->index + 1;
  return s;
}

FdSlot *FdSlots::of_token(std::uint64_t token) {
  const auto i = static_cast<std::size_t>(token & 0xffffffffu);
  if (i >= slots_.size()) return nullptr;
  FdSlot *s = &slots_[i];
  return s->fd >= 0 && s->gen == static_cast<std::uint32_t>(token >> 32) ? s : nullptr;
}

void FdSlots::forget(FdSlot *s) {
  std::uint32_t &of = of_fd_[static_cast<std::size_t>(s->fd)];
  if (of == s->index + 1) of = 0;  // else a record made since names fd (io_wait.cpp's move)
  s->fd = -1;
  s->gen++;
}

void FdSlots::free(FdSlot *s) {
  forget(s);
  free_.push_back(s->index);  // within the capacity make() reserved
}

void FdSlots::retire(FdSlot *s) { forget(s); }

}  // namespace mr::engine
