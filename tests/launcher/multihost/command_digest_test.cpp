#include "launcher/multihost/command_digest.h"

#include <catch2/catch.hpp>

namespace cpplaunch {
namespace {

LaunchOptions Command(const std::string& script, std::vector<std::string> args) {
  LaunchOptions options;
  options.training_script = script;
  options.training_script_args = std::move(args);
  return options;
}

TEST_CASE("the command digest tells jobs apart by script and mode") {
  const std::string digest = CommandDigest(Command("train.py", {"--lr=0.1"}));
  CHECK(digest.size() == 16);
  CHECK(digest == CommandDigest(Command("train.py", {"--lr=0.1"})));
  CHECK(digest != CommandDigest(Command("eval.py", {"--lr=0.1"})));
  // torchrun lets hosts pass their own arguments and keep the script elsewhere.
  CHECK(digest == CommandDigest(Command("train.py", {"--data=/local/shard3"})));
  CHECK(digest == CommandDigest(Command("/home/a/repo/train.py", {"--lr=0.1"})));
  LaunchOptions module = Command("train", {});
  module.module = true;
  CHECK(CommandDigest(module) != CommandDigest(Command("train", {})));
  // The interpreter is a host's own business.
  LaunchOptions other_python = Command("train.py", {"--lr=0.1"});
  other_python.python = "/opt/py/bin/python3";
  CHECK(CommandDigest(other_python) == digest);
}

}  // namespace
}  // namespace cpplaunch
