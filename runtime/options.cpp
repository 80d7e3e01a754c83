// options.cpp: parsing MRENGINE_OPTIONS, the runtime's only text input.
//
// Syntax: whitespace-separated words. A flag with a value takes it as the next word, or after
// '=' for long flags ("--spin-rounds=8"), or glued for the short one ("-P4"). Every value is a
// decimal integer in the flag's range; anything else is an error that names the flag and the
// value. There are no silent defaults for bad input.
#include "config.h"

#include "options.hpp"

#include "engine/quote.hpp"
#include "engine/topology.hpp"

#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace mr::runtime {

using engine::quote;

namespace {

constexpr unsigned long long kMaxEngines = 1024;
constexpr unsigned long long kMaxStackKiB = 1024ull * 1024;  // 1 GiB
constexpr unsigned long long kMinStackKiB = 16;

// A flag takes a decimal number in [min, max] (NUMBER), one word of `choices` (CHOICE), a
// file name with one of the '|'-separated suffixes in `unit` (PATH), or no value at all (SWITCH).
enum class Kind { NUMBER, CHOICE, PATH, SWITCH };

struct Flag {
  const char *long_name;   // "--spin-rounds"
  const char *short_name;  // "-P" or nullptr
  Kind kind;
  unsigned long long min, max;  // NUMBER: the range; CHOICE: the number of choices
  const char *unit;             // NUMBER: for messages; CHOICE: the choices, '|'-separated
  void (*set)(engine::Params *, unsigned long long);  // CHOICE: the index of the word
  void (*set_path)(engine::Params *, const std::string &) = nullptr;  // PATH only
};

const Flag kFlags[] = {
    {"--engines", "-P", Kind::NUMBER, 1, kMaxEngines, "engines",
     [](engine::Params *p, unsigned long long v) { p->engines = static_cast<int>(v); }},
    {"--spin-rounds", nullptr, Kind::NUMBER, 0, 1000000, "rounds",
     [](engine::Params *p, unsigned long long v) { p->spin_rounds = static_cast<int>(v); }},
    {"--stack-size", nullptr, Kind::NUMBER, kMinStackKiB, kMaxStackKiB, "KiB",
     [](engine::Params *p, unsigned long long v) { p->stack_size = v * 1024; }},
    {"--small-stack-size", nullptr, Kind::NUMBER, kMinStackKiB, kMaxStackKiB, "KiB",
     [](engine::Params *p, unsigned long long v) { p->small_stack_size = v * 1024; }},
    {"--poll-interval-us", nullptr, Kind::NUMBER, 1, 10000000, "microseconds",
     [](engine::Params *p, unsigned long long v) {
       p->poll_interval_us = static_cast<unsigned>(v);
     }},
    {"--lc-contexts-per-engine", nullptr, Kind::NUMBER, 1, 1024, "contexts",
     [](engine::Params *p, unsigned long long v) {
       p->lc_contexts_per_engine = static_cast<unsigned>(v);
     }},
    {"--granularity-factor", nullptr, Kind::NUMBER, 0, 1000000, "sparks per engine",
     [](engine::Params *p, unsigned long long v) {
       p->granularity_factor = static_cast<unsigned>(v);
     }},
    {"--max-backup-threads", nullptr, Kind::NUMBER, 0, 4096, "threads",
     [](engine::Params *p, unsigned long long v) {
       p->max_backup_threads = static_cast<unsigned>(v);
     }},
    {"--lazy-engines", nullptr, Kind::SWITCH, 0, 0, "",
     [](engine::Params *p, unsigned long long) { p->lazy_engines = true; }},
    // The order of the choices is the order of engine::Pinning.
    {"--thread-pinning", nullptr, Kind::CHOICE, 0, 3, "none|cores|pus",
     [](engine::Params *p, unsigned long long v) { p->pinning = static_cast<engine::Pinning>(v); }},
    // The order of the choices is the order of engine::Policy.
    {"--schedule", nullptr, Kind::CHOICE, 0, 2, "highest-first|round-robin",
     [](engine::Params *p, unsigned long long v) { p->policy = static_cast<engine::Policy>(v); }},
    {"--level-slice-us", nullptr, Kind::NUMBER, 1, 10000000, "microseconds",
     [](engine::Params *p, unsigned long long v) { p->level_slice_us = static_cast<unsigned>(v); }},
    {"--stats", nullptr, Kind::SWITCH, 0, 0, "",
     [](engine::Params *p, unsigned long long) { p->print_stats = true; }},
    {"--trace", nullptr, Kind::PATH, 0, 0, ".eventlog|.json", nullptr,
     [](engine::Params *p, const std::string &v) { p->trace_path = v; }},
};

// Is v, MR_Config's `field`, in the range of the flag `long_name` that sets the same parameter
// (one range for both ways in)? If not, *err names the field, its value and the range.
bool field_in_range(const char *field, const char *long_name, long long v, std::string *err) {
  for (const Flag &f : kFlags) {
    if (std::strcmp(f.long_name, long_name) != 0) continue;
    if (v >= 0 && static_cast<unsigned long long>(v) >= f.min &&
        static_cast<unsigned long long>(v) <= f.max)
      return true;
    *err = std::string("MR_Config.") + field + " is " + std::to_string(v) + " (expected " + f.unit +
           " from " + std::to_string(f.min) + " to " + std::to_string(f.max) + ")";
    return false;
  }
  std::abort();  // every caller names a flag of kFlags
}

// Does `path` have a name before one of the '|'-separated `suffixes`?
bool has_suffix(const char *suffixes, const std::string &path) {
  const char *c = suffixes;
  for (;;) {
    const char *bar = std::strchr(c, '|');
    std::size_t len = bar ? static_cast<std::size_t>(bar - c) : std::strlen(c);
    if (path.size() > len && path.compare(path.size() - len, len, c, len) == 0 &&
        path[path.size() - len - 1] != '/')
      return true;
    if (!bar) return false;
    c = bar + 1;
  }
}

// The index of `value` among the '|'-separated `choices`, or -1.
int choice_index(const char *choices, const std::string &value) {
  int i = 0;
  const char *c = choices;
  for (;;) {
    const char *bar = std::strchr(c, '|');
    std::size_t len = bar ? static_cast<std::size_t>(bar - c) : std::strlen(c);
    if (value.size() == len && value.compare(0, len, c, len) == 0) return i;
    if (!bar) return -1;
    c = bar + 1;
    i++;
  }
}

bool parse_number(const std::string &s, unsigned long long *out) {
  if (s.empty() || s.size() > 20) return false;
  for (char c : s)
    if (c < '0' || c > '9') return false;
  errno = 0;
  char *end = nullptr;
  unsigned long long v = std::strtoull(s.c_str(), &end, 10);
  if (errno != 0 || *end != '\0') return false;
  *out = v;
  return true;
}

std::vector<std::string> split_words(const char *text) {
  std::vector<std::string> words;
  std::string cur;
  for (const char *c = text; *c; c++) {
    if (*c == ' ' || *c == '\t' || *c == '\n' || *c == '\r') {
      if (!cur.empty()) words.push_back(cur);
      cur.clear();
    } else {
      cur.push_back(*c);
    }
  }
  if (!cur.empty()) words.push_back(cur);
  return words;
}

std::string hex(unsigned v) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%x", v);
  return buf;
}

}  // namespace

