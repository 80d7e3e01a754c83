// io_wait.hpp: contexts that wait on file descriptors (MR_wait_fd; doc/design.md, "Waiting on
// file descriptors"). With MR_CONFIG_FD_WAITS every engine has an epoll instance and an eventfd,
// and its park (park.hpp) is an epoll_wait on them: unpark writes the eventfd, and readiness of
// a waited-on descriptor makes its context runnable, on the engine it waits on.
#ifndef MR_ENGINE_IO_WAIT_HPP
#define MR_ENGINE_IO_WAIT_HPP

#include <cstdint>

#include "engine.hpp"
#include "fd_slots.hpp"

namespace mr::engine {

// One engine's epoll instance, its eventfd, how many contexts wait on it, and the records of
// the descriptors they wait on.
struct IoEngine {
  int epfd = -1;
  int evfd = -1;
  int waiters = 0;  // owner only: contexts of this engine registered in epfd
  FdSlots slots;    // owner only (fd_slots.hpp)
};

// Create every engine's IoEngine and make it the engines' park. Returns 0 or MR_ENOMEM (then
// nothing is left). Called by start(), before the engine threads exist.
int io_start(Runtime *rt);

// Whether fd is one of the runtime's own descriptors (an engine's epoll instance or eventfd),
// which no context may wait on. While the runtime runs; next to free for any other fd.
bool io_owns(const Runtime *rt, int fd);

// Close and free them. With no engine thread running.
void io_stop(Runtime *rt);

// Called only by engine e's idle loop, at the top of each pass: if contexts of e wait on
// descriptors, poll them without waiting and make the ready ones runnable.
void io_idle(Engine *e);

// MR_wait_fd (mrengine.h). Any thread: a context waits in its engine's epoll instance, another
// thread in one of its own, with the same results.
int wait_fd(int fd, int events, std::int64_t timeout_ns);

}  // namespace mr::engine

#endif
