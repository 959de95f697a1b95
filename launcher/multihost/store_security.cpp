#include "launcher/multihost/store_security.h"

#include "base/crypto/secret_file.h"

namespace cpplaunch {

std::optional<StoreSecurity> LoadStoreSecurity(const StoreSettings& settings, std::string* error) {
  StoreSecurity security;
  if (settings.secret_file) {
    SecretFile file = ReadSecretFile(*settings.secret_file);
    if (!file.secret) {
      *error = settings.secret_source + ": " + file.error;
      return std::nullopt;
    }
    security.secret = std::move(*file.secret);
  }
  security.allowed_peers = settings.allowed_peers;
  if (settings.max_bytes) security.budget.total_bytes = *settings.max_bytes;
  return security;
}

}  // namespace cpplaunch
