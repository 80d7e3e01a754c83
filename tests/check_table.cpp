// check_table.cpp: par_engine_state.dot draws exactly the code's transition table.
//
// Each edge line is `FROM -> TO [label="...", color=C, style=S];` and encodes who makes the
// transition and how in its style and colour:
//   style solid = engine, dashed = notifier; color black = plain, blue = CAS, red = locked.

#include <cstdlib>
#include <fstream>
#include <regex>
#include <set>
#include <string>
#include <tuple>

#include "engine/sleep.hpp"
#include "testutil.h"

using namespace mr::engine;

using Edge = std::tuple<std::string, std::string, std::string, std::string>;

static std::set<Edge> code_edges() {
  std::set<Edge> out;
  for (const Transition &t : kTransitions) {
    out.insert({state_name(t.from), state_name(t.to), t.who == Who::ENGINE ? "engine" : "notifier",
                t.how == How::PLAIN ? "plain"
                : t.how == How::CAS ? "cas"
                                    : "locked"});
  }
  return out;
}

static std::string dot_path() {
  const char *top = std::getenv("top_srcdir");
  return std::string(top ? top : ".") + "/par_engine_state.dot";
}

static std::set<Edge> dot_edges(int *lines) {
  std::ifstream in(dot_path());
  ck_assert_msg(in.good(), "cannot read %s", dot_path().c_str());
  std::regex edge(R"(^\s*([A-Z]+)\s*->\s*([A-Z]+)\s*\[(.*)\]\s*;?\s*$)");
  std::regex color(R"(color\s*=\s*\"?(\w+))"), style(R"(style\s*=\s*\"?(\w+))");
  std::set<Edge> out;
  std::string line;
  *lines = 0;
  while (std::getline(in, line)) {
    std::smatch m, c, s;
    if (!std::regex_match(line, m, edge)) continue;
    std::string attrs = m[3];
    ck_assert_msg(std::regex_search(attrs, c, color) && std::regex_search(attrs, s, style),
                  "edge without color/style: %s", line.c_str());
    std::string how = c[1] == "black"  ? "plain"
                      : c[1] == "blue" ? "cas"
                      : c[1] == "red"  ? "locked"
                                       : "?";
    std::string who = s[1] == "solid" ? "engine" : s[1] == "dashed" ? "notifier" : "?";
    out.insert({m[1], m[2], who, how});
    (*lines)++;
  }
  return out;
}

START_TEST(test_dot_matches_code) {
  int lines = 0;
  std::set<Edge> dot = dot_edges(&lines), code = code_edges();
  for (const Edge &e : code)
    ck_assert_msg(dot.count(e), "the code has %s -> %s (%s, %s) but the .dot file does not",
                  std::get<0>(e).c_str(), std::get<1>(e).c_str(), std::get<2>(e).c_str(),
                  std::get<3>(e).c_str());
  for (const Edge &e : dot)
    ck_assert_msg(code.count(e), "the .dot file has %s -> %s (%s, %s) but the code does not",
                  std::get<0>(e).c_str(), std::get<1>(e).c_str(), std::get<2>(e).c_str(),
                  std::get<3>(e).c_str());
  ck_assert_int_eq(lines, static_cast<int>(code.size()));  // no duplicate edges
}
END_TEST

// The states the code knows are exactly the nodes the file declares.
START_TEST(test_dot_declares_every_state) {
  std::ifstream in(dot_path());
  std::string all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  for (int s = 0; s < kNumStates; s++) {
    std::regex node(std::string(R"((^|\n)\s*)") + state_name(static_cast<State>(s)) + R"(\s*\[)");
    ck_assert_msg(std::regex_search(all, node), "state %s has no node line",
                  state_name(static_cast<State>(s)));
  }
}
END_TEST

int main(void) {
  Suite *s = suite_create("table");
  TCase *tc = mr_tcase("dot", 30);
  tcase_add_test(tc, test_dot_matches_code);
  tcase_add_test(tc, test_dot_declares_every_state);
  suite_add_tcase(s, tc);
  return mr_test_run(s);
}
