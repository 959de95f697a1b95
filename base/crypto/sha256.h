#pragma once
// SHA-256 (FIPS 180-4). Pure; used for HMAC-SHA256 (base/hmac.h) in the agents' store handshake,
// which is why the project carries its own 100 lines instead of a crypto library.
// Not thread-safe per object; objects are independent.

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace cpplaunch {

class Sha256 {
 public:
  static constexpr size_t kDigestBytes = 32;
  static constexpr size_t kBlockBytes = 64;
  using Digest = std::array<uint8_t, kDigestBytes>;

  Sha256();
  // Adds bytes; may be called any number of times before Finish().
  void Update(std::string_view bytes);
  // The digest of everything added. The object must not be used afterwards.
  Digest Finish();

  // One-shot digest of `bytes`.
  static Digest Of(std::string_view bytes);

 private:
  void Compress(const uint8_t* block);

  std::array<uint32_t, 8> state_;
  std::array<uint8_t, kBlockBytes> block_{};
  size_t block_size_ = 0;
  uint64_t total_bytes_ = 0;
};

}  // namespace cpplaunch
