#pragma once
// Reading a shared secret from a file (the agents' store secret, docs/security.md). The rules
// are OpenSSH's for private key files and the files sshd trusts, made explicit:
//   - a regular file (symbolic links are followed: Kubernetes mounts secrets through them; the
//     checks apply to the file they lead to), at most 64 KiB;
//   - owned by the user reading it or by root: a file another user owns could be rewritten by
//     that user;
//   - no access at all for other users, and at most read access for the file's group: 0600,
//     0400, 0640 and 0440 pass; 0660, 0620, 0644 and 0604 are refused;
//   - a secret of at least kMinSecretBytes bytes that is not only whitespace; one trailing
//     newline ("\n" or "\r\n") is not part of the secret, so `head -c 32 /dev/urandom | base64
//     > file` and raw random bytes both work.
// Blocking; nothing here throws.

#include <sys/types.h>

#include <optional>
#include <string>

namespace cpplaunch {

inline constexpr size_t kMaxSecretBytes = size_t{64} * 1024;
// Sixteen bytes: 128 bits when random, and long enough that a word typed by hand is refused.
inline constexpr size_t kMinSecretBytes = 16;

struct SecretFile {
  std::optional<std::string> secret;  // the key bytes, or nullopt with `error`
  // One line naming the path, what is wrong and what to do, e.g. "the secret file /x is
  // readable or writable by other users (mode 0644); run chmod 600 /x".
  std::string error;
};

SecretFile ReadSecretFile(const std::string& path);

// Pure parts of the rules above, for tests and for the reader. Each returns "" when the file
// may hold a secret, else the one-line error (naming `path`).
std::string SecretFileAccessProblem(const std::string& path, mode_t mode, uid_t owner,
                                    uid_t reader);
std::string SecretContentProblem(const std::string& path, const std::string& secret);

}  // namespace cpplaunch
