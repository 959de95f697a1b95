#include "base/crypto/hmac.h"

#include "base/crypto/sha256.h"

namespace cpplaunch {
namespace {

std::string_view View(const Sha256::Digest& digest) {
  return {reinterpret_cast<const char*>(digest.data()), digest.size()};
}

}  // namespace

std::string HmacSha256(std::string_view key, std::string_view message) {
  // Keys longer than a block are hashed first; shorter ones are zero-padded to a block.
  std::string block(Sha256::kBlockBytes, '\0');
  if (key.size() > Sha256::kBlockBytes) {
    Sha256::Digest hashed = Sha256::Of(key);
    block.replace(0, hashed.size(), View(hashed));
  } else {
    block.replace(0, key.size(), key);
  }
  std::string inner_pad = block;
  std::string outer_pad = block;
  for (size_t i = 0; i < block.size(); ++i) {
    inner_pad[i] = static_cast<char>(inner_pad[i] ^ 0x36);
    outer_pad[i] = static_cast<char>(outer_pad[i] ^ 0x5c);
  }
  Sha256 inner;
  inner.Update(inner_pad);
  inner.Update(message);
  Sha256::Digest inner_digest = inner.Finish();
  Sha256 outer;
  outer.Update(outer_pad);
  outer.Update(View(inner_digest));
  return std::string(View(outer.Finish()));
}

bool ConstantTimeEqual(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  unsigned difference = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    difference |= static_cast<unsigned char>(a[i]) ^ static_cast<unsigned char>(b[i]);
  }
  return difference == 0;
}

}  // namespace cpplaunch
