#pragma once
// Giving freed heap memory back to the system. glibc keeps freed chunks in its arenas (and,
// after one large free, serves even large requests from them), so a process that once held a
// big buffer keeps its RSS; a long-lived server that refused or sent a 512 MB reply should not.

namespace cpplaunch {

// Returns free pages of every malloc arena to the kernel (glibc's malloc_trim); a no-op on
// other C libraries. Costs a walk of the heap: call it after large frees, not per request.
// Thread-safe.
void ReturnFreeHeapToSystem();

}  // namespace cpplaunch
