// Agent connections are tagged (tag_framing.h): a WAIT does not hold up the requests behind
// it, several WAITs may be pending on one connection, and each reply comes back under its
// request's tag. Raw sockets against a real StoreServer on loopback, so the bytes are checked.

#include <boost/asio/io_context.hpp>
#include <catch2/catch.hpp>
#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "tests/rendezvous/store/agent_wire.h"
#include "tests/rendezvous/store/loopback_server.h"
#include "tests/rendezvous/store/test_bytes.h"

namespace cpplaunch {
namespace {

using namespace std::chrono_literals;
using test::EncodeTagged;
using test::LoopbackServer;
using test::RawConnection;
using test::ToHex;

std::unique_ptr<RawConnection> Agent(const LoopbackServer& server) {
  auto connection = std::make_unique<RawConnection>(server.port());
  REQUIRE(test::RawAgentHandshake(*connection, "") == kAgentAccepted);
  return connection;
}

std::string CancelWait(uint32_t tag, uint32_t wait_tag) {
  return EncodeTagged(tag, Command::kCancelWait, {}, {}, wait_tag);
}

TEST_CASE("two WAITs and a SET/GET pipelined on one agent connection are answered out of order",
          "[store][tagged]") {
  LoopbackServer server;
  auto a = Agent(server);
  a->Send(EncodeTagged(1, Command::kWait, {"x"}) + EncodeTagged(2, Command::kWait, {"y"}) +
          EncodeTagged(3, Command::kSet, {"c"}, {"v"}) + EncodeTagged(4, Command::kGet, {"c"}));
  // The GET behind the two pending waits is answered at once (SET has no reply, nor a tag).
  CHECK(ToHex(a->Receive(4 + 8 + 1)) == "04 00 00 00 01 00 00 00 00 00 00 00 76");
  a->Send(EncodeTagged(5, Command::kSet, {"y"}, {""}));
  CHECK(ToHex(a->Receive(5)) == "02 00 00 00 00");
  auto b = Agent(server);
  b->Send(EncodeTagged(1, Command::kSet, {"x"}, {""}));
  CHECK(ToHex(a->Receive(5)) == "01 00 00 00 00");
  CHECK(a->Receive(1, 200ms).empty());
  CHECK(b->Receive(1, 50ms).empty());
}

TEST_CASE("CANCEL_WAIT on an agent connection cancels the one WAIT it names", "[store][tagged]") {
  LoopbackServer server;
  auto a = Agent(server);
  a->Send(EncodeTagged(1, Command::kWait, {"x"}) + EncodeTagged(2, Command::kWait, {"y"}) +
          CancelWait(3, 1));
  // The cancelled WAIT's reply under its tag, then CANCEL_WAIT's own.
  CHECK(ToHex(a->Receive(10)) == "01 00 00 00 01 03 00 00 00 01");
  a->Send(EncodeTagged(4, Command::kSet, {"y"}, {""}));
  CHECK(ToHex(a->Receive(5)) == "02 00 00 00 00");
  // A WAIT that was answered already: CANCEL_WAIT says so, nothing else comes.
  a->Send(CancelWait(5, 2));
  CHECK(ToHex(a->Receive(5)) == "05 00 00 00 00");
  // The cancelled wait is gone: its key appearing wakes nobody.
  a->Send(EncodeTagged(6, Command::kSet, {"x"}, {""}) + EncodeTagged(7, Command::kCheck, {"x"}));
  CHECK(ToHex(a->Receive(5)) == "07 00 00 00 00");
  CHECK(a->Receive(1, 200ms).empty());
}

TEST_CASE("a connection's pending waits go with it; its will still wakes the others' waits",
          "[store][tagged]") {
  LoopbackServer server;
  auto watcher = Agent(server);
  watcher->Send(EncodeTagged(9, Command::kWait, {"end"}));
  {
    auto leaving = Agent(server);
    leaving->Send(EncodeTagged(1, Command::kWill, {"end"}, {"gone"}) +
                  EncodeTagged(2, Command::kWait, {"x"}) + EncodeTagged(3, Command::kWait, {"z"}));
    CHECK(ToHex(leaving->Receive(5)) == "01 00 00 00 00");
  }  // closed with two waits pending
  CHECK(ToHex(watcher->Receive(5)) == "09 00 00 00 00");
  // The ids of the closed connection and its waits are reused by later ones, which work.
  auto next = Agent(server);
  next->Send(EncodeTagged(1, Command::kWait, {"x"}) + EncodeTagged(2, Command::kSet, {"x"}, {""}));
  CHECK(ToHex(next->Receive(5)) == "01 00 00 00 00");
  CHECK(watcher->Receive(1, 200ms).empty());
  CHECK(server.OnLoop([](StoreServer& s) { return s.connection_count(); }) == 2);
}

TEST_CASE("a wake-up never splits a long reply: it follows the MULTI_GET it arrived during",
          "[store][tagged]") {
  LoopbackServer server;
  auto a = Agent(server);
  auto b = Agent(server);
  const std::string big(1024 * 1024, 'v');
  std::vector<std::string> keys;
  std::string sets;
  for (int i = 0; i < 24; ++i) {
    keys.push_back("big" + std::to_string(i));
    sets += EncodeTagged(10 + static_cast<uint32_t>(i), Command::kSet, {keys.back()}, {big});
  }
  b->Send(sets + EncodeTagged(20, Command::kCheck, keys));
  REQUIRE(ToHex(b->Receive(5)) == "14 00 00 00 00");
  // `a` waits, then asks for 24 MiB and reads nothing yet: the reply stalls part way.
  a->Send(EncodeTagged(1, Command::kWait, {"w"}) + EncodeTagged(2, Command::kMultiGet, keys));
  CHECK(a->Receive(4, 2s).size() == 4);  // the MULTI_GET reply has started
  b->Send(EncodeTagged(21, Command::kSet, {"w"}, {""}));
  CHECK(b->Receive(1, 100ms).empty());
  const size_t body = keys.size() * (8 + big.size());
  std::string reply = a->Receive(body, 10s);
  REQUIRE(reply.size() == body);
  CHECK(reply.substr(0, 8) == std::string("\0\0\x10\0\0\0\0\0", 8));
  CHECK(ToHex(a->Receive(5)) == "01 00 00 00 00");
}

TEST_CASE("a PyTorch connection's long request beside an agent's runs on its own connection",
          "[store][tagged]") {
  LoopbackServer server;
  auto agent = Agent(server);  // takes the first connection id
  agent->Send(EncodeTagged(1, Command::kWait, {"never"}));
  RawConnection torch(server.port());
  const std::string big(1024 * 1024, 't');
  std::vector<std::string> keys{"m0", "m1", "m2", "m3"};
  std::vector<Bytes> values(keys.size(), big);
  torch.Send(test::FromHex("00 ce f7 85 3c") +
             test::EncodeIn(Dialect::kModern, Command::kMultiSet, keys, values) +
             test::EncodeIn(Dialect::kModern, Command::kMultiGet, keys));
  const size_t body = keys.size() * (8 + big.size());
  std::string reply = torch.Receive(body, 10s);
  REQUIRE(reply.size() == body);
  CHECK(reply.substr(body - 4) == "tttt");
  CHECK(agent->Receive(1, 100ms).empty());
}

TEST_CASE("an agent connection over the pending-wait limit is closed", "[store][tagged]") {
  LoopbackServer server;
  auto a = Agent(server);
  std::string waits;
  for (uint32_t tag = 1; tag <= 4097; ++tag) waits += EncodeTagged(tag, Command::kWait, {"k"});
  a->Send(waits);
  CHECK(a->ClosedByPeer());
  // A second WAIT under a tag that is still pending is a protocol error too.
  auto b = Agent(server);
  b->Send(EncodeTagged(1, Command::kWait, {"k"}) + EncodeTagged(1, Command::kWait, {"j"}));
  CHECK(b->ClosedByPeer());
}

}  // namespace
}  // namespace cpplaunch
