#include "base/crypto/secret_file.h"

#include <fcntl.h>
#include <sys/stat.h>

#include <cstdio>

#include "base/fd_io.h"
#include "base/unique_fd.h"

namespace cpplaunch {
namespace {

SecretFile Failed(std::string error) { return SecretFile{std::nullopt, std::move(error)}; }

std::string Mode(mode_t mode) {
  char text[8];
  std::snprintf(text, sizeof text, "%04o", static_cast<unsigned>(mode & 07777));
  return text;
}

}  // namespace

SecretFile ReadSecretFile(const std::string& path) {
  const std::string name = "the secret file " + path;
  if (path.empty()) return Failed("the secret file path is empty");
  // O_NONBLOCK: a FIFO planted at the path must not hang the launcher before fstat refuses it.
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK));
  if (!fd) return Failed("cannot open " + name + ": " + ErrorText(LastError()));
  struct stat info {};
  if (::fstat(fd.get(), &info) != 0) {
    return Failed("cannot inspect " + name + ": " + ErrorText(LastError()));
  }
  if (!S_ISREG(info.st_mode)) return Failed(name + " is not a regular file");
  if ((info.st_mode & (S_IROTH | S_IWOTH)) != 0) {
    return Failed(name + " is readable or writable by other users (mode " + Mode(info.st_mode) +
                  "); run chmod 600 " + path);
  }
  if (info.st_size > static_cast<off_t>(kMaxSecretBytes)) {
    return Failed(name + " is larger than " + std::to_string(kMaxSecretBytes) +
                  " bytes: is it the right file?");
  }
  std::string secret;
  char buffer[4096];
  for (;;) {
    IoResult got = ReadSome(fd.get(), buffer, sizeof buffer);
    if (got.status == IoResult::Status::kEof) break;
    if (!got.ok()) return Failed("cannot read " + name + ": " + ErrorText(got.error));
    secret.append(buffer, got.bytes);
    if (secret.size() > kMaxSecretBytes) {
      return Failed(name + " is larger than " + std::to_string(kMaxSecretBytes) + " bytes");
    }
  }
  if (secret.ends_with("\r\n")) {
    secret.resize(secret.size() - 2);
  } else if (secret.ends_with('\n')) {
    secret.pop_back();
  }
  if (secret.empty()) return Failed(name + " is empty; put the shared secret in it");
  return SecretFile{std::move(secret), ""};
}

}  // namespace cpplaunch
