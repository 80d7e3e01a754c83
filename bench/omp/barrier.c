/* barrier.c: many barriers in one parallel region: the region starts once, then the team meets
 * `rounds` times, so the figure (ns per barrier) is the runtime's cost of one barrier round trip.
 *
 * Each phase is checked, so that a barrier that let a thread through early is seen: before
 * barrier r every member adds one to the phase's counter, and after it every member reads the
 * counter and must find the whole team there. The counters are in three slots used in turn,
 * since a slot can be cleared for reuse only once every member has read it (two barriers later:
 * the slot of phase r+2 is cleared in phase r+1, after the barrier that ends phase r's reads).
 *
 *   barrier [rounds]   100,000 barriers by default */
#include "ompbench.h"

int main(int argc, char **argv) {
  long rounds = ob_arg(argc, argv, 1, 100000, 1, 1000000000);
  long count[3] = {0, 0, 0};
  long short_phases = 0;
  int team = ob_warm_up();
  double t0 = ob_now();
#pragma omp parallel shared(count, short_phases)
  {
    int n = omp_get_num_threads();
    long mine_short = 0;
    for (long r = 0; r < rounds; r++) {
#pragma omp atomic
      count[r % 3]++;
      /* One member clears the slot of phase r+1 ahead of its use: its last readers (phase
       * r-2's) read it before the barrier ending phase r-1, and its next writers wait for the
       * barrier below. */
#pragma omp masked
      {
#pragma omp atomic write
        count[(r + 1) % 3] = 0;
      }
#pragma omp barrier
      long seen;
#pragma omp atomic read
      seen = count[r % 3];
      if (seen != n) mine_short++;
    }
#pragma omp atomic
    short_phases += mine_short;
  }
  double t = ob_now() - t0;
  int ok = short_phases == 0;
  char size[32], detail[96];
  snprintf(size, sizeof size, "%ld", rounds);
  snprintf(detail, sizeof detail, "short_phases=%ld", short_phases);
  ob_report("barrier", size, team, t, t * 1e9 / (double)rounds, "ns/barrier", ok, detail);
  return ok ? 0 : 1;
}
