#include "launcher/cli/option_suggestion.h"

#include <catch2/catch.hpp>

namespace cpplaunch {
namespace {

TEST_CASE("a mistyped long option gets the nearest spelling") {
  CHECK(SuggestOption("--nprocs-per-node=2") == std::optional<std::string>("--nproc-per-node"));
  CHECK(SuggestOption("--nproc_per_nodes") == std::optional<std::string>("--nproc_per_node"));
  CHECK(SuggestOption("--max-restart") == std::optional<std::string>("--max-restarts"));
  CHECK(SuggestOption("--master_adr") == std::optional<std::string>("--master_addr"));
  CHECK(SuggestOption("--rdvz-backend=c10d") == std::optional<std::string>("--rdzv-backend"));
}

TEST_CASE("no suggestion for words far from every option, short options or plain words") {
  CHECK_FALSE(SuggestOption("--bogus"));
  CHECK_FALSE(SuggestOption("--completely-unrelated-thing"));
  CHECK_FALSE(SuggestOption("-x"));
  CHECK_FALSE(SuggestOption("train.py"));
  CHECK_FALSE(SuggestOption("--"));
}

}  // namespace
}  // namespace cpplaunch
