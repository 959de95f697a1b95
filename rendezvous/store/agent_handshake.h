#pragma once
// The agent handshake (docs/security.md): how a cpplaunch agent and the store prove to each other
// that they hold the job's secret, so that the agent's connection works on the agents'
// namespace instead of the workers', and the agent trusts no answer from a store that cannot
// prove it (another process that took the endpoint's port first). Pure except for
// NewAgentNonce (getrandom).
//
// On the wire (integers little-endian, as the rest of the protocol):
//   C>S  C7 | 43 50 4C 41 | u64 32 | agent_nonce[32]         AGENT_HELLO + u32 magic "CPLA"
//   S>C  u64 64 | store_nonce[32] | StoreProof[32]           fresh random bytes, and the store's
//                                                             HMAC over both nonces
//   C>S  C8 | u64 32 | HMAC-SHA256(secret, context | store_nonce)   AGENT_PROOF, sent only once
//                                                             the store's proof checked out; an
//                                                             empty one says it did not
//   S>C  00 (accepted) or 01 (refused; the server then closes)
// then requests in the agent dialect (modern numbering without VALIDATE, plus 0xC9..0xCD).
// No PyTorch client sends 0xC7 first (legacy commands are 0..12, modern ones open with 0x00), so
// the first byte tells agents from PyTorch clients even without a secret (an empty HMAC key).
// A fresh nonce per connection makes a recorded proof useless on any other connection.

#include <cstddef>
#include <string>
#include <string_view>

namespace cpplaunch {

inline constexpr size_t kAgentNonceBytes = 32;

// kAgentNonceBytes random bytes for one connection's challenge. Throws std::system_error.
std::string NewAgentNonce();

// The proof an agent holding `secret` sends for `nonce`.
std::string AgentProof(std::string_view secret, std::string_view nonce);

// True when `proof` is AgentProof(secret, nonce), compared in constant time.
bool AgentProofValid(std::string_view secret, std::string_view nonce, std::string_view proof);

// The store's proof for the agent's `agent_nonce` and its own `store_nonce`: an HMAC under its
// own context, so that no agent proof (nor any other use of the secret) can stand in for it, and
// over the agent's fresh nonce, so that a recorded one is useless.
std::string StoreProof(std::string_view secret, std::string_view agent_nonce,
                       std::string_view store_nonce);

// True when `proof` is StoreProof(secret, agent_nonce, store_nonce), in constant time.
bool StoreProofValid(std::string_view secret, std::string_view agent_nonce,
                     std::string_view store_nonce, std::string_view proof);

}  // namespace cpplaunch
