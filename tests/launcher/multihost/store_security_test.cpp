#include "launcher/multihost/store_security.h"

#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <string>

namespace cpplaunch {
namespace {

namespace fs = std::filesystem;

// The store settings the command line reads from --rdzv-conf `text` and `env`.
StoreSettings Conf(const std::string& text, const EnvMap& env = {}) {
  std::string error;
  auto conf = RdzvConfig::Parse(text, &error);
  REQUIRE(conf);
  auto settings = ReadRdzvSettings(*conf, "static", env, &error);
  INFO(error);
  REQUIRE(settings);
  return settings->store;
}

struct SecretFiles {
  fs::path dir =
      fs::temp_directory_path() / ("cpplaunch_store_security_" + std::to_string(::getpid()));
  SecretFiles() {
    fs::remove_all(dir);
    fs::create_directories(dir);
  }
  ~SecretFiles() { fs::remove_all(dir); }
  std::string Write(const std::string& name, const std::string& text, mode_t mode = 0600) {
    fs::path path = dir / name;
    std::ofstream(path) << text;
    ::chmod(path.c_str(), mode);
    return path.string();
  }
};

TEST_CASE("LoadStoreSecurity: the secret from --rdzv-conf, else the environment",
          "[launcher][security]") {
  SecretFiles files;
  const std::string conf_file = files.Write("conf", "from-conf-secret-key\n");
  const std::string env_file = files.Write("env", "from-env-secret-key\n");
  const EnvMap env{{kSecretFileVariable, env_file}};
  std::string error;
  CHECK(LoadStoreSecurity(Conf("secret_file=" + conf_file, env), &error)->secret ==
        "from-conf-secret-key");
  CHECK(LoadStoreSecurity(Conf("timeout=9", env), &error)->secret == "from-env-secret-key");
  auto none = LoadStoreSecurity(Conf(""), &error);
  REQUIRE(none);
  CHECK(none->secret.empty());
  CHECK(none->allowed_peers.empty());
}

TEST_CASE("LoadStoreSecurity: an unusable file is one line naming its source",
          "[launcher][security]") {
  SecretFiles files;
  const std::string loose = files.Write("loose", "s\n", 0644);
  std::string error;
  CHECK_FALSE(LoadStoreSecurity(Conf("secret_file=" + loose), &error));
  CHECK(error == "--rdzv-conf secret_file: the secret file " + loose +
                     " is readable or writable by other users (mode 0644); run chmod 600 " + loose);
  const std::string missing = (files.dir / "missing").string();
  CHECK_FALSE(LoadStoreSecurity(Conf("", EnvMap{{kSecretFileVariable, missing}}), &error));
  CHECK_THAT(error, Catch::StartsWith("CPPLAUNCH_RDZV_SECRET_FILE: cannot open the secret file " +
                                      missing));
  // A malformed allowed_peers list is the command line's error: tests/launcher/cli.
}

TEST_CASE("LoadStoreSecurity: allowed_peers is a ';'-separated CIDR list", "[launcher][security]") {
  std::string error;
  auto security = LoadStoreSecurity(Conf("allowed_peers=10.0.0.0/8;fd00::/8"), &error);
  REQUIRE(security);
  REQUIRE(security->allowed_peers.size() == 2);
  CHECK(security->allowed_peers[1].ToString() == "fd00::/8");
}

TEST_CASE("LoadStoreSecurity: store_max_bytes is the store's total budget",
          "[launcher][security]") {
  std::string error;
  CHECK(LoadStoreSecurity(Conf("store_max_bytes=2G"), &error)->budget.total_bytes == uint64_t{2}
                                                                                         << 30);
  CHECK(LoadStoreSecurity(Conf(""), &error)->budget.total_bytes == BudgetLimits{}.total_bytes);
}

}  // namespace
}  // namespace cpplaunch
