// options.hpp: the runtime's options, from MR_Config and from MRENGINE_OPTIONS.
#ifndef MR_RUNTIME_OPTIONS_HPP
#define MR_RUNTIME_OPTIONS_HPP

#include <string>

#include "engine/params.hpp"
#include "mrengine.h"

namespace mr::runtime {

// Apply one options text (MRENGINE_OPTIONS syntax, doc/options.md) to *p. `source` names the
// text in messages ("MRENGINE_OPTIONS", "MR_Config.options"). Returns 0, or MR_EOPTION with a
// message naming the option and the value in *err. Any thread.
int parse_options(const char *text, const char *source, engine::Params *p, std::string *err);

// Build the parameters from a config (NULL: defaults) and the environment. Returns 0, MR_EINVAL
// (bad config field) or MR_EOPTION, with the message in *err. Any thread.
int make_params(const MR_Config *cfg, engine::Params *p, std::string *err);

}  // namespace mr::runtime

#endif
