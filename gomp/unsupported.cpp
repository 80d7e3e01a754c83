// unsupported.cpp: the entry points of libgomp's ABI this runtime does not implement. Each
// stops the program with "mrengine-gomp: <symbol> is not supported" rather than run the
// construct wrongly (doc/gomp.md lists them). Their arguments are never read.
#include "export.hpp"
#include "fatal.hpp"

#define MRG_UNSUPPORTED(name) \
  MRG_EXPORT void name(void) { mrg::unsupported(#name); }

MRG_UNSUPPORTED(GOMP_offload_register)
MRG_UNSUPPORTED(GOMP_offload_register_ver)
MRG_UNSUPPORTED(GOMP_offload_unregister)
MRG_UNSUPPORTED(GOMP_offload_unregister_ver)
MRG_UNSUPPORTED(GOMP_target)
MRG_UNSUPPORTED(GOMP_target_data)
MRG_UNSUPPORTED(GOMP_target_update)
MRG_UNSUPPORTED(GOMP_teams)
