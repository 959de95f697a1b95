#pragma once
// HMAC-SHA256 (RFC 2104, test vectors of RFC 4231) and a comparison whose time does not depend
// on where two MACs differ. Pure.

#include <string>
#include <string_view>

namespace cpplaunch {

// The 32-byte HMAC-SHA256 of `message` under `key` (any length; an empty key is valid).
std::string HmacSha256(std::string_view key, std::string_view message);

// True when `a` and `b` are equal; for equal sizes the time taken does not depend on the bytes,
// so a peer cannot learn a MAC byte by byte from response times.
bool ConstantTimeEqual(std::string_view a, std::string_view b);

}  // namespace cpplaunch
