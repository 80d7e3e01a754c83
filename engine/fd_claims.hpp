// fd_claims.hpp: who waits on which descriptor (MR_wait_fd). At most one read waiter and one
// write waiter per descriptor in the process at once, wherever they run (contexts on any engine,
// threads that are not engines), as Go's netpoller allows; a second waiter for a direction that
// is taken gets MR_EINUSE, whichever engine it is on.
#ifndef MR_ENGINE_FD_CLAIMS_HPP
#define MR_ENGINE_FD_CLAIMS_HPP

namespace mr::engine {

// Claim `events` (MR_FD_READ and/or MR_FD_WRITE) of fd for the caller's wait, a context's or a
// thread's (`context`). Returns 0; or MR_EINUSE (nothing claimed) if one of `events` is held; or
// MR_ENOMEM if the table's block for fd cannot be made. fd >= 0. Any thread.
int fd_claim(int fd, int events, bool context);

// Give back what fd_claim took. Any thread.
void fd_release(int fd, int events, bool context);

// Forget every context's claim: the runtime is being freed, and a context still waiting when the
// engines stopped (MR_shutdown_now's, a drop channel's at the end of MR_shutdown) never gives its
// claim back. With no engine running.
void fd_claims_forget_contexts();

// In the child of a fork() (fork.cpp): empty the table (every waiter of the parent is gone: the
// child's one thread was not waiting). A claim or a release is one atomic operation, so no
// other thread can have been halfway through one when the process was copied.
void fd_claims_fork_child();

}  // namespace mr::engine

#endif
