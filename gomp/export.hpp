// export.hpp: the mark of libmrgomp's entry points. The library is built with
// -fvisibility=hidden; what carries this mark is libgomp's ABI (gomp/libgomp.map gives each its
// version node).
#ifndef MR_GOMP_EXPORT_HPP
#define MR_GOMP_EXPORT_HPP

#define MRG_EXPORT extern "C" __attribute__((visibility("default")))

#endif
