#pragma once
// The agent handshake (docs/security.md): how a cpplaunch agent proves itself to the store, so
// that its connection works on the agents' namespace instead of the workers'. Pure except for
// NewAgentNonce (getrandom).
//
// On the wire (integers little-endian, as the rest of the protocol):
//   C>S  C7 | 43 50 4C 41                                     AGENT_HELLO + u32 magic "CPLA"
//   S>C  u64 32 | nonce[32]                                   fresh random bytes
//   C>S  C8 | u64 32 | HMAC-SHA256(secret, context | nonce)   AGENT_PROOF
//   S>C  00 (accepted) or 01 (refused; the server then closes)
// then requests in the agent dialect (modern numbering without VALIDATE, plus 0xC9..0xCC).
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

}  // namespace cpplaunch
