/* knapsack.c: 0/1 knapsack by branch and bound, one task per branch (take the item, leave it),
 * with no cutoff. A branch is pruned when its value plus the remaining capacity filled at the
 * item's value per unit of weight (the best ratio left: the items are sorted by it) cannot beat
 * the best value found so far. How much is pruned depends on the order the branches run in:
 * depth-first finds good values early and prunes most of the tree, breadth-first explores far
 * more of it; a runtime that runs a one-thread team's tasks at once searches depth-first. The
 * kernel reports the nodes it visited beside the time.
 *
 *   knapsack [n]    n = 36 items by default (1 <= n <= 60); the best value is checked against
 *                   dynamic programming over the capacities. */
#include "ompbench.h"

enum { kMaxItems = 60 };
struct item {
  int weight, value;
};
static struct item items[kMaxItems];
static int n_items;
static int best;     /* the best value found so far (atomic max) */
static long visited; /* nodes of the search (atomic add) */

/* Raise best to v unless it is already at least v. */
static void offer(int v) {
  int cur = __atomic_load_n(&best, __ATOMIC_RELAXED);
  while (v > cur &&
         !__atomic_compare_exchange_n(&best, &cur, v, 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {}
}

static void search(int i, int cap, int value) {
  __atomic_fetch_add(&visited, 1, __ATOMIC_RELAXED);
  offer(value);
  if (i == n_items) return;
  /* The bound: no item left is worth more per unit of weight than item i. */
  if (value + (double)cap * items[i].value / items[i].weight <=
      __atomic_load_n(&best, __ATOMIC_RELAXED))
    return;
  if (items[i].weight <= cap) {
#pragma omp task
    search(i + 1, cap - items[i].weight, value + items[i].value);
  }
#pragma omp task
  search(i + 1, cap, value);
#pragma omp taskwait
}

static int by_ratio(const void *a, const void *b) {
  const struct item *x = a, *y = b;
  long l = (long)y->value * x->weight, r = (long)x->value * y->weight;
  return (l > r) - (l < r);
}

/* The best value by dynamic programming over the capacities 0..cap. */
static int exact(int cap) {
  int *dp = calloc((size_t)cap + 1, sizeof *dp);
  if (!dp) exit(2);
  for (int i = 0; i < n_items; i++)
    for (int c = cap; c >= items[i].weight; c--)
      if (dp[c - items[i].weight] + items[i].value > dp[c])
        dp[c] = dp[c - items[i].weight] + items[i].value;
  int r = dp[cap];
  free(dp);
  return r;
}

int main(int argc, char **argv) {
  n_items = (int)ob_arg(argc, argv, 1, 36, 1, kMaxItems);
  /* Items from a fixed linear congruential sequence: weights and values 10..109, weakly
   * correlated, so that the bound prunes but not trivially. */
  unsigned s = 12345;
  int total = 0;
  for (int i = 0; i < n_items; i++) {
    s = s * 1103515245u + 12345u;
    items[i].weight = 10 + (int)((s >> 16) % 100);
    s = s * 1103515245u + 12345u;
    items[i].value = items[i].weight + (int)((s >> 16) % 20) - 10 + 10;
    total += items[i].weight;
  }
  qsort(items, (size_t)n_items, sizeof items[0], by_ratio);
  int cap = total / 2;
  int team = ob_warm_up();
  double t0 = ob_now();
#pragma omp parallel
#pragma omp single
  search(0, cap, 0);
  double t = ob_now() - t0;
  int want = exact(cap);
  char size[32], detail[96];
  snprintf(size, sizeof size, "%d", n_items);
  snprintf(detail, sizeof detail, "best=%d expected=%d nodes=%ld", best, want, visited);
  ob_report("knapsack", size, team, t, t, "s", best == want, detail);
  return best == want ? 0 : 1;
}
