#include "base/crypto/secret_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
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

std::string Name(const std::string& path) { return "the secret file " + path; }

bool IsSpace(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

}  // namespace

std::string SecretFileAccessProblem(const std::string& path, mode_t mode, uid_t owner,
                                    uid_t reader) {
  // sshd trusts a file owned by root or by the user it acts for; anyone else who owns the file
  // can rewrite it, whatever its mode says today.
  if (owner != reader && owner != 0) {
    return Name(path) + " is owned by uid " + std::to_string(owner) + ", not by this user (uid " +
           std::to_string(reader) + ") or root; run chown " + std::to_string(reader) + " " + path;
  }
  if ((mode & S_IRWXO) != 0) {
    return Name(path) + " is readable or writable by other users (mode " + Mode(mode) +
           "); run chmod 600 " + path;
  }
  // The group may read (Kubernetes' fsGroup shares a mounted secret that way), nothing more:
  // a group member who can write the file can replace the secret.
  if ((mode & (S_IWGRP | S_IXGRP)) != 0) {
    return Name(path) + " gives its group more than read access (mode " + Mode(mode) +
           "); run chmod 600 " + path + " (or chmod 640 to share it with the group)";
  }
  return "";
}

std::string SecretContentProblem(const std::string& path, const std::string& secret) {
  if (secret.empty()) return Name(path) + " is empty; put the shared secret in it";
  if (std::all_of(secret.begin(), secret.end(), IsSpace)) {
    return Name(path) + " holds only whitespace; put the shared secret in it";
  }
  if (secret.size() < kMinSecretBytes) {
    return Name(path) + " holds " + std::to_string(secret.size()) + " bytes, fewer than the " +
           std::to_string(kMinSecretBytes) + " a secret needs; write a longer one (head -c 32 " +
           "/dev/urandom | base64 > " + path + ")";
  }
  return "";
}

SecretFile ReadSecretFile(const std::string& path) {
  const std::string name = Name(path);
  if (path.empty()) return Failed("the secret file path is empty");
  // O_NONBLOCK: a FIFO planted at the path must not hang the launcher before fstat refuses it.
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK));
  if (!fd) return Failed("cannot open " + name + ": " + ErrorText(LastError()));
  struct stat info {};
  if (::fstat(fd.get(), &info) != 0) {
    return Failed("cannot inspect " + name + ": " + ErrorText(LastError()));
  }
  if (!S_ISREG(info.st_mode)) return Failed(name + " is not a regular file");
  // The effective uid: the identity the kernel checked when it let this process open the file.
  std::string problem = SecretFileAccessProblem(path, info.st_mode, info.st_uid, ::geteuid());
  if (!problem.empty()) return Failed(std::move(problem));
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
  problem = SecretContentProblem(path, secret);
  if (!problem.empty()) return Failed(std::move(problem));
  return SecretFile{std::move(secret), ""};
}

}  // namespace cpplaunch
