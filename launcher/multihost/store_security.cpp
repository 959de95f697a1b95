#include "launcher/multihost/store_security.h"

#include "base/crypto/secret_file.h"

namespace cpplaunch {

std::optional<StoreSecurity> LoadStoreSecurity(const RdzvConfig& conf, const EnvMap& env,
                                               std::string* error) {
  StoreSecurity security;
  std::optional<std::string> path = conf.Get("secret_file");
  std::string source = "--rdzv-conf secret_file";
  if (!path) {
    path = Lookup(env, kSecretFileVariable);
    source = kSecretFileVariable;
  }
  if (path) {
    SecretFile file = ReadSecretFile(*path);
    if (!file.secret) {
      *error = source + ": " + file.error;
      return std::nullopt;
    }
    security.secret = std::move(*file.secret);
  }
  if (auto list = conf.Get("allowed_peers")) {
    std::string why;
    auto networks = ParsePeerNetworks(*list, &why);
    if (!networks) {
      *error = "--rdzv-conf allowed_peers: " + why +
               " (give CIDR blocks separated by ';', e.g. 10.0.0.0/8;fd00::/8)";
      return std::nullopt;
    }
    security.allowed_peers = std::move(*networks);
  }
  return security;
}

}  // namespace cpplaunch