int parse_options(const char *text, const char *source, engine::Params *p, std::string *err) {
  std::vector<std::string> words = split_words(text);
  for (std::size_t i = 0; i < words.size(); i++) {
    const std::string &w = words[i];
    const Flag *flag = nullptr;
    std::string value;
    bool have_value = false;
    for (const Flag &f : kFlags) {
      std::size_t ln = std::strlen(f.long_name);
      if (w == f.long_name) {
        flag = &f;
      } else if (w.compare(0, ln, f.long_name) == 0 && w.size() > ln && w[ln] == '=') {
        flag = &f;
        value = w.substr(ln + 1);
        have_value = true;
      } else if (f.short_name && w == f.short_name) {
        flag = &f;
      } else if (f.short_name && w.size() > 2 && w.compare(0, 2, f.short_name) == 0) {
        flag = &f;
        value = w.substr(2);
        have_value = true;
      }
      if (flag) break;
    }
    if (!flag) {
      *err = std::string(source) + ": unknown option " + quote(w);
      return MR_EOPTION;
    }
    // Name the flag as the user spelled it (-P or --engines).
    std::string spelled = w.compare(0, 2, "--") == 0 ? flag->long_name
                          : flag->short_name         ? flag->short_name
                                                     : flag->long_name;
    if (flag->kind == Kind::SWITCH) {
      if (have_value) {
        *err = std::string(source) + ": option " + spelled + " takes no value (got " +
               quote(value) + ")";
        return MR_EOPTION;
      }
      flag->set(p, 1);
      continue;
    }
    if (!have_value) {
      if (i + 1 >= words.size()) {
        *err = std::string(source) + ": option " + quote(w) + " needs a value (" + flag->unit + ")";
        return MR_EOPTION;
      }
      value = words[++i];
    }
    if (flag->kind == Kind::PATH) {
      if (!has_suffix(flag->unit, value)) {
        *err = std::string(source) + ": bad value " + quote(value) + " for option " + spelled +
               " (expected a file name ending in " + flag->unit + ")";
        return MR_EOPTION;
      }
      flag->set_path(p, value);
      continue;
    }
    unsigned long long v = 0;
    if (flag->kind == Kind::CHOICE) {
      int k = choice_index(flag->unit, value);
      if (k < 0) {
        *err = std::string(source) + ": bad value " + quote(value) + " for option " + spelled +
               " (expected one of " + flag->unit + ")";
        return MR_EOPTION;
      }
      v = static_cast<unsigned long long>(k);
    } else if (!parse_number(value, &v) || v < flag->min || v > flag->max) {
      *err = std::string(source) + ": bad value " + quote(value) + " for option " + spelled +
             " (expected " + flag->unit + " from " + std::to_string(flag->min) + " to " +
             std::to_string(flag->max) + ")";
      return MR_EOPTION;
    }
    flag->set(p, v);
  }
  return 0;
}

