/* uts.c: the Unbalanced Tree Search benchmark's binomial trees (Olivier et al., LCPC 2006;
 * the definition the project follows is ../shared/UTS.md): an implicit tree whose shape comes
 * from a splittable SHA-1 stream (nettle's SHA-1), so a node's children are known only when it
 * is visited. Every child is a task, which computes its own state and visits its subtree; the
 * parent joins them with a taskwait and adds up their counts.
 *
 * T3, the default, is binomial: 2000 children at the root, then 8 children with probability
 * 0.124875 and none otherwise, so the tree is 1572 levels deep and narrow, and work must keep
 * moving between threads.
 *
 *   uts                           T3, checked against the published counts
 *   uts -b B -q Q -m M -r R       another binomial tree, checked against a sequential search
 *                                 (which is not timed) */
#include "ompbench.h"

#include <math.h>
#include <nettle/sha1.h>
#include <stdint.h>

struct params {
  double b0; /* children of the root (floor; the cap is the ceiling) */
  double q;  /* probability that another node has m children */
  int m;
  int seed;
};
static struct params P = {2000.0, 0.124875, 8, 42};

struct node {
  int height;
  uint8_t state[SHA1_DIGEST_SIZE];
};

struct counts {
  long nodes, leaves;
  int depth;
};

static void put_be32(uint8_t *p, uint32_t v) {
  p[0] = (uint8_t)(v >> 24);
  p[1] = (uint8_t)(v >> 16);
  p[2] = (uint8_t)(v >> 8);
  p[3] = (uint8_t)v;
}

static void sha1_of(const uint8_t *in, size_t len, uint8_t *out) {
  struct sha1_ctx c;
  sha1_init(&c);
  sha1_update(&c, len, in);
  sha1_digest(&c, SHA1_DIGEST_SIZE, out);
}

/* The root's state: SHA-1 of 16 zero bytes and the seed, big-endian. */
static void make_root(struct node *r) {
  uint8_t in[20] = {0};
  put_be32(in + 16, (uint32_t)P.seed);
  r->height = 0;
  sha1_of(in, sizeof in, r->state);
}

/* Child i's state: SHA-1 of the parent's state followed by i, big-endian. */
static void make_child(const struct node *parent, int i, struct node *c) {
  uint8_t in[SHA1_DIGEST_SIZE + 4];
  memcpy(in, parent->state, SHA1_DIGEST_SIZE);
  put_be32(in + SHA1_DIGEST_SIZE, (uint32_t)i);
  c->height = parent->height + 1;
  sha1_of(in, sizeof in, c->state);
}

static int num_children(const struct node *n) {
  if (n->height == 0) {
    int k = (int)floor(P.b0), cap = (int)ceil(P.b0);
    return k < cap ? k : cap;
  }
  const uint8_t *s = n->state;
  uint32_t v = ((uint32_t)s[16] << 24) | ((uint32_t)s[17] << 16) | ((uint32_t)s[18] << 8) | s[19];
  double prob = (double)(v & 0x7FFFFFFFu) / 2147483648.0;
  int k = prob < P.q ? P.m : 0;
  return k > 100 ? 100 : k;
}

static void add(struct counts *a, const struct counts *b) {
  a->nodes += b->nodes;
  a->leaves += b->leaves;
  if (b->depth > a->depth) a->depth = b->depth;
}

static struct counts visit_task(const struct node *n);

/* Child i of parent, built and searched inside its task (so the SHA-1 work is the task's). */
static struct counts child_task(const struct node *parent, int i) {
  struct node c;
  make_child(parent, i, &c);
  return visit_task(&c);
}

static struct counts visit_task(const struct node *n) {
  int k = num_children(n);
  struct counts self = {1, k == 0, n->height};
  if (k == 0) return self;
  /* The children's counts live in this frame (the root's 2000 on the heap), which outlives
   * the tasks because of the taskwait. */
  struct counts small[8];
  struct counts *sub = k <= 8 ? small : malloc(sizeof *sub * (size_t)k);
  if (sub == NULL) abort();
  for (int i = 0; i < k; i++) {
    struct counts *slot = &sub[i];
#pragma omp task firstprivate(slot, i, n)
    *slot = child_task(n, i);
  }
#pragma omp taskwait
  for (int i = 0; i < k; i++) add(&self, &sub[i]);
  if (sub != small) free(sub);
  return self;
}

static struct counts visit_seq(const struct node *n) {
  int k = num_children(n);
  struct counts self = {1, k == 0, n->height};
  for (int i = 0; i < k; i++) {
    struct node c;
    make_child(n, i, &c);
    struct counts s = visit_seq(&c);
    add(&self, &s);
  }
  return self;
}

static double arg_double(char **argv, int i, double lo, double hi) {
  char *end = NULL;
  double v = strtod(argv[i], &end);
  if (*argv[i] == '\0' || *end != '\0' || !(v >= lo && v <= hi)) {
    fprintf(stderr, "%s: bad value '%s' for %s\n", argv[0], argv[i], argv[i - 1]);
    exit(2);
  }
  return v;
}

int main(int argc, char **argv) {
  int custom = 0;
  for (int i = 1; i < argc; i += 2) {
    if (i + 1 >= argc || strlen(argv[i]) != 2 || argv[i][0] != '-') {
      fprintf(stderr,
              "usage: %s [-b b0] [-q q] [-m m] [-r seed]  (binomial trees; T3 by default)\n",
              argv[0]);
      return 2;
    }
    custom = 1;
    switch (argv[i][1]) {
      case 'b':
        P.b0 = arg_double(argv, i + 1, 0, 1e6);
        break;
      case 'q':
        P.q = arg_double(argv, i + 1, 0, 1);
        break;
      case 'm':
        P.m = (int)ob_arg(argc, argv, i + 1, 0, 0, 100);
        break;
      case 'r':
        P.seed = (int)ob_arg(argc, argv, i + 1, 0, 0, 2147483647);
        break;
      default:
        fprintf(stderr, "%s: unknown flag %s\n", argv[0], argv[i]);
        return 2;
    }
  }
  /* T3's published counts (../shared/UTS.md); another tree is checked against the sequential
   * search. */
  struct counts expect = {4112897, 3599034, 1572};
  if (custom) {
    struct node r;
    make_root(&r);
    expect = visit_seq(&r);
  }
  int team = ob_warm_up();
  struct counts got = {0, 0, 0};
  double t0 = ob_now();
#pragma omp parallel
#pragma omp single
  {
    struct node r;
    make_root(&r);
    got = visit_task(&r);
  }
  double t = ob_now() - t0;
  int ok = got.nodes == expect.nodes && got.leaves == expect.leaves && got.depth == expect.depth;
  char size[96], detail[160];
  if (custom)
    snprintf(size, sizeof size, "b%g/q%g/m%d/r%d", P.b0, P.q, P.m, P.seed);
  else
    snprintf(size, sizeof size, "T3");
  snprintf(detail, sizeof detail, "nodes=%ld depth=%d leaves=%ld expected=%ld/%d/%ld", got.nodes,
           got.depth, got.leaves, expect.nodes, expect.depth, expect.leaves);
  ob_report("uts", size, team, t, t, "s", ok, detail);
  return ok ? 0 : 1;
}
