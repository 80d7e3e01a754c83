/* affinity.c: what a program sees of places and binding, printed in a form that does not
 * depend on the runtime's thread ids or timing, so that check-affinity.sh can compare libgomp's
 * output with ours line for line (after sorting: the threads print in any order). Each thread
 * of a region, and of a nested region inside it, prints its number, place, partition, the
 * processors the kernel lets it run on (sched_getaffinity) and its omp_capture_affinity line.
 * `affinity display` runs three regions for OMP_DISPLAY_AFFINITY's lines. */
#define _GNU_SOURCE
#include <omp.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>

/* The processors this thread may run on, as a list: "0 1". */
static void cpus(char *out, size_t size) {
  cpu_set_t set;
  out[0] = '\0';
  if (sched_getaffinity(0, sizeof set, &set) != 0) return;
  for (int c = 0; c < CPU_SETSIZE; c++)
    if (CPU_ISSET(c, &set)) snprintf(out + strlen(out), size - strlen(out), " %d", c);
}

static void report(const char *where) {
  char mask[256], line[256], part[128] = "";
  int nums[64];
  int n = omp_get_partition_num_places();
  omp_get_partition_place_nums(nums);
  for (int i = 0; i < n && i < 64; i++) snprintf(part + strlen(part), 8, " %d", nums[i]);
  cpus(mask, sizeof mask);
  omp_capture_affinity(line, sizeof line, "%L/%a/%n/%N %0.3n %.4N|%A");
#pragma omp critical
  printf("%s level=%d thread=%d bind=%d place=%d partition=[%s ] cpus=[%s ] capture=%s\n", where,
         omp_get_level(), omp_get_thread_num(), omp_get_proc_bind(), omp_get_place_num(), part,
         mask, line);
}

/* OMP_DISPLAY_AFFINITY's lines: each thread's at its first region, none for a region that
 * changes nothing a line shows, new ones when the team changes. */
static volatile int sink; /* (a region with an empty body would be left out) */
static int display(void) {
  for (int r = 0; r < 2; r++) {
#pragma omp parallel
    sink = omp_get_thread_num();
  }
#pragma omp parallel num_threads(3) proc_bind(primary)
  sink = omp_get_thread_num();
  return 0;
}

int main(int argc, char **argv) {
  if (argc > 1 && strcmp(argv[1], "display") == 0) return display();
  int np = omp_get_num_places();
  printf("places=%d bind=%d\n", np, omp_get_proc_bind());
  for (int p = 0; p < np; p++) {
    int ids[256];
    omp_get_place_proc_ids(p, ids);
    printf("place %d:", p);
    for (int i = 0; i < omp_get_place_num_procs(p); i++) printf(" %d", ids[i]);
    printf("\n");
  }
  report("initial");
#pragma omp parallel
  {
    report("outer");
#pragma omp parallel num_threads(2)
    report("inner");
  }
#pragma omp parallel proc_bind(primary) num_threads(3)
  report("primary");
  char format[8];
  size_t len = omp_get_affinity_format(format, sizeof format);
  printf("format %zu %s\n", len, format);
  return 0;
}
