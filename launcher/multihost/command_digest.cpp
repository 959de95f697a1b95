#include "launcher/multihost/command_digest.h"

#include <filesystem>

#include "base/crypto/sha256.h"

namespace cpplaunch {

std::string CommandDigest(const LaunchOptions& options) {
  Sha256 hash;
  // Each field with its length first: ["a b"] and ["a", "b"] differ.
  auto add = [&hash](const std::string& field) {
    hash.Update(std::to_string(field.size()) + ":");
    hash.Update(field);
  };
  add(options.module ? "module" : options.no_python ? "program" : "script");
  add(options.run_path ? "run-path" : "");
  add(options.module ? options.training_script
                     : std::filesystem::path(options.training_script).filename().string());
  const Sha256::Digest digest = hash.Finish();
  static constexpr char kHex[] = "0123456789abcdef";
  std::string text;
  for (std::size_t i = 0; i < 8; ++i) {
    text += kHex[digest[i] >> 4];
    text += kHex[digest[i] & 0xf];
  }
  return text;
}

}  // namespace cpplaunch
