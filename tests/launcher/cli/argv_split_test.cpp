#include "launcher/cli/argv_split.h"

#include <catch2/catch.hpp>

namespace cpplaunch {
namespace {

using Words = std::vector<std::string>;

TEST_CASE("the split puts the script and every word after it aside, untouched") {
  const ArgvSplit split = SplitAtScript({"--nproc", "2", "-m", "train.py", "-r", "3", "--no"});
  CHECK(split.option_words == Words{"--nproc", "2", "-m"});
  CHECK(split.script == "train.py");
  CHECK(split.script_args == Words{"-r", "3", "--no"});
  CHECK_FALSE(split.help);
  CHECK_FALSE(split.error);
}

TEST_CASE("the split passes forms Program_options reads like argparse as they are") {
  CHECK(SplitAtScript({"-mr3", "s"}).option_words == Words{"-mr3"});
  CHECK(SplitAtScript({"-mr", "2", "s"}).option_words == Words{"-mr", "2"});
  CHECK(SplitAtScript({"--nproc_per=3", "s"}).option_words == Words{"--nproc_per=3"});
  CHECK(SplitAtScript({"--role=-x", "s"}).option_words == Words{"--role=-x"});
  CHECK(SplitAtScript({"--node-rank", "-5", "s"}).option_words == Words{"--node-rank", "-5"});
}

TEST_CASE("the split rewrites the forms Program_options reads differently") {
  CHECK(SplitAtScript({"-r=3", "s"}).option_words == Words{"--redirects=3"});
  CHECK(SplitAtScript({"-r=", "s"}).option_words == Words{"--redirects", ""});
  CHECK(SplitAtScript({"--role=", "s"}).option_words == Words{"--role", ""});
  CHECK(SplitAtScript({"--rol=", "s"}).option_words == Words{"--role", ""});
}

TEST_CASE("unknown option words are collected, not passed on") {
  const ArgvSplit split = SplitAtScript({"--bogus=1", "-m", "-x", "---m", "s"});
  CHECK(split.unrecognized == Words{"--bogus=1", "-x", "---m"});
  CHECK(split.option_words == Words{"-m"});
  CHECK(split.script == "s");
}

TEST_CASE("help stops the split; the words before it are still read") {
  const ArgvSplit split = SplitAtScript({"--max-restarts", "x", "-mh", "--bogus", "s"});
  CHECK(split.help);
  CHECK(split.option_words == Words{"--max-restarts", "x"});
  CHECK_FALSE(split.script);
}

TEST_CASE("an error stops the split after the words before it") {
  const ArgvSplit split = SplitAtScript({"--max-restarts", "x", "--role", "-y", "s"});
  CHECK(split.error == "argument --role: expected one argument");
  CHECK(split.option_words == Words{"--max-restarts", "x"});
  CHECK_FALSE(split.script);
  CHECK(SplitAtScript({"--rdzv-conf", "--no"}).error.value().starts_with("ambiguous option: --no"));
  CHECK(SplitAtScript({"-m=1", "s"}).error ==
        "argument -m/--module: ignored explicit argument '1'");
}

TEST_CASE("a bare -- makes the next word the script; without one there is no script") {
  CHECK(SplitAtScript({"--", "-r"}).script == "-r");
  const ArgvSplit end = SplitAtScript({"-m", "--"});
  CHECK_FALSE(end.script);
  CHECK_FALSE(end.error);
}

}  // namespace
}  // namespace cpplaunch
