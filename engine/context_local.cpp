// context_local.cpp: the calling context's word of library data (context_local.hpp).
#include "context_local.hpp"

#include "blocking.hpp"
#include "context.hpp"

namespace mr::engine {

ContextLocal *context_local() {
  // context_on_this_thread answers a read-only view (the overflow handler's); the record is the
  // caller's own, which it may write.
  auto *c = const_cast<Context *>(context_on_this_thread());
  if (!c || c->kind == ContextKind::PRIMORDIAL) return nullptr;
  return &c->local;
}

}  // namespace mr::engine
