// display_env.cpp: the ICVs in the format of OMP_DISPLAY_ENV (OpenMP 5.1, "OMP_DISPLAY_ENV"),
// printed on stderr when the library is loaded (OMP_DISPLAY_ENV=true or verbose) and by
// omp_display_env. Verbose adds mrengine's engine count.
#include <stdio.h>

#include <string>

#include "affinity.hpp"
#include "current.hpp"
#include "env.hpp"
#include "export.hpp"
#include "mrengine.h"
#include "omp.hpp"
#include "places.hpp"
#include "records.hpp"

namespace mrg {

namespace {

// A place as OMP_PLACES writes it: runs of consecutive processors as first:length.
std::string place_text(const std::vector<int> &procs) {
  std::string out = "{";
  for (size_t i = 0; i < procs.size();) {
    size_t j = i;
    while (j + 1 < procs.size() && procs[j + 1] == procs[j] + 1) j++;
    if (i) out += ',';
    out += std::to_string(procs[i]);
    if (j > i) out += ':' + std::to_string(j - i + 1);
    i = j + 1;
  }
  return out + "}";
}

std::string places_text() {
  std::string out;
  for (const auto &p : places()) out += (out.empty() ? "" : ",") + place_text(p);
  return out;
}

// A list ICV as its environment variable writes it: this task's value, then the list's
// entries for the deeper levels.
template <class Name>
std::string list_text(int first, const std::vector<int> &list, int level, Name name) {
  std::string out = name(first);
  for (size_t i = static_cast<size_t>(level) + 1; i < list.size(); i++) out += "," + name(list[i]);
  return out;
}

std::string bind_name(int b) {
  static const char *const names[] = {"FALSE", "TRUE", "PRIMARY", "CLOSE", "SPREAD"};
  return names[b];
}

std::string sched_text(const Icv &icv) {
  static const char *const kinds[] = {"RUNTIME", "STATIC", "DYNAMIC", "GUIDED", "AUTO"};
  std::string out = kinds[icv.sched];
  if (icv.chunk > 0) out += "," + std::to_string(icv.chunk);
  return out;
}

const char *truth(bool b) { return b ? "TRUE" : "FALSE"; }

void line(const char *name, const std::string &value) {
  fprintf(stderr, "  %s = '%s'\n", name, value.c_str());
}

// The display, for a task at nesting level `level` with ICVs icv.
void display(const Icv &icv, int level, bool verbose) {
  auto num = [](int v) { return std::to_string(v); };
  fprintf(stderr, "\nOPENMP DISPLAY ENVIRONMENT BEGIN\n");
  line("_OPENMP", "201511");
  line("OMP_DYNAMIC", truth(icv.dyn));
  line("OMP_NESTED", truth(icv.max_active_levels > 1));
  line("OMP_NUM_THREADS", list_text(icv.nthreads, G.nthreads_list, level, num));
  line("OMP_SCHEDULE", sched_text(icv));
  line("OMP_PROC_BIND", list_text(icv.bind, G.bind_list, level, bind_name));
  line("OMP_PLACES", places_text());
  line("OMP_STACKSIZE", num(static_cast<int>(env_stacksize())));
  line("OMP_WAIT_POLICY", G.wait_policy == 1 ? "ACTIVE" : "PASSIVE");
  line("OMP_THREAD_LIMIT", num(G.thread_limit));
  line("OMP_MAX_ACTIVE_LEVELS", num(icv.max_active_levels));
  // relaxed: values of their own, with no data published through them (env.hpp).
  line("OMP_NUM_TEAMS", num(nteams_var.load(std::memory_order_relaxed)));
  // relaxed: as above.
  line("OMP_TEAMS_THREAD_LIMIT", num(teams_thread_limit_var.load(std::memory_order_relaxed)));
  line("OMP_CANCELLATION", truth(G.cancel_var));
  line("OMP_DEFAULT_DEVICE", "0");
  line("OMP_MAX_TASK_PRIORITY", num(G.max_task_priority));
  line("OMP_DISPLAY_AFFINITY", truth(G.display_affinity));
  line("OMP_AFFINITY_FORMAT", affinity_format());
  if (verbose) line("MRENGINE_ENGINES", num(MR_num_engines()));
  fprintf(stderr, "OPENMP DISPLAY ENVIRONMENT END\n");
}

// OMP_DISPLAY_ENV: the initial ICVs when the library is loaded. The static objects of the
// library are made in the order of its sources in gomp/local.mk (the linker keeps the order
// of their initialisers), where env.cpp, which makes G, comes before this file.
bool display_at_load() {
  read_environment_once();
  if (G.display_env) display(G.initial, 0, G.display_env == 2);
  return true;
}
[[maybe_unused]] const bool displayed_at_load = display_at_load();

}  // namespace

}  // namespace mrg

using namespace mrg;

MRG_EXPORT void omp_display_env(int verbose) {
  Task *t = current();
  display(t->icv, t->team->level, verbose != 0);
}
