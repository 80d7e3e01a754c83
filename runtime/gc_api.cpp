// gc_api.cpp: the C ABI of mrengine_gc.h but MR_gc_use_boehm (gc_boehm.cpp): a collector's hooks
// and the suspended stacks it scans (engine/gc.hpp).
#include "config.h"

#include <cstddef>
#include <cstring>

#include "engine/gc.hpp"
#include "gc_config.hpp"
#include "mrengine_gc.h"

MR_EXTERN void MR_gc_hooks_init(MR_GcHooks *hooks) {
  if (!hooks) return;
  std::memset(hooks, 0, sizeof *hooks);
  hooks->size = sizeof *hooks;
}

MR_EXTERN int MR_gc_set_hooks(MR_Config *cfg, const MR_GcHooks *hooks) {
  if (!mr::runtime::gc_config_ok(cfg)) return MR_EINVAL;
  if (hooks && hooks->size < sizeof(MR_GcHooks)) return MR_EINVAL;
  cfg->gc = hooks;
  return 0;
}

MR_EXTERN size_t MR_gc_each_suspended_stack(MR_GcStackFn fn, void *arg) {
  if (!fn) return 0;
  return mr::engine::gc::each_suspended(fn, arg);
}

MR_EXTERN size_t MR_gc_each_root_range(MR_GcStackFn fn, void *arg) {
  if (!fn) return 0;
  return mr::engine::gc::each_root_range(fn, arg);
}
