// quote.cpp: printable input in messages (quote.hpp).
#include "config.h"

#include "quote.hpp"

#include <cstdio>

namespace mr::engine {

std::string quote(const std::string &w) {
  std::string q = "'";
  for (std::size_t i = 0; i < w.size() && i < kQuoteMax; i++) {
    unsigned char c = static_cast<unsigned char>(w[i]);
    if (c < 0x20 || c >= 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      q += buf;
    } else {
      q.push_back(static_cast<char>(c));
    }
  }
  if (w.size() > kQuoteMax) q += "...";
  return q + "'";
}

}  // namespace mr::engine
