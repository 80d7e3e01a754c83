// affinity.cpp: the place queries (omp_get_num_places...), the affinity format and its
// display. A field's value is what the matching omp_* routine returns in the task the line is
// made for; %A and %{thread_affinity} print the processors the thread may run on as the
// kernel has them (sched_getaffinity), whether or not a place bound it.
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <mutex>
#include <string>

#include "affinity.hpp"
#include "current.hpp"
#include "env.hpp"
#include "export.hpp"
#include "fatal.hpp"
#include "omp.hpp"
#include "places.hpp"
#include "records.hpp"

namespace mrg {

namespace {

// affinity-format-var: G.affinity_format, changed by omp_set_affinity_format (any thread).
std::mutex format_lock;

// The placement of the implicit task whose thread runs t, or none.
Placement placement_of(const Task *t) {
  const Team *team = t->team;
  if (team->placement.empty()) return Placement{};
  return team->placement[static_cast<size_t>(t->thread_num)];
}

// The processors this thread may run on, as ranges: "0-3,6".
std::string thread_affinity() {
  cpu_set_t set;
  std::string out;
  if (sched_getaffinity(0, sizeof set, &set) != 0) return out;
  for (int c = 0; c < CPU_SETSIZE; c++) {
    if (!CPU_ISSET(c, &set)) continue;
    int last = c;
    while (last + 1 < CPU_SETSIZE && CPU_ISSET(last + 1, &set)) last++;
    if (!out.empty()) out += ',';
    out += std::to_string(c);
    if (last > c) out += '-' + std::to_string(last);
    c = last;
  }
  return out;
}

// The fields of the affinity format (OpenMP 5.1, "OMP_AFFINITY_FORMAT"): short and long names.
#define MRG_AFFINITY_FIELDS(X) \
  X('t', "team_num")           \
  X('T', "num_teams")          \
  X('L', "nesting_level")      \
  X('n', "thread_num")         \
  X('N', "num_threads")        \
  X('a', "ancestor_tnum")      \
  X('H', "host")               \
  X('P', "process_id")         \
  X('i', "native_thread_id")   \
  X('A', "thread_affinity")

// The value of field `type` (a short name) for task t.
std::string field(char type, const Task *t) {
  const Team *team = t->team;
  switch (type) {
    case 't':
      return std::to_string(team->team_num);
    case 'T':
      return std::to_string(team->num_teams);
    case 'L':
      return std::to_string(team->level);
    case 'n':
      return std::to_string(t->thread_num);
    case 'N':
      return std::to_string(team->n);
    case 'a':
      return std::to_string(team->level > 0 ? team->ancestor_tid[team->level - 1] : -1);
    case 'H': {
      char host[256] = "";
      gethostname(host, sizeof host - 1);
      return host;
    }
    case 'P':
      return std::to_string(getpid());
    case 'i':
      return std::to_string(gettid());
    default:  // 'A'
      return thread_affinity();
  }
}

// The short name of the field at *s: a letter, or {long_name}; *s moves past it.
char field_type(const char **s) {
  if (**s != '{') {
#define MRG_SHORT(c, name) \
  if (**s == c) return *(*s)++;
    MRG_AFFINITY_FIELDS(MRG_SHORT)
#undef MRG_SHORT
    die("affinity format: no field '%c'", **s);
  }
  const char *end = strchr(*s, '}');
  if (!end) die("affinity format: '{' without '}'");
  std::string name(*s + 1, end);
  *s = end + 1;
#define MRG_LONG(c, long_name) \
  if (name == long_name) return c;
  MRG_AFFINITY_FIELDS(MRG_LONG)
#undef MRG_LONG
  die("affinity format: no field '%s'", name.c_str());
}

// One field `%[0[.]][size]type` at *s (after the %): left-justified by default, `.` right-
// justified, `0.` right-justified with leading zeros, in at least `size` characters.
void format_field(const char **s, const Task *t, std::string *out) {
  bool zeros = **s == '0';
  if (zeros && (*s)[1] != '.') die("affinity format: '0' not followed by '.'");
  if (zeros) ++*s;
  bool right = **s == '.';
  if (right) ++*s;
  size_t size = 0;
  while (**s >= '0' && **s <= '9') size = size * 10 + static_cast<size_t>(*(*s)++ - '0');
  std::string v = field(field_type(s), t);
  if (v.size() < size) {
    std::string pad(size - v.size(), zeros ? '0' : ' ');
    if (zeros && v[0] == '-')
      v = '-' + pad + v.substr(1);  // the zeros after the sign
    else
      v = right ? pad + v : v + pad;
  }
  *out += v;
}

// The line of format fmt (NULL or "": affinity-format-var) for task t.
std::string format_affinity(const char *fmt, const Task *t) {
  std::string var;
  if (!fmt || !*fmt) {
    var = affinity_format();
    fmt = var.c_str();
  }
  std::string out;
  for (const char *s = fmt; *s;) {
    if (*s != '%') {
      out += *s++;
    } else if (s[1] == '%') {
      out += '%';
      s += 2;
    } else {
      s++;
      format_field(&s, t, &out);
    }
  }
  return out;
}

// Copy s into buf (size bytes, cut and terminated); the length s needs, without the NUL.
size_t copy_out(const std::string &s, char *buf, size_t size) {
  if (buf && size > 0) {
    size_t n = std::min(s.size(), size - 1);
    memcpy(buf, s.data(), n);
    buf[n] = '\0';
  }
  return s.size();
}

void print_line(const std::string &line) { fprintf(stderr, "%s\n", line.c_str()); }

// The line this thread displayed last (empty: none yet).
thread_local std::string shown;

}  // namespace

std::string affinity_format() {
  read_environment_once();
  std::lock_guard<std::mutex> lk(format_lock);
  return G.affinity_format;
}

void display_member_affinity(const Task *m) {
  std::string line = format_affinity(nullptr, m);
  if (line == shown) return;
  print_line(line);
  shown = std::move(line);
}

}  // namespace mrg

using namespace mrg;

MRG_EXPORT int omp_get_proc_bind(void) { return current()->icv.bind; }
MRG_EXPORT int omp_get_num_places(void) { return static_cast<int>(places().size()); }
MRG_EXPORT int omp_get_place_num_procs(int place) {
  if (place < 0 || place >= omp_get_num_places()) return 0;
  return static_cast<int>(places()[static_cast<size_t>(place)].size());
}
MRG_EXPORT void omp_get_place_proc_ids(int place, int *ids) {
  if (place < 0 || place >= omp_get_num_places()) return;
  for (int c : places()[static_cast<size_t>(place)]) *ids++ = c;
}
MRG_EXPORT int omp_get_place_num(void) { return placement_of(current()).place; }
MRG_EXPORT int omp_get_partition_num_places(void) { return placement_of(current()).len; }
MRG_EXPORT void omp_get_partition_place_nums(int *nums) {
  Placement p = placement_of(current());
  for (int k = 0; k < p.len; k++) *nums++ = (p.first + k) % omp_get_num_places();
}

MRG_EXPORT void omp_set_affinity_format(const char *format) {
  read_environment_once();
  std::lock_guard<std::mutex> lk(format_lock);
  G.affinity_format = format ? format : "";
}
MRG_EXPORT size_t omp_get_affinity_format(char *buffer, size_t size) {
  return copy_out(affinity_format(), buffer, size);
}
MRG_EXPORT void omp_display_affinity(const char *format) {
  print_line(format_affinity(format, current()));
}
MRG_EXPORT size_t omp_capture_affinity(char *buffer, size_t size, const char *format) {
  return copy_out(format_affinity(format, current()), buffer, size);
}
