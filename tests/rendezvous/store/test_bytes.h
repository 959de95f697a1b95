#pragma once
// Hex helpers shared by the store tests: vectors are written as in the protocol doc.

#include <cstdio>
#include <string>
#include <string_view>

namespace cpplaunch::test {

// "05 01 00" -> bytes; whitespace ignored.
inline std::string FromHex(std::string_view hex) {
  std::string bytes;
  int high = -1;
  for (char c : hex) {
    int nibble;
    if (c >= '0' && c <= '9')
      nibble = c - '0';
    else if (c >= 'a' && c <= 'f')
      nibble = c - 'a' + 10;
    else if (c >= 'A' && c <= 'F')
      nibble = c - 'A' + 10;
    else
      continue;
    if (high < 0) {
      high = nibble;
    } else {
      bytes.push_back(static_cast<char>(high * 16 + nibble));
      high = -1;
    }
  }
  return bytes;
}

// bytes -> "05 01 00"
inline std::string ToHex(std::string_view bytes) {
  std::string hex;
  char part[4];
  for (unsigned char c : bytes) {
    std::snprintf(part, sizeof part, "%02x", c);
    if (!hex.empty()) hex.push_back(' ');
    hex.append(part);
  }
  return hex;
}

}  // namespace cpplaunch::test
