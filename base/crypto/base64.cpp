#include "base/crypto/base64.h"

#include <array>
#include <cstdint>

namespace cpplaunch {
namespace {

constexpr std::string_view kAlphabet =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

// -1 for a byte outside the alphabet.
constexpr std::array<int8_t, 256> MakeDecodeTable() {
  std::array<int8_t, 256> table{};
  table.fill(-1);
  for (size_t i = 0; i < kAlphabet.size(); ++i) {
    table[static_cast<unsigned char>(kAlphabet[i])] = static_cast<int8_t>(i);
  }
  return table;
}
constexpr std::array<int8_t, 256> kDecode = MakeDecodeTable();

}  // namespace

std::string Base64Encode(std::string_view bytes) {
  std::string text;
  text.reserve((bytes.size() + 2) / 3 * 4);
  size_t i = 0;
  for (; i + 3 <= bytes.size(); i += 3) {
    uint32_t group = static_cast<uint32_t>(static_cast<unsigned char>(bytes[i])) << 16 |
                     static_cast<uint32_t>(static_cast<unsigned char>(bytes[i + 1])) << 8 |
                     static_cast<unsigned char>(bytes[i + 2]);
    for (int shift = 18; shift >= 0; shift -= 6) text += kAlphabet[group >> shift & 63];
  }
  size_t rest = bytes.size() - i;
  if (rest == 0) return text;
  uint32_t group = static_cast<uint32_t>(static_cast<unsigned char>(bytes[i])) << 16;
  if (rest == 2) group |= static_cast<uint32_t>(static_cast<unsigned char>(bytes[i + 1])) << 8;
  text += kAlphabet[group >> 18 & 63];
  text += kAlphabet[group >> 12 & 63];
  text += rest == 2 ? kAlphabet[group >> 6 & 63] : '=';
  text += '=';
  return text;
}

std::optional<std::string> Base64Decode(std::string_view text) {
  if (text.size() % 4 != 0) return std::nullopt;
  size_t padding = 0;
  if (!text.empty() && text.back() == '=') padding = text[text.size() - 2] == '=' ? 2 : 1;
  std::string bytes;
  bytes.reserve(text.size() / 4 * 3);
  for (size_t i = 0; i < text.size(); i += 4) {
    uint32_t group = 0;
    for (size_t j = 0; j < 4; ++j) {
      size_t at = i + j;
      bool pad = at >= text.size() - padding;
      int8_t value = pad ? 0 : kDecode[static_cast<unsigned char>(text[at])];
      if (value < 0) return std::nullopt;
      group = group << 6 | static_cast<uint32_t>(value);
    }
    bytes += static_cast<char>(group >> 16 & 0xff);
    bytes += static_cast<char>(group >> 8 & 0xff);
    bytes += static_cast<char>(group & 0xff);
  }
  bytes.resize(bytes.size() - padding);
  return bytes;
}

}  // namespace cpplaunch
