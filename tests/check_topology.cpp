// check_topology.cpp: pinning plans, victim tiers and the wake choice, on synthetic topologies.
//
// These compute plans and orders from hwloc_topology_set_synthetic descriptions; they do not
// need the machine to have those cores. Expected values come from the arithmetic of each
// description (which PU is on which core and package), not from hwloc.

#include <cstdint>
#include <string>
#include <vector>

#include "engine/params.hpp"
#include "engine/topology.hpp"
#include "testutil.h"

using namespace mr::engine;

namespace {

struct Synthetic {
  hwloc_topology_t t = nullptr;
  explicit Synthetic(const char *desc) {
    ck_assert_int_eq(hwloc_topology_init(&t), 0);
    ck_assert_msg(hwloc_topology_set_synthetic(t, desc) == 0, "bad synthetic topology %s", desc);
    ck_assert_int_eq(hwloc_topology_load(t), 0);
  }
  ~Synthetic() { hwloc_topology_destroy(t); }
};

std::string str(const std::vector<int> &v) {
  std::string s = "[";
  for (std::size_t i = 0; i < v.size(); i++) s += (i ? " " : "") + std::to_string(v[i]);
  return s + "]";
}

void expect_plan(const std::vector<int> &got, const std::vector<int> &want) {
  ck_assert_msg(got == want, "plan %s, expected %s", str(got).c_str(), str(want).c_str());
}

// The order the documented rule gives: tier by tier, within a tier in id order after e.
template <class Tier>
topo::Order expected_order(int e, int n, Tier tier) {
  topo::Order o;
  for (int k = 0; k < topo::kTiers; k++) {
    for (int j = 1; j < n; j++)
      if (tier((e + j) % n) == k) o.victims.push_back((e + j) % n);
    o.tier_end[k] = static_cast<int>(o.victims.size());
  }
  return o;
}

void expect_order(const topo::Order &got, const topo::Order &want, int e) {
  ck_assert_msg(got.victims == want.victims, "engine %d: victims %s, expected %s", e,
                str(got.victims).c_str(), str(want.victims).c_str());
  for (int k = 0; k < topo::kTiers; k++)
    ck_assert_msg(got.tier_end[k] == want.tier_end[k], "engine %d: tier %d ends at %d, not %d", e,
                  k, got.tier_end[k], want.tier_end[k]);
}

// "pack:2 l3:1 core:4 pu:2": PU p is on core p/2 and package p/8 (one L3 per package).
const char *kSmt = "pack:2 l3:1 core:4 pu:2";
// "pack:4 numa:1 core:8 pu:1": PU p is its own core, on package and NUMA node p/8.
const char *kNuma = "pack:4 numa:1 core:8 pu:1";

}  // namespace

START_TEST(test_plan_cores_spreads_before_siblings) {
  Synthetic s(kSmt);
  std::string w;
  // One PU per core first, in core order; then the second PU of each core.
  expect_plan(topo::plan_pinning(s.t, nullptr, 8, Pinning::CORES, &w), {0, 2, 4, 6, 8, 10, 12, 14});
  expect_plan(topo::plan_pinning(s.t, nullptr, 10, Pinning::CORES, &w),
              {0, 2, 4, 6, 8, 10, 12, 14, 1, 3});
  std::vector<int> all = topo::plan_pinning(s.t, nullptr, 16, Pinning::CORES, &w);
  ck_assert_msg(w.empty(), "unexpected warning: %s", w.c_str());
  for (int i = 0; i < 16; i++) ck_assert_int_eq(all[i], i < 8 ? 2 * i : 2 * (i - 8) + 1);
}
END_TEST

START_TEST(test_plan_pus_packs_siblings) {
  Synthetic s(kSmt);
  std::string w;
  expect_plan(topo::plan_pinning(s.t, nullptr, 5, Pinning::PUS, &w), {0, 1, 2, 3, 4});
  Synthetic n(kNuma);
  std::vector<int> p = topo::plan_pinning(n.t, nullptr, 32, Pinning::PUS, &w);
  for (int i = 0; i < 32; i++) ck_assert_int_eq(p[i], i);
  expect_plan(topo::plan_pinning(n.t, nullptr, 3, Pinning::CORES, &w), {0, 1, 2});
  ck_assert(w.empty());
}
END_TEST

START_TEST(test_plan_none_and_too_many) {
  Synthetic s(kSmt);
  std::string w;
  expect_plan(topo::plan_pinning(s.t, nullptr, 3, Pinning::NONE, &w), {-1, -1, -1});
  ck_assert(w.empty());
  for (Pinning m : {Pinning::CORES, Pinning::PUS}) {
    w.clear();
    std::vector<int> p = topo::plan_pinning(s.t, nullptr, 17, m, &w);
    ck_assert_int_eq(static_cast<int>(p.size()), 17);
    for (int x : p) ck_assert_int_eq(x, -1);
    ck_assert_msg(w.find("17 engines but only 16 processing units") != std::string::npos,
                  "warning: %s", w.c_str());
  }
}
END_TEST

