// env.cpp: the environment variables of OpenMP (doc/gomp.md, "Environment"), read into the
// initial ICVs and the process-wide settings. No other file reads the environment; mrengine
// reads its own MRENGINE_OPTIONS.
#include <ctype.h>
#include <sched.h>
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

void read_environment() {
  int procs = num_procs();
  parse_num_threads();
  G.initial.nthreads = G.nthreads_list.empty() ? procs : G.nthreads_list[0];
  bool b;
  if (env_bool("OMP_DYNAMIC", &b)) G.initial.dyn = b;
  parse_schedule(&G.initial);
  long v;
  // A list of several team sizes asks for nesting; OMP_NESTED is the deprecated switch.
  int &levels = G.initial.max_active_levels;
  if (G.nthreads_list.size() > 1) levels = static_cast<int>(G.nthreads_list.size());
  if (env_bool("OMP_NESTED", &b)) levels = b ? 255 : 1;
  if (env_long("OMP_MAX_ACTIVE_LEVELS", &v) && v >= 0) levels = static_cast<int>(std::min(v, 255L));
  if (env_long("OMP_THREAD_LIMIT", &v) && v > 0)
    G.thread_limit = static_cast<int>(std::min(v, 1L << 20));
  if (env_long("OMP_MAX_TASK_PRIORITY", &v) && v >= 0) G.max_task_priority = static_cast<int>(v);
  parse_allocator(&G.initial);
  if (env_bool("OMP_CANCELLATION", &b)) G.cancel_var = b;
  if (env_bool("MRGOMP_DEFER_ALONE", &b)) G.defer_alone = b;
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