int make_params(const MR_Config *cfg, engine::Params *p, std::string *err) {
  MR_Config c;
  MR_config_default(&c);
  if (cfg) {
    if (cfg->size < offsetof(MR_Config, options) + sizeof(cfg->options) || cfg->size > 4096) {
      *err = "MR_Config.size is " + std::to_string(cfg->size) +
             ": call MR_config_default before setting fields";
      return MR_EINVAL;
    }
    std::memcpy(&c, cfg, sizeof c < cfg->size ? sizeof c : cfg->size);
  }
  *p = engine::Params{};
  if (c.engines < 0 || static_cast<unsigned long long>(c.engines) > kMaxEngines) {
    *err = "MR_Config.engines is " + std::to_string(c.engines) + " (expected 0 to " +
           std::to_string(kMaxEngines) + ")";
    return MR_EINVAL;
  }
  // Every bit mrengine.h defines; another is a flag of a later version (or garbage), refused
  // rather than ignored, as MR_SpawnOptions.flags are.
  constexpr unsigned kKnownFlags = MR_CONFIG_IGNORE_ENV | MR_CONFIG_QUIET | MR_CONFIG_FD_WAITS;
  if (c.flags & ~kKnownFlags) {
    *err = "MR_Config.flags has unknown bits " + hex(c.flags & ~kKnownFlags);
    return MR_EINVAL;
  }
  p->engines = c.engines == 0 ? engine::topo::allowed_pus() : c.engines;
  if (!field_in_range("spin_rounds", "--spin-rounds", c.spin_rounds, err)) return MR_EINVAL;
  p->spin_rounds = c.spin_rounds;
  if (c.stack_size < kMinStackKiB * 1024 || c.small_stack_size < kMinStackKiB * 1024 ||
      c.stack_size > kMaxStackKiB * 1024 || c.small_stack_size > kMaxStackKiB * 1024) {
    *err = "MR_Config stack sizes must be from " + std::to_string(kMinStackKiB) + " KiB to " +
           std::to_string(kMaxStackKiB) + " KiB";
    return MR_EINVAL;
  }
  p->stack_size = c.stack_size;
  p->small_stack_size = c.small_stack_size;
  if (!field_in_range("poll_interval_us", "--poll-interval-us", c.poll_interval_us, err))
    return MR_EINVAL;
  p->poll_interval_us = c.poll_interval_us;
  p->quiet = (c.flags & MR_CONFIG_QUIET) != 0;
  if ((c.park == nullptr) != (c.unpark == nullptr)) {
    *err = "MR_Config.park and MR_Config.unpark must be set together";
    return MR_EINVAL;
  }
  p->park = engine::Park{c.park, c.unpark, c.park_ctx};
  p->fd_waits = (c.flags & MR_CONFIG_FD_WAITS) != 0;
  if (p->fd_waits && c.park) {
    *err = "MR_CONFIG_FD_WAITS needs the engines' own park: leave MR_Config.park unset";
    return MR_EINVAL;
  }
  if (c.gc) {
    if (c.gc->size < sizeof(MR_GcHooks)) {
      *err = "MR_Config.gc->size is " + std::to_string(c.gc->size) +
             " (expected sizeof(MR_GcHooks): MR_gc_hooks_init)";
      return MR_EINVAL;
    }
    p->gc = *c.gc;
  }
  if (c.options) {
    int rc = parse_options(c.options, "MR_Config.options", p, err);
    if (rc) return rc;
  }
  if (!(c.flags & MR_CONFIG_IGNORE_ENV)) {
    if (const char *env = std::getenv("MRENGINE_OPTIONS")) {
      int rc = parse_options(env, "MRENGINE_OPTIONS", p, err);
      if (rc) return rc;
    }
  }
  return 0;
}

}  // namespace mr::runtime
