// quote.hpp: the printable form of text taken from input (an option's word, a file's path) for
// the runtime's messages: bounded, with control and non-ASCII bytes escaped.
#ifndef MR_ENGINE_QUOTE_HPP
#define MR_ENGINE_QUOTE_HPP

#include <cstddef>
#include <string>

namespace mr::engine {

// The bytes of the input a message shows at most; longer input ends in "...".
constexpr std::size_t kQuoteMax = 64;

// `w` in single quotes: its first kQuoteMax bytes, each byte below 0x20 or from 0x7f up as
// \xNN, and "..." after them when `w` is longer. Any thread.
std::string quote(const std::string &w);

}  // namespace mr::engine

#endif
