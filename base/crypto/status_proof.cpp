#include "base/crypto/status_proof.h"

#include <algorithm>

#include "base/crypto/hmac.h"

namespace cpplaunch {
namespace {

// 18 digits stay below INT64_MAX, so neither the parse nor |now - t| can overflow for any
// plausible clock.
constexpr size_t kMaxTimeDigits = 18;
constexpr size_t kMacHexDigits = 64;

std::string LowerHex(std::string_view bytes) {
  constexpr char kDigits[] = "0123456789abcdef";
  std::string text;
  text.reserve(bytes.size() * 2);
  for (unsigned char byte : bytes) {
    text.push_back(kDigits[byte >> 4]);
    text.push_back(kDigits[byte & 0x0f]);
  }
  return text;
}

std::string Mac(std::string_view secret, std::string_view time_text, std::string_view path) {
  std::string message = "cpplaunch-status\n";
  message.append(time_text).append("\n").append(path);
  return LowerHex(HmacSha256(secret, message));
}

bool IsDecimal(std::string_view text) {
  return !text.empty() && text.size() <= kMaxTimeDigits &&
         std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
}

int64_t ParseDecimal(std::string_view text) {
  int64_t value = 0;
  for (char c : text) value = value * 10 + (c - '0');
  return value;
}

}  // namespace

std::string StatusProof(std::string_view secret, int64_t unix_seconds, std::string_view path) {
  std::string time_text = std::to_string(unix_seconds);
  return time_text + ":" + Mac(secret, time_text, path);
}

bool CheckStatusProof(std::string_view secret, std::string_view header, int64_t now,
                      std::string_view path) {
  size_t colon = header.find(':');
  if (colon == std::string_view::npos) return false;
  std::string_view time_text = header.substr(0, colon);
  std::string_view mac = header.substr(colon + 1);
  if (!IsDecimal(time_text) || mac.size() != kMacHexDigits) return false;
  int64_t sent = ParseDecimal(time_text);
  int64_t skew = sent > now ? sent - now : now - sent;
  if (skew > kStatusProofWindowSeconds) return false;
  // The MAC is recomputed over the header's own digits, so "0123" and "123" are different
  // proofs, as they are to any other implementation that signs the text it sends.
  return ConstantTimeEqual(Mac(secret, time_text, path), mac);
}

}  // namespace cpplaunch
