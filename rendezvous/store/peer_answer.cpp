#include "rendezvous/store/peer_answer.h"

#include <algorithm>
#include <cstdio>

namespace cpplaunch {
namespace {

constexpr std::size_t kMaxText = 80;
constexpr std::size_t kMaxHex = 16;

bool Printable(char c) { return c >= 0x20 && c < 0x7f; }

std::string Hex(std::string_view bytes) {
  std::string text = std::to_string(bytes.size()) + (bytes.size() == 1 ? " byte:" : " bytes:");
  for (std::size_t i = 0; i < std::min(bytes.size(), kMaxHex); ++i) {
    char byte[4];
    std::snprintf(byte, sizeof byte, " %02x", static_cast<unsigned char>(bytes[i]));
    text += byte;
  }
  if (bytes.size() > kMaxHex) text += " ...";
  return text;
}

}  // namespace

std::string QuoteAnswer(std::string_view bytes) {
  if (bytes.empty()) return "";
  std::string_view line = bytes.substr(0, bytes.find_first_of("\r\n"));
  if (line.empty() || !std::all_of(line.begin(), line.end(), Printable)) return Hex(bytes);
  if (line.size() > kMaxText) return "\"" + std::string(line.substr(0, kMaxText)) + "...\"";
  return "\"" + std::string(line) + "\"";
}

}  // namespace cpplaunch
