// overflow.cpp: the SIGSEGV handler that names a context stack overflow (overflow.hpp).
#include "config.h"

#include "overflow.hpp"

#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "context.hpp"

namespace mr::engine::overflow {

namespace {

struct sigaction g_old_segv, g_old_bus;
bool g_installed = false;
// Set by install() before the handler can run; read by the handler.
ContextOnThisThread g_on_this_thread = nullptr;
constexpr std::size_t kAltStackBytes = 64 * 1024;
// How far below the guard page a fault still counts as an overflow (a frame bigger than a page
// jumps over the guard).
constexpr std::uintptr_t kBelowGuard = 1024 * 1024;
// How far above the guard page the stack pointer of an overflowing thread may still be (a
// store below the stack pointer, the red zone, a signal frame): 64 KiB is generous.
constexpr std::uintptr_t kAboveGuard = 64 * 1024;

// The faulting thread's stack pointer, from the handler's context; 0 where not known.
std::uintptr_t stack_pointer(const void *uc) {
  const auto *u = static_cast<const ucontext_t *>(uc);
#if defined(__x86_64__)
  return static_cast<std::uintptr_t>(u->uc_mcontext.gregs[REG_RSP]);
#elif defined(__aarch64__)
  return static_cast<std::uintptr_t>(u->uc_mcontext.sp);
#else
  (void)u;
  return 0;
#endif
}

// Append the decimal form of v to *p (async-signal-safe).
char *put_number(char *p, std::size_t v) {
  char digits[24];
  int n = 0;
  do {
    digits[n++] = static_cast<char>('0' + v % 10);
    v /= 10;
  } while (v != 0);
  while (n > 0) *p++ = digits[--n];
  return p;
}

char *put_text(char *p, const char *s) {
  std::size_t n = std::strlen(s);
  std::memcpy(p, s, n);
  return p + n;
}

// Call (or fall back to) the action that was installed before ours.
void chain(int sig, siginfo_t *si, void *uc) {
  const struct sigaction &old = sig == SIGBUS ? g_old_bus : g_old_segv;
  if ((old.sa_flags & SA_SIGINFO) && old.sa_sigaction) {
    old.sa_sigaction(sig, si, uc);
    return;
  }
  if (old.sa_handler != SIG_DFL && old.sa_handler != SIG_IGN) {
    old.sa_handler(sig);
    return;
  }
  // Sent (raise, kill, sigqueue: si_code <= 0), not a fault: nothing faults again. Ignored, it
  // stays ignored and our handler stays for the next overflow.
  bool sent = !si || si->si_code <= 0;
  if (sent && old.sa_handler == SIG_IGN) return;
  // The default action (or a fault the old action ignores, which the kernel would not let it
  // ignore): reinstate it and return. A fault's instruction faults again; a sent signal is sent
  // again, pending until this handler returns (it is blocked here), so either way the process
  // ends as it would have without us.
  struct sigaction dfl;
  std::memset(&dfl, 0, sizeof dfl);
  dfl.sa_handler = SIG_DFL;
  sigemptyset(&dfl.sa_mask);
  sigaction(sig, &dfl, nullptr);
  if (sent) raise(sig);
}

void on_fault(int sig, siginfo_t *si, void *uc) {
  const Context *c = g_on_this_thread();
  if (c && c->stack.sp && si) {
    auto addr = reinterpret_cast<std::uintptr_t>(si->si_addr);
    auto guard = reinterpret_cast<std::uintptr_t>(c->stack.sp) - c->stack.size;  // lowest byte
    auto page = static_cast<std::uintptr_t>(sysconf(_SC_PAGESIZE));
    // An overflow has the stack pointer at the guard or past it. A fault near the guard with
    // the stack pointer higher up is another's: a collector's write barrier on a heap page that
    // happens to lie below the stack (bdwgc's incremental mode) was taken for an overflow.
    std::uintptr_t sp = stack_pointer(uc);
    bool at_guard = sp == 0 || sp < guard + page + kAboveGuard;
    if (at_guard && addr + kBelowGuard >= guard && addr < guard + page) {
      char msg[160];
      char *p = put_text(msg, "mrengine: context stack overflow (stack size ");
      p = put_number(p, (c->stack.size - page) / 1024);
      p = put_text(p, c->kind == ContextKind::SMALL ? " KiB); raise --small-stack-size\n"
                                                    : " KiB); raise --stack-size\n");
      ssize_t ignored = write(STDERR_FILENO, msg, static_cast<std::size_t>(p - msg));
      (void)ignored;
      std::abort();
    }
  }
  chain(sig, si, uc);
}

}  // namespace

void install(ContextOnThisThread on_this_thread) {
  g_on_this_thread = on_this_thread;
  struct sigaction sa;
  std::memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = on_fault;
  sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
  sigemptyset(&sa.sa_mask);
  if (sigaction(SIGSEGV, &sa, &g_old_segv) != 0) return;
  if (sigaction(SIGBUS, &sa, &g_old_bus) != 0) {
    sigaction(SIGSEGV, &g_old_segv, nullptr);
    return;
  }
  g_installed = true;
}

void uninstall() {
  if (!g_installed) return;
  g_installed = false;
  for (int sig : {SIGSEGV, SIGBUS}) {
    struct sigaction cur;
    if (sigaction(sig, nullptr, &cur) != 0) continue;
    if ((cur.sa_flags & SA_SIGINFO) && cur.sa_sigaction == on_fault)
      sigaction(sig, sig == SIGBUS ? &g_old_bus : &g_old_segv, nullptr);
  }
}

bool altstack_on(AltStack &a) {
  void *mem =
      mmap(nullptr, kAltStackBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (mem == MAP_FAILED) return false;
  stack_t ss;
  ss.ss_sp = mem;
  ss.ss_size = kAltStackBytes;
  ss.ss_flags = 0;
  if (sigaltstack(&ss, &a.old) != 0) {
    munmap(mem, kAltStackBytes);
    return false;
  }
  a.mem = mem;
  return true;
}

void altstack_off(AltStack &a) {
  if (!a.mem) return;
  sigaltstack(&a.old, nullptr);
  munmap(a.mem, kAltStackBytes);
  a.mem = nullptr;
}

}  // namespace mr::engine::overflow
