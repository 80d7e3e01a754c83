// env.cpp: the environment variables of OpenMP (doc/gomp.md, "Environment"), read into the
// initial ICVs and the process-wide settings. No other file reads the environment; mrengine
// reads its own MRENGINE_OPTIONS.
#include <ctype.h>
#include <dlfcn.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <algorithm>
#include <mutex>

#include "env.hpp"

namespace mrg {

// Never destroyed: threads of ours may still read it while the program exits.
Globals &G = *new Globals;

int num_procs() {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) == 0) return std::max(1, CPU_COUNT(&set));
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  return n > 0 ? static_cast<int>(n) : 1;
}

namespace {

bool env_bool(const char *name, bool *out) {
  const char *s = getenv(name);
  if (!s) return false;
  while (*s == ' ') s++;
  if (strncasecmp(s, "true", 4) == 0)
    *out = true;
  else if (strncasecmp(s, "false", 5) == 0)
    *out = false;
  else
    return false;
  return true;
}

bool env_long(const char *name, long *out) {
  const char *s = getenv(name);
  if (!s || !*s) return false;
  char *end;
  long v = strtol(s, &end, 10);
  while (*end == ' ') end++;
  if (*end) return false;
  *out = v;
  return true;
}

int env_positive(const char *name) {
  const char *s = getenv(name);
  int v = s ? atoi(s) : 0;
  return v > 0 ? v : 0;
}

// OMP_SCHEDULE: [monotonic:|nonmonotonic:]kind[,chunk]
void parse_schedule(Icv *icv) {
  const char *s = getenv("OMP_SCHEDULE");
  if (!s) return;
  while (*s == ' ') s++;
  if (const char *colon = strchr(s, ':')) s = colon + 1;
  int kind;
  size_t len;
  if (strncasecmp(s, "static", 6) == 0)
    kind = SCHED_STATIC, len = 6;
  else if (strncasecmp(s, "dynamic", 7) == 0)
    kind = SCHED_DYNAMIC, len = 7;
  else if (strncasecmp(s, "guided", 6) == 0)
    kind = SCHED_GUIDED, len = 6;
  else if (strncasecmp(s, "auto", 4) == 0)
    kind = SCHED_AUTO, len = 4;
  else
    return;
  s += len;
  int chunk = 0;
  if (*s == ',') chunk = atoi(s + 1);
  icv->sched = kind;
  icv->chunk = chunk > 0 ? chunk : 0;
}

// OMP_NUM_THREADS: a list of team sizes, one per nesting level.
void parse_num_threads() {
  const char *s = getenv("OMP_NUM_THREADS");
  if (!s) return;
  while (*s) {
    char *end;
    long v = strtol(s, &end, 10);
    if (end == s || v < 1) break;
    G.nthreads_list.push_back(static_cast<int>(std::min(v, 1L << 20)));
    s = end;
    if (*s != ',') break;
    s++;
  }
}

// OMP_ALLOCATOR: a predefined allocator by name.
void parse_allocator(Icv *icv) {
  const char *s = getenv("OMP_ALLOCATOR");
  if (!s) return;
  // The predefined allocators by name, numbered as omp_allocator_handle_t numbers them.
  static const char *const names[] = {"omp_default_mem_alloc", "omp_large_cap_mem_alloc",
                                      "omp_const_mem_alloc",   "omp_high_bw_mem_alloc",
                                      "omp_low_lat_mem_alloc", "omp_cgroup_mem_alloc",
                                      "omp_pteam_mem_alloc",   "omp_thread_mem_alloc"};
  while (*s == ' ') s++;
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
    if (strncmp(s, names[i], strlen(names[i])) == 0 && !isalnum(s[strlen(names[i])]) &&
        s[strlen(names[i])] != '_')
      icv->def_allocator = i + 1;
}

// A warning about an environment variable's value, which is then ignored.
void bad_value(const char *name) {
  fprintf(stderr, "mrengine-gomp: invalid value for %s, ignored: '%s'\n", name, getenv(name));
}

const char *skip_spaces(const char *s) {
  while (*s == ' ' || *s == '\t') s++;
  return s;
}

// The word at *s if it is one of `words` (case-insensitive, not followed by a letter or `_`):
// its index, with *s moved past it; else -1.
int match_word(const char **s, const char *const *words, int n) {
  for (int i = 0; i < n; i++) {
    size_t len = strlen(words[i]);
    char next = (*s)[len];
    if (strncasecmp(*s, words[i], len) == 0 && !isalnum(next) && next != '_') {
      *s += len;
      return i;
    }
  }
  return -1;
}

// OMP_PROC_BIND: false, or a list of true, primary (master), close and spread, one per level
// (a list of several, like OMP_NUM_THREADS', allows that many active levels).
void parse_proc_bind() {
  const char *s = getenv("OMP_PROC_BIND");
  if (!s) return;
  static const char *const words[] = {"false", "true", "primary", "close", "spread", "master"};
  std::vector<int> list;
  for (;;) {
    s = skip_spaces(s);
    int w = match_word(&s, words, 6);
    if (w < 0) return bad_value("OMP_PROC_BIND");
    list.push_back(w == 5 ? BIND_PRIMARY : w);
    s = skip_spaces(s);
    if (*s == '\0') break;
    if (*s++ != ',') return bad_value("OMP_PROC_BIND");
  }
  if (list.size() > 1 && std::count(list.begin(), list.end(), BIND_FALSE))
    return bad_value("OMP_PROC_BIND");  // false stands alone
  G.bind_list = list;
}

// A decimal number at *s (moved past it) into *out; false if there is none.
bool number(const char **s, long *out) {
  *s = skip_spaces(*s);
  char *end;
  long v = strtol(*s, &end, 10);
  if (end == *s) return false;
  *out = v;
  *s = skip_spaces(end);
  return true;
}

// An interval `lo[:len[:stride]]` at *s: its numbers, or false when malformed.
bool interval(const char **s, std::vector<long> *out) {
  long lo, len = 1, stride = 1;
  if (!number(s, &lo)) return false;
  if (**s == ':') {
    ++*s;
    if (!number(s, &len) || len < 1) return false;
    if (**s == ':') {
      ++*s;
      if (!number(s, &stride)) return false;
    }
  }
  for (long i = 0; i < len; i++) out->push_back(lo + i * stride);
  return true;
}

// One explicit place `{res,...}` at *s (each res an interval, or `!n` to leave n out).
bool place(const char **s, std::vector<int> *out) {
  *s = skip_spaces(*s);
  if (*(*s)++ != '{') return false;
  std::vector<long> in, out_of;
  do {
    *s = skip_spaces(*s);
    bool excluded = **s == '!';
    if (excluded) ++*s;
    if (!interval(s, excluded ? &out_of : &in)) return false;
  } while (**s == ',' && ++*s);
  if (*(*s)++ != '}') return false;
  for (long p : in)
    if (p >= 0 && p < (1 << 20) && std::find(out_of.begin(), out_of.end(), p) == out_of.end())
      out->push_back(static_cast<int>(p));
  return true;
}

// Explicit places: `place[:count[:stride]]` or `!place`, separated by commas; a count copies
// the place, each copy's processors `stride` (default 1) above the last's.
bool explicit_places(const char *s, std::vector<std::vector<int>> *out) {
  do {
    s = skip_spaces(s);
    bool excluded = *s == '!';
    if (excluded) s++;
    std::vector<int> p;
    if (!place(&s, &p)) return false;
    long count = 1, stride = 1;
    if (!excluded && *s == ':') {
      s++;
      if (!number(&s, &count) || count < 1) return false;
      if (*s == ':' && !(s++, number(&s, &stride))) return false;
    }
    std::sort(p.begin(), p.end());
    p.erase(std::unique(p.begin(), p.end()), p.end());
    if (excluded) {
      std::erase(*out, p);
      continue;
    }
    for (long i = 0; i < count; i++) {
      std::vector<int> copy;
      for (int c : p)
        if (c + i * stride >= 0) copy.push_back(static_cast<int>(c + i * stride));
      out->push_back(copy);
    }
  } while (*s == ',' && ++s);
  return *skip_spaces(s) == '\0';
}

// OMP_PLACES: an abstract name with an optional (count), or explicit places.
void parse_places() {
  const char *s = getenv("OMP_PLACES");
  if (!s) return;
  s = skip_spaces(s);
  static const char *const names[] = {"threads", "cores", "ll_caches", "numa_domains", "sockets"};
  PlacesSpec spec;
  int w = match_word(&s, names, 5);
  if (w >= 0) {
    spec.kind = static_cast<PlacesSpec::Kind>(PlacesSpec::THREADS + w);
    s = skip_spaces(s);
    long count = 0;
    if (*s == '(' && !(s++, number(&s, &count) && count > 0 && *s++ == ')'))
      return bad_value("OMP_PLACES");
    spec.count = static_cast<int>(std::min(count, 1L << 20));
    if (*skip_spaces(s) != '\0') return bad_value("OMP_PLACES");
  } else {
    spec.kind = PlacesSpec::EXPLICIT;
    if (!explicit_places(s, &spec.explicit_)) return bad_value("OMP_PLACES");
  }
  G.places = spec;
}

// OMP_DISPLAY_ENV, OMP_DISPLAY_AFFINITY and OMP_AFFINITY_FORMAT.
void parse_display() {
  if (const char *s = getenv("OMP_DISPLAY_ENV")) {
    s = skip_spaces(s);
    static const char *const words[] = {"false", "true", "verbose"};
    int w = match_word(&s, words, 3);
    if (w < 0 || *skip_spaces(s) != '\0')
      bad_value("OMP_DISPLAY_ENV");
    else
      G.display_env = w;
  }
  bool b;
  if (env_bool("OMP_DISPLAY_AFFINITY", &b)) G.display_affinity = b;
  if (const char *s = getenv("OMP_AFFINITY_FORMAT")) G.affinity_format = s;
}

void read_environment() {
  int procs = num_procs();
  G.procs = procs;
  parse_num_threads();
  G.initial.nthreads = G.nthreads_list.empty() ? procs : G.nthreads_list[0];
  bool b;
  if (env_bool("OMP_DYNAMIC", &b)) G.initial.dyn = b;
  parse_schedule(&G.initial);
  long v;
  // A list of several team sizes (or binding policies) asks for nesting, as deep as supported
  // (a level past the list takes its last entry), as in libgomp; OMP_NESTED is the deprecated
  // switch.
  int &levels = G.initial.max_active_levels;
  parse_proc_bind();
  if (G.nthreads_list.size() > 1 || G.bind_list.size() > 1) levels = 255;
  if (env_bool("OMP_NESTED", &b)) levels = b ? 255 : 1;
  if (env_long("OMP_MAX_ACTIVE_LEVELS", &v) && v >= 0) levels = static_cast<int>(std::min(v, 255L));
  if (env_long("OMP_THREAD_LIMIT", &v) && v > 0)
    G.thread_limit = static_cast<int>(std::min(v, 1L << 20));
  if (env_long("OMP_MAX_TASK_PRIORITY", &v) && v >= 0) G.max_task_priority = static_cast<int>(v);
  parse_allocator(&G.initial);
  if (env_bool("OMP_CANCELLATION", &b)) G.cancel_var = b;
  // A team of one defers its tasks by default when libmrmpi is in the process (linked or
  // preloaded: its symbols are in the global scope before any constructor runs), since a task's
  // blocking MPI call may then wait for a task created after it (doc/mpi.md).
  G.defer_alone = dlsym(RTLD_DEFAULT, "MR_mpi_wait") != nullptr;
  if (env_bool("MRGOMP_DEFER_ALONE", &b)) G.defer_alone = b;
  parse_places();
  if (!G.bind_list.empty())
    G.initial.bind = G.bind_list[0];
  else if (G.places.kind != PlacesSpec::NONE)
    G.initial.bind = BIND_TRUE;  // places without a policy: bound, as OpenMP lets us choose
  parse_display();
  if (const char *s = getenv("OMP_WAIT_POLICY")) {
    if (strcasecmp(s, "active") == 0)
      G.wait_policy = 1;
    else if (strcasecmp(s, "passive") == 0)
      G.wait_policy = 0;
  }
}

std::once_flag env_once;

}  // namespace

void read_environment_once() { std::call_once(env_once, read_environment); }

// OMP_STACKSIZE: a number with an optional B, K, M or G suffix (K when none), in bytes.
size_t env_stacksize() {
  const char *s = getenv("OMP_STACKSIZE");
  if (!s) return 0;
  char *end;
  unsigned long long v = strtoull(s, &end, 10);
  while (*end == ' ') end++;
  switch (*end) {
    case 'b':
    case 'B':
      break;
    case 'm':
    case 'M':
      v <<= 20;
      break;
    case 'g':
    case 'G':
      v <<= 30;
      break;
    default:
      v <<= 10;
      break;
  }
  return static_cast<size_t>(v);
}

std::atomic<int> nteams_var{env_positive("OMP_NUM_TEAMS")};
std::atomic<int> teams_thread_limit_var{env_positive("OMP_TEAMS_THREAD_LIMIT")};

}  // namespace mrg
