#include "base/memory_trim.h"

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace cpplaunch {

void ReturnFreeHeapToSystem() {
#if defined(__GLIBC__)
  malloc_trim(0);
#endif
}

}  // namespace cpplaunch
