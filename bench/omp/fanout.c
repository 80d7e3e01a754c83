/* fanout.c: the 1,000 x 1,000 fan-out: one thread creates, in each of `batches` taskgroups,
 * `tasks` tasks that each do one atomic increment, and the taskgroup's end waits for them.
 * The tasks do nothing else, so the figure (ns per task) is the runtime's cost of creating,
 * scheduling and completing a task plus its share of the wait, with the other threads
 * stealing from a single creator.
 *
 *   fanout [batches] [tasks]   1,000 x 1,000 by default; the counter must end at their product */
#include "ompbench.h"

int main(int argc, char **argv) {
  long batches = ob_arg(argc, argv, 1, 1000, 1, 100000000);
  long tasks = ob_arg(argc, argv, 2, 1000, 1, 100000000);
  long counter = 0;
  long short_batches = 0;
  int team = ob_warm_up();
  double t0 = ob_now();
#pragma omp parallel
#pragma omp single
  for (long b = 0; b < batches; b++) {
    long before;
#pragma omp atomic read
    before = counter;
#pragma omp taskgroup
    for (long i = 0; i < tasks; i++) {
#pragma omp task shared(counter)
      {
#pragma omp atomic
        counter++;
      }
    }
    /* The taskgroup's end must have waited for all of this batch's tasks. */
    long after;
#pragma omp atomic read
    after = counter;
    if (after - before != tasks) short_batches++;
  }
  double t = ob_now() - t0;
  long expect = batches * tasks;
  int ok = counter == expect && short_batches == 0;
  char size[64], detail[128];
  snprintf(size, sizeof size, "%ldx%ld", batches, tasks);
  snprintf(detail, sizeof detail, "count=%ld expected=%ld short_batches=%ld", counter, expect,
           short_batches);
  ob_report("fanout", size, team, t, t * 1e9 / (double)expect, "ns/task", ok, detail);
  return ok ? 0 : 1;
}
