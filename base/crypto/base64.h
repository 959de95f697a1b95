#pragma once
// Standard base64 (RFC 4648, '+' '/' and '=' padding), as etcd's JSON gateway encodes bytes.
// Pure.

#include <optional>
#include <string>
#include <string_view>

namespace cpplaunch {

std::string Base64Encode(std::string_view bytes);
// nullopt for a length that is not a multiple of 4, a character outside the alphabet, or
// padding anywhere but at the end.
std::optional<std::string> Base64Decode(std::string_view text);

}  // namespace cpplaunch
