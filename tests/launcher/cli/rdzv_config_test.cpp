#include "launcher/cli/rdzv_config.h"

#include <catch2/catch.hpp>

namespace cpplaunch {
namespace {

RdzvConfig Parse(std::string_view text) {
  std::string error;
  auto config = RdzvConfig::Parse(text, &error);
  INFO(error);
  REQUIRE(config);
  return *config;
}

TEST_CASE("key=value pairs with whitespace stripped") {
  const RdzvConfig config = Parse(" timeout = 60 , is_host=true,join_timeout=5 ");
  CHECK(config.values().size() == 3);
  CHECK(config.Get("timeout") == "60");
  CHECK(config.Get("is_host") == "true");
  CHECK(config.Get("join_timeout") == "5");
  CHECK_FALSE(config.Get("read_timeout"));
  CHECK(Parse("").values().empty());
  CHECK(Parse("   ").values().empty());
  CHECK(Parse("a=1,a=2").Get("a") == "2");
  CHECK(Parse("store_type=file=x").Get("store_type") == "file=x");
}

TEST_CASE("a key without a value, or an empty key, is an error") {
  std::string error;
  CHECK_FALSE(RdzvConfig::Parse("timeout", &error));
  CHECK(error == "The rendezvous configuration option 'timeout' must have a value specified.");
  CHECK_FALSE(RdzvConfig::Parse("timeout= ", &error));
  CHECK(error == "The rendezvous configuration option 'timeout' must have a value specified.");
  CHECK_FALSE(RdzvConfig::Parse("a=1,,b=2", &error));
  CHECK(error.find("must be in format") != std::string::npos);
  CHECK_FALSE(RdzvConfig::Parse("=1", &error));
  CHECK_FALSE(RdzvConfig::Parse("a=1,", &error));
}

TEST_CASE("typed getters read values as torchrun does") {
  const RdzvConfig config =
      Parse("timeout=60,neg=-3,bad=1.5,yes=YES,t=t,n=No,zero=0,maybe=maybe,big=+7");
  std::string error;
  CHECK(config.GetInt("timeout", 1, &error) == 60);
  CHECK(config.GetInt("neg", 1, &error) == -3);
  CHECK(config.GetInt("big", 1, &error) == 7);
  CHECK(config.GetInt("absent", 42, &error) == 42);
  CHECK_FALSE(config.GetInt("bad", 1, &error));
  CHECK(error ==
        "The rendezvous configuration option 'bad' does not represent a valid "
        "integer value.");

  CHECK(config.GetBool("yes", false, &error) == true);
  CHECK(config.GetBool("t", false, &error) == true);
  CHECK(config.GetBool("n", true, &error) == false);
  CHECK(config.GetBool("zero", true, &error) == false);
  CHECK(config.GetBool("absent", true, &error) == true);
  CHECK_FALSE(config.GetBool("maybe", true, &error));
  CHECK(error.find("valid boolean value") != std::string::npos);

  using std::chrono::seconds;
  CHECK(config.GetSeconds("timeout", seconds(900), &error) == seconds(60));
  CHECK(config.GetSeconds("absent", seconds(900), &error) == seconds(900));
  CHECK_FALSE(config.GetSeconds("neg", seconds(1), &error));
  CHECK_FALSE(config.GetSeconds("bad", seconds(1), &error));
}

}  // namespace
}  // namespace cpplaunch