// Only the PUs the process inherited are used.
START_TEST(test_plan_respects_allowed_cpuset) {
  Synthetic s(kSmt);
  hwloc_bitmap_t allowed = hwloc_bitmap_alloc();
  for (int pu : {1, 2, 3, 8}) hwloc_bitmap_set(allowed, static_cast<unsigned>(pu));
  std::string w;
  // Cores 0, 1 and 4 have allowed PUs (1; 2 and 3; 8): first one each, then core 1's second.
  expect_plan(topo::plan_pinning(s.t, allowed, 3, Pinning::CORES, &w), {1, 2, 8});
  expect_plan(topo::plan_pinning(s.t, allowed, 4, Pinning::CORES, &w), {1, 2, 8, 3});
  expect_plan(topo::plan_pinning(s.t, allowed, 4, Pinning::PUS, &w), {1, 2, 3, 8});
  ck_assert(w.empty());
  expect_plan(topo::plan_pinning(s.t, allowed, 5, Pinning::CORES, &w), {-1, -1, -1, -1, -1});
  ck_assert(!w.empty());
  hwloc_bitmap_free(allowed);
}
END_TEST

START_TEST(test_tiers_smt) {
  Synthetic s(kSmt);
  for (Pinning m : {Pinning::CORES, Pinning::PUS}) {
    for (int n : {2, 5, 8, 16}) {
      std::string w;
      std::vector<int> plan = topo::plan_pinning(s.t, nullptr, n, m, &w);
      std::vector<topo::Order> orders = topo::steal_orders(s.t, plan);
      for (int e = 0; e < n; e++) {
        int p = plan[e];
        auto tier = [&](int v) {
          int q = plan[v];
          return q / 2 == p / 2 ? 0 : q / 8 == p / 8 ? 1 : 2;
        };
        expect_order(orders[e], expected_order(e, n, tier), e);
      }
    }
  }
  // Written out for one engine: 16 engines spread over cores, engine 0 on PU 0.
  std::string w;
  std::vector<topo::Order> o =
      topo::steal_orders(s.t, topo::plan_pinning(s.t, nullptr, 16, Pinning::CORES, &w));
  expect_order(o[0], topo::Order{{8, 1, 2, 3, 9, 10, 11, 4, 5, 6, 7, 12, 13, 14, 15}, {1, 7, 15}},
               0);
}
END_TEST

START_TEST(test_tiers_numa) {
  Synthetic s(kNuma);
  std::string w;
  for (int n : {4, 9, 32}) {
    std::vector<int> plan = topo::plan_pinning(s.t, nullptr, n, Pinning::PUS, &w);
    std::vector<topo::Order> orders = topo::steal_orders(s.t, plan);
    for (int e = 0; e < n; e++) {
      auto tier = [&](int v) { return plan[v] / 8 == plan[e] / 8 ? 1 : 2; };
      expect_order(orders[e], expected_order(e, n, tier), e);
    }
  }
}
END_TEST

// Unpinned engines have no known place: one tier, the ring after the engine.
START_TEST(test_tiers_unpinned) {
  std::vector<topo::Order> o = topo::steal_orders(nullptr, {-1, -1, -1, -1});
  expect_order(o[2], topo::Order{{3, 0, 1}, {0, 0, 3}}, 2);
  topo::Order any = topo::any_order(3);
  expect_order(any, topo::Order{{0, 1, 2}, {3, 3, 3}}, -1);
}
END_TEST

// Within a tier the sleeper woken first is the one that fell asleep last; repeated calls walk
// the sleepers in that order and skip engines that are awake.
START_TEST(test_latest_sleeper_is_lifo) {
  topo::Order o{{1, 2, 3, 4, 5}, {2, 5, 5}};
  bool asleep[6] = {false, true, true, true, false, true};
  std::uint64_t stamp[6] = {0, 7, 9, 4, 12, 8};
  auto sleeping = [&](int v) { return asleep[v]; };
  auto st = [&](int v) { return stamp[v]; };
  // tier 0 = {1, 2}: 2 (stamp 9) then 1 (7), then none.
  ck_assert_int_eq(topo::latest_sleeper(o, 0, 2, UINT64_MAX, sleeping, st), 2);
  ck_assert_int_eq(topo::latest_sleeper(o, 0, 2, 9, sleeping, st), 1);
  ck_assert_int_eq(topo::latest_sleeper(o, 0, 2, 7, sleeping, st), -1);
  // tier 1 = {3, 4, 5}: 4 is awake (stamp 12 ignored): 5 (8) then 3 (4).
  ck_assert_int_eq(topo::latest_sleeper(o, 2, 5, UINT64_MAX, sleeping, st), 5);
  ck_assert_int_eq(topo::latest_sleeper(o, 2, 5, 8, sleeping, st), 3);
  ck_assert_int_eq(topo::latest_sleeper(o, 2, 5, 4, sleeping, st), -1);
}
END_TEST

int main() {
  Suite *s = suite_create("topology");
  TCase *tc = mr_tcase("plans and orders", 30);
  tcase_add_test(tc, test_plan_cores_spreads_before_siblings);
  tcase_add_test(tc, test_plan_pus_packs_siblings);
  tcase_add_test(tc, test_plan_none_and_too_many);
  tcase_add_test(tc, test_plan_respects_allowed_cpuset);
  tcase_add_test(tc, test_tiers_smt);
  tcase_add_test(tc, test_tiers_numa);
  tcase_add_test(tc, test_tiers_unpinned);
  tcase_add_test(tc, test_latest_sleeper_is_lifo);
  suite_add_tcase(s, tc);
  return mr_test_run(s);
}
