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

TEST_CASE("a misspelled last word still gets the one option whose name it starts like") {
  // Issue 27: four edits from --master-addr, too many for the edit distance alone.
  CHECK(SuggestOption("--master-adress=h") == std::optional<std::string>("--master-addr"));
  CHECK(SuggestOption("--master_adress") == std::optional<std::string>("--master_addr"));
  // The shared part must reach two letters into the option's last word.
  CHECK_FALSE(SuggestOption("--master-zzz-thing"));
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
