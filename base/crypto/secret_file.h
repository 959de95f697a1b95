#pragma once
// Reading a shared secret from a file (the agents' store secret, docs/security.md). The file
// must be a regular file that other users can neither read nor write (mode 0600 or 0640 and
// the like), hold at most 64 KiB, and not be empty; one trailing newline ("\n" or "\r\n") is
// not part of the secret, so `echo word > file` and `head -c 32 /dev/urandom > file` both work.
// Symbolic links are followed (Kubernetes mounts secrets through them); the checks apply to
// the file they lead to. Blocking; nothing here throws.

#include <optional>
#include <string>

namespace cpplaunch {

inline constexpr size_t kMaxSecretBytes = size_t{64} * 1024;

struct SecretFile {
  std::optional<std::string> secret;  // the key bytes, or nullopt with `error`
  // One line naming the path, what is wrong and what to do, e.g. "the secret file /x is
  // readable by other users (mode 0644); run chmod 600 /x".
  std::string error;
};

SecretFile ReadSecretFile(const std::string& path);

}  // namespace cpplaunch
