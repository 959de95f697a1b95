#include "rendezvous/store/agent_handshake.h"

#include "base/crypto/hmac.h"
#include "base/crypto/random_bytes.h"

namespace cpplaunch {
namespace {

// Binds the MAC to this protocol and version, so it cannot be a valid MAC of any other use of
// the same secret.
constexpr std::string_view kContext = "cpplaunch agent store handshake v1\n";
constexpr std::string_view kStoreContext = "cpplaunch store proof v1\n";

}  // namespace

std::string NewAgentNonce() { return RandomBytes(kAgentNonceBytes); }

std::string AgentProof(std::string_view secret, std::string_view nonce) {
  std::string message(kContext);
  message.append(nonce);
  return HmacSha256(secret, message);
}

bool AgentProofValid(std::string_view secret, std::string_view nonce, std::string_view proof) {
  return nonce.size() == kAgentNonceBytes && ConstantTimeEqual(AgentProof(secret, nonce), proof);
}

std::string StoreProof(std::string_view secret, std::string_view agent_nonce,
                       std::string_view store_nonce) {
  std::string message(kStoreContext);
  message.append(agent_nonce);
  message.append(store_nonce);
  return HmacSha256(secret, message);
}

bool StoreProofValid(std::string_view secret, std::string_view agent_nonce,
                     std::string_view store_nonce, std::string_view proof) {
  return agent_nonce.size() == kAgentNonceBytes && store_nonce.size() == kAgentNonceBytes &&
         ConstantTimeEqual(StoreProof(secret, agent_nonce, store_nonce), proof);
}

}  // namespace cpplaunch
