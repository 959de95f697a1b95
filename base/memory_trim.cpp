#include "base/memory_trim.h"

// A C library header first: __GLIBC__ is defined by <features.h>, which the project's own header
// does not include. Without it the test below is false on glibc too, and the trim was compiled
// out (an empty function: freed registrations stayed resident, issue 23 item 2).
#include <cstdlib>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace cpplaunch {

void ReturnFreeHeapToSystem() {
#if defined(__GLIBC__)
  malloc_trim(0);
#endif
}

void CoalesceSmallFrees() {
#if defined(__GLIBC__)
  mallopt(M_MXFAST, 0);
#endif
}

}  // namespace cpplaunch
