#include "rendezvous/store/peer_answer.h"

#include <catch2/catch.hpp>
#include <string>

namespace cpplaunch {
namespace {

TEST_CASE("a text answer is quoted up to its first line break") {
  CHECK(QuoteAnswer("HTTP/1.0 400 Bad request\r\nServer: x\r\n\r\n") ==
        "\"HTTP/1.0 400 Bad request\"");
  CHECK(QuoteAnswer("SSH-2.0-OpenSSH_9.2p1\r\n") == "\"SSH-2.0-OpenSSH_9.2p1\"");
  CHECK(QuoteAnswer(std::string(100, 'a')) == "\"" + std::string(80, 'a') + "...\"");
}

TEST_CASE("binary answers are shown as their first bytes in hex") {
  CHECK(QuoteAnswer(std::string("\x00\x2a", 2)) == "2 bytes: 00 2a");
  CHECK(QuoteAnswer("\n") == "1 byte: 0a");
  CHECK(QuoteAnswer(std::string(20, '\xff')) ==
        "20 bytes: ff ff ff ff ff ff ff ff ff ff ff ff ff ff ff ff ...");
}

TEST_CASE("no answer is an empty quote") { CHECK(QuoteAnswer("").empty()); }

}  // namespace
}  // namespace cpplaunch
