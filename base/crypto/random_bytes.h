#pragma once
// Random bytes from the kernel's CSPRNG (getrandom(2)), for nonces. Blocks only until the
// kernel's pool is initialised at boot. Throws std::system_error when the call fails (ENOSYS on
// a kernel older than 3.17).

#include <cstddef>
#include <string>

namespace cpplaunch {

std::string RandomBytes(size_t count);

}  // namespace cpplaunch
