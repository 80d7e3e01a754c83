// gc_config.hpp: whether an MR_Config can take a collector's hooks (MR_gc_set_hooks and
// MR_gc_use_boehm refuse it with MR_EINVAL otherwise).
#ifndef MR_RUNTIME_GC_CONFIG_HPP
#define MR_RUNTIME_GC_CONFIG_HPP

#include <cstddef>

#include "mrengine.h"

namespace mr::runtime {

// The config must know the field gc: filled by MR_config_default of this version or a later one.
inline bool gc_config_ok(const MR_Config *cfg) {
  return cfg && cfg->size >= offsetof(MR_Config, gc) + sizeof cfg->gc && cfg->size <= 4096;
}

}  // namespace mr::runtime

#endif
