// ordered.hpp: ordered loops hand chunks over in iteration order (doc/gomp.md, "Waiting").
#ifndef MR_GOMP_ORDERED_HPP
#define MR_GOMP_ORDERED_HPP

#include "records.hpp"

namespace mrg {

// Ordered loops: once every earlier chunk has been handed over, hand over the member's chunk
// (self->ord_lo..ord_hi, held). Called by the member when it takes its next chunk or ends the
// loop.
void ordered_handover(Task *self);

}  // namespace mrg

#endif
