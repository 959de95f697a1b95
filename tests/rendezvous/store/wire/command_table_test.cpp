#include "rendezvous/store/wire/command_table.h"

#include <catch2/catch.hpp>
#include <string>

namespace cpplaunch {
namespace {

TEST_CASE("WireCode numbers the commands per dialect", "[rendezvous][wire]") {
  CHECK(WireCode(Dialect::kModern, Command::kBarrier) == 18);
  CHECK(WireCode(Dialect::kLegacy, Command::kDeleteKey) == 8);
  CHECK(WireCode(Dialect::kLegacy, Command::kPing) == -1);
  CHECK(WireCode(Dialect::kModern, Command::kWatchKey) == -1);
  CHECK(WireCode(Dialect::kUndecided, Command::kSet) == -1);
}

TEST_CASE("CommandFromWire is the inverse of WireCode", "[rendezvous][wire]") {
  for (Dialect dialect : {Dialect::kLegacy, Dialect::kModern}) {
    for (int byte = 0; byte < 256; ++byte) {
      INFO("byte " << byte);
      auto command = CommandFromWire(dialect, static_cast<uint8_t>(byte));
      if (command) CHECK(WireCode(dialect, *command) == byte);
    }
  }
  CHECK(CommandFromWire(Dialect::kLegacy, 0) == Command::kSet);
  CHECK(CommandFromWire(Dialect::kLegacy, 12) == Command::kCancelWait);
  CHECK_FALSE(CommandFromWire(Dialect::kLegacy, 13));
  CHECK_FALSE(CommandFromWire(Dialect::kModern, 0));  // VALIDATE only as the first bytes
  CHECK(CommandFromWire(Dialect::kModern, 18) == Command::kBarrier);
  CHECK_FALSE(CommandFromWire(Dialect::kModern, 19));
}

TEST_CASE("Each command has a name, a request program and a reply program", "[rendezvous][wire]") {
  CHECK(std::string(CommandName(Command::kCompareSet)) == "COMPARE_SET");
  CHECK(std::string(CommandName(Command::kGetNumKeys)) == "GETNUMKEYS");
  const Field* add = RequestProgram(Command::kAdd);
  CHECK(add[0] == Field::kKey);
  CHECK(add[1] == Field::kI64);
  CHECK(add[2] == Field::kEnd);
  CHECK(RequestProgram(Command::kListKeys)[0] == Field::kEnd);
  CHECK(ReplyShapeOf(Command::kMultiGet) == ReplyShape::kBytesList);
  CHECK(ReplyShapeOf(Command::kSet) == ReplyShape::kNone);
  CHECK(ReplyProgram(ReplyShape::kNone)[0] == Field::kEnd);
  const Field* watch = ReplyProgram(ReplyShape::kWatchEvent);
  CHECK(watch[0] == Field::kU8);
  CHECK(watch[1] == Field::kKey);
  CHECK(watch[2] == Field::kValue);
  CHECK(watch[3] == Field::kValue);
  CHECK(watch[4] == Field::kEnd);
}

}  // namespace
}  // namespace cpplaunch
