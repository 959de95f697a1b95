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

RdzvConfig Conf(const std::string& text) {
  std::string error;
  auto conf = RdzvConfig::Parse(text, &error);
  REQUIRE(conf);
  return *conf;
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
  const std::string conf_file = files.Write("conf", "from-conf\n");
  const std::string env_file = files.Write("env", "from-env\n");
  const EnvMap env{{kSecretFileVariable, env_file}};
  std::string error;
  CHECK(LoadStoreSecurity(Conf("secret_file=" + conf_file), env, &error)->secret == "from-conf");
  CHECK(LoadStoreSecurity(Conf("timeout=9"), env, &error)->secret == "from-env");
  auto none = LoadStoreSecurity(Conf(""), EnvMap{}, &error);
  REQUIRE(none);
  CHECK(none->secret.empty());
  CHECK(none->allowed_peers.empty());
}

TEST_CASE("LoadStoreSecurity: an unusable file or list is one line naming its source",
          "[launcher][security]") {
  SecretFiles files;
  const std::string loose = files.Write("loose", "s\n", 0644);
  std::string error;
  CHECK_FALSE(LoadStoreSecurity(Conf("secret_file=" + loose), EnvMap{}, &error));
  CHECK(error == "--rdzv-conf secret_file: the secret file " + loose +
                     " is readable or writable by other users (mode 0644); run chmod 600 " + loose);
  const std::string missing = (files.dir / "missing").string();
  CHECK_FALSE(LoadStoreSecurity(Conf(""), EnvMap{{kSecretFileVariable, missing}}, &error));
  CHECK_THAT(error, Catch::StartsWith("CPPLAUNCH_RDZV_SECRET_FILE: cannot open the secret file " +
                                      missing));
  CHECK_FALSE(LoadStoreSecurity(Conf("allowed_peers=10.0.0.0/40"), EnvMap{}, &error));
  CHECK(error ==
        "--rdzv-conf allowed_peers: '10.0.0.0/40': the prefix length must be a number from 0 to "
        "32 (give CIDR blocks separated by ';', e.g. 10.0.0.0/8;fd00::/8)");
}

TEST_CASE("LoadStoreSecurity: allowed_peers is a ';'-separated CIDR list", "[launcher][security]") {
  std::string error;
  auto security = LoadStoreSecurity(Conf("allowed_peers=10.0.0.0/8;fd00::/8"), EnvMap{}, &error);
  REQUIRE(security);
  REQUIRE(security->allowed_peers.size() == 2);
  CHECK(security->allowed_peers[1].ToString() == "fd00::/8");
}

}  // namespace
}  // namespace cpplaunch
