#pragma once
// The agent handshake spoken over a RawConnection (loopback_server.h), for tests that need the
// bytes themselves: replays, a forked process that dies holding keys.

#include <string>

#include "rendezvous/store/agent_handshake.h"
#include "rendezvous/store/wire/reply_codec.h"
#include "rendezvous/store/wire/tag_framing.h"
#include "tests/rendezvous/store/loopback_server.h"

namespace cpplaunch::test {

// A fixed agent nonce: tests that need the bytes check the store's proof for it.
inline const std::string kTestAgentNonce(kAgentNonceBytes, 'a');

inline std::string AgentHelloBytes() {
  Request hello;
  hello.command = Command::kAgentHello;
  hello.u32 = kAgentHelloMagic;
  hello.values.push_back(kTestAgentNonce);
  std::string bytes;
  EncodeRequest(Dialect::kAgent, hello, &bytes);
  return bytes;
}

inline std::string AgentProofBytes(const std::string& proof) {
  Request request;
  request.command = Command::kAgentProof;
  request.values.push_back(proof);
  std::string bytes;
  EncodeRequest(Dialect::kAgent, request, &bytes);
  return bytes;
}

// Sends AGENT_HELLO and returns the nonce the server answered ("" if none came); *store_proof
// gets the store's proof that came with it.
inline std::string RawAgentHello(RawConnection& connection, std::string* store_proof = nullptr) {
  connection.Send(AgentHelloBytes());
  std::string reply = connection.Receive(8 + 2 * kAgentNonceBytes);
  if (reply.size() != 8 + 2 * kAgentNonceBytes) return "";
  if (store_proof != nullptr) *store_proof = reply.substr(8 + kAgentNonceBytes);
  return reply.substr(8, kAgentNonceBytes);
}

// The whole handshake with `secret`; returns the verdict byte (kAgentAccepted) or -1 when the
// server sent none.
inline int RawAgentHandshake(RawConnection& connection, const std::string& secret) {
  std::string nonce = RawAgentHello(connection);
  if (nonce.empty()) return -1;
  connection.Send(AgentProofBytes(AgentProof(secret, nonce)));
  std::string verdict = connection.Receive(1);
  return verdict.size() == 1 ? static_cast<unsigned char>(verdict[0]) : -1;
}

inline std::string EncodeIn(Dialect dialect, Command command, std::vector<std::string> keys,
                            std::vector<Bytes> values = {}) {
  Request request;
  request.command = command;
  request.keys = std::move(keys);
  request.values = std::move(values);
  std::string bytes;
  EncodeRequest(dialect, request, &bytes);
  return bytes;
}

// A request of an agent connection after the handshake: tag | command | fields.
inline std::string EncodeTagged(uint32_t tag, Command command, std::vector<std::string> keys,
                                std::vector<Bytes> values = {}, uint32_t u32 = 0) {
  Request request;
  request.command = command;
  request.keys = std::move(keys);
  request.values = std::move(values);
  request.u32 = u32;
  std::string bytes;
  EncodeTaggedRequest(tag, request, &bytes);
  return bytes;
}

}  // namespace cpplaunch::test
