#include "launcher/cli/rdzv_settings.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "launcher/cli/options.h"

namespace cpplaunch {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

RdzvSettings Read(std::string_view text, std::string_view backend, const EnvMap& env = {}) {
  std::string error;
  auto conf = RdzvConfig::Parse(text, &error);
  REQUIRE(conf);
  auto settings = ReadRdzvSettings(*conf, backend, env, &error);
  INFO(error);
  REQUIRE(settings);
  return *settings;
}

// The error, checked to be one line.
std::string Error(std::string_view text, std::string_view backend) {
  std::string error;
  auto conf = RdzvConfig::Parse(text, &error);
  REQUIRE(conf);
  REQUIRE_FALSE(ReadRdzvSettings(*conf, backend, EnvMap{}, &error));
  CHECK(error.find('\n') == std::string::npos);
  return error;
}

// Through the whole command line: a refusal, exit 2.
std::string Refused(const std::vector<std::string>& argv) {
  ParseResult r = ParseOptions(argv, EnvMap{}, HostProbe{[] { return 8; }, [] { return 0; }});
  INFO(r.message);
  REQUIRE(r.status == ParseStatus::kRefused);
  REQUIRE(r.exit_code() == 2);
  CHECK(r.message.find('\n') == std::string::npos);
  return r.message;
}

TEST_CASE("rdzv settings: the timings, in seconds with fractions, on every backend") {
  for (const char* backend : {"static", "c10d", "etcd", "etcd-v2", "etcd-v3"}) {
    const RdzvTimings t =
        Read(
            "timeout=30,join_timeout=7,last_call_timeout=1.25,close_timeout=2,read_timeout=9,"
            "keep_alive_interval=0.5,heartbeat_timeout=3,keep_alive_max_attempt=4",
            backend)
            .timings;
    CHECK(t.timeout == seconds(30));
    CHECK(t.join_timeout == seconds(7));
    CHECK(t.last_call_timeout == milliseconds(1250));
    CHECK(t.close_timeout == seconds(2));
    CHECK(t.read_timeout == seconds(9));
    CHECK(t.keep_alive_interval == milliseconds(500));
    CHECK(t.heartbeat_timeout == seconds(3));
    CHECK(t.keep_alive_max_attempt == 4);
  }
  CHECK(Read("", "c10d") == RdzvSettings{});  // nothing given: every default is the agent's
}

TEST_CASE("rdzv settings: the store's keys on every backend, the secret file from the env") {
  for (const char* backend : {"static", "c10d", "etcd-v3"}) {
    const StoreSettings s =
        Read("secret_file=/s,allowed_peers=10.0.0.0/8;fd00::/8,store_max_bytes=512M", backend)
            .store;
    CHECK(s.secret_file == "/s");
    CHECK(s.secret_source == "--rdzv-conf secret_file");
    REQUIRE(s.allowed_peers.size() == 2);
    CHECK(s.allowed_peers[0].ToString() == "10.0.0.0/8");
    CHECK(s.max_bytes == uint64_t{512} << 20);
  }
  const EnvMap env{{kSecretFileVariable, "/e"}};
  CHECK(Read("secret_file=/s", "c10d", env).store.secret_file == "/s");
  const StoreSettings from_env = Read("", "c10d", env).store;
  CHECK(from_env.secret_file == "/e");
  CHECK(from_env.secret_source == "CPPLAUNCH_RDZV_SECRET_FILE");
  CHECK(Read("store_max_bytes=1073741824", "static").store.max_bytes == uint64_t{1} << 30);
  CHECK(Read("store_max_bytes=2GiB", "static").store.max_bytes == uint64_t{2} << 30);
  CHECK(Read("store_max_bytes=16m", "static").store.max_bytes == uint64_t{16} << 20);
}

TEST_CASE("rdzv settings: is_host for static and c10d, TLS and the prefix for etcd") {
  CHECK(Read("is_host=yes", "c10d").is_host == true);
  CHECK(Read("is_host=0", "static").is_host == false);
  CHECK_FALSE(Read("", "c10d").is_host);

  const EtcdConfSettings legacy =
      Read("protocol=https,cacert=/ca.pem,cert=/c.pem,key=/k.pem,etcd_prefix=/team/a", "etcd").etcd;
  CHECK(legacy.https);
  CHECK(legacy.ca_file == "/ca.pem");
  CHECK(legacy.cert_file == "/c.pem");
  CHECK(legacy.key_file == "/k.pem");
  CHECK(legacy.prefix == "/team/a");
  const EtcdConfSettings v2 =
      Read("protocol=https,ca_cert=/a,ssl_cert=/b,ssl_cert_key=/c", "etcd-v2").etcd;
  CHECK(v2.ca_file == "/a");
  CHECK(v2.cert_file == "/b");
  CHECK(v2.key_file == "/c");
  CHECK(Read("cacert=/x,ca_cert=/y,protocol=https", "etcd-v3").etcd.ca_file == "/x");  // legacy
  CHECK_FALSE(Read("", "etcd-v3").etcd.https);
  CHECK_FALSE(Read("", "etcd-v3").etcd.prefix);
}

TEST_CASE("rdzv settings: an unknown key is one line listing the backend's keys") {
  CHECK(Error("timout=5", "c10d") ==
        "--rdzv-conf: unknown key 'timout' (the c10d rendezvous reads allowed_peers, "
        "close_timeout, heartbeat_timeout, is_host, join_timeout, keep_alive_interval, "
        "keep_alive_max_attempt, last_call_timeout, quarantine_after, read_timeout, secret_file, "
        "segment, store_max_bytes, timeout)");
  CHECK(Error("store_type=tcp", "static").starts_with("--rdzv-conf: unknown key 'store_type'"));
  CHECK(Error("x=1", "etcd-v3").find("etcd_prefix") != std::string::npos);
}

TEST_CASE("rdzv settings: a key of another backend is one line naming both") {
  CHECK(Error("etcd_prefix=/a", "c10d") ==
        "--rdzv-conf: 'etcd_prefix' is a key of the etcd, etcd-v2, etcd-v3 rendezvous, not of "
        "c10d");
  CHECK(Error("protocol=https", "static") ==
        "--rdzv-conf: 'protocol' is a key of the etcd, etcd-v2, etcd-v3 rendezvous, not of "
        "static");
  CHECK(Error("is_host=1", "etcd-v3") ==
        "--rdzv-conf: 'is_host' is a key of the static, c10d rendezvous, not of etcd-v3");
  CHECK(Error("quarantine_after=1", "static") ==
        "--rdzv-conf: 'quarantine_after' is a key of the c10d, etcd, etcd-v2, etcd-v3 "
        "rendezvous, not of static");
}

TEST_CASE("rdzv settings: quarantine_after, an integer from 0 (never), dynamic backends only") {
  CHECK_FALSE(Read("", "c10d").quarantine_after);
  CHECK(Read("quarantine_after=3", "c10d").quarantine_after == 3);
  CHECK(Read("quarantine_after=0", "etcd-v3").quarantine_after == 0);
  CHECK(Error("quarantine_after=-1", "c10d") ==
        "The rendezvous configuration option 'quarantine_after' must be at least 0 (0: never)");
  CHECK(Error("quarantine_after=twice", "c10d").find("'quarantine_after' does not represent") !=
        std::string::npos);
}

TEST_CASE("rdzv settings: segment, a short name, dynamic backends only") {
  CHECK(Read("", "c10d").segment.empty());
  CHECK(Read("segment=nvl72-rack3", "etcd-v3").segment == "nvl72-rack3");
  CHECK(Error("segment=a b", "c10d") ==
        "The rendezvous configuration option 'segment' must be 1 to 64 letters, digits or . _ : / "
        "- (for example nvl72-rack3), not 'a b'");
  CHECK(Error("segment=x", "static").starts_with("--rdzv-conf: 'segment' is a key of the c10d"));
}

TEST_CASE("rdzv settings: a malformed value is one line naming the key") {
  CHECK(Error("timeout=soon", "c10d") ==
        "The rendezvous configuration option 'timeout' does not represent a valid number of "
        "seconds: 'soon'");
  CHECK(Error("keep_alive_max_attempt=0", "c10d") ==
        "The rendezvous configuration option 'keep_alive_max_attempt' must be at least 1");
  CHECK(Error("keep_alive_max_attempt=two", "c10d") ==
        "The rendezvous configuration option 'keep_alive_max_attempt' does not represent a "
        "valid integer value.");
  CHECK(Error("keep_alive_interval=-1", "c10d")
            .find("'keep_alive_interval' does not represent a valid number of seconds") !=
        std::string::npos);
  CHECK(Error("is_host=maybe", "c10d").find("'is_host' does not represent a valid boolean") !=
        std::string::npos);
  CHECK(Error("allowed_peers=10.0.0.0/40", "static") ==
        "--rdzv-conf allowed_peers: '10.0.0.0/40': the prefix length must be a number from 0 to "
        "32 (give CIDR blocks separated by ';', e.g. 10.0.0.0/8;fd00::/8)");
  CHECK(Error("store_max_bytes=1M", "static") ==
        "The rendezvous configuration option 'store_max_bytes' must be a byte count of at "
        "least 16M (for example 1073741824, 512M or 2G), not '1M'");
  CHECK(Error("store_max_bytes=lots", "static").ends_with("not 'lots'"));
  CHECK(Error("protocol=ftp", "etcd-v3") ==
        "The rendezvous configuration option 'protocol' must be http or https, not 'ftp'");
  CHECK(Error("cacert=/ca.pem", "etcd-v3").find("protocol=https") != std::string::npos);
  CHECK(Error("protocol=https,cert=/c.pem", "etcd-v3").find("both cert") != std::string::npos);
  CHECK(Error("etcd_prefix=team", "etcd-v3") ==
        "The rendezvous configuration option 'etcd_prefix' must start with '/': 'team'");
}

TEST_CASE("rdzv settings: every error is a refusal of the command line, exit 2") {
  CHECK(Refused({"--rdzv-backend=c10d", "--rdzv-conf=etcd_prefix=/a", "t.py"})
            .starts_with("--rdzv-conf: 'etcd_prefix' is a key of the etcd"));
  // --standalone is c10d, whatever --rdzv-backend says.
  CHECK(Refused({"--standalone", "--rdzv-backend=etcd", "--rdzv-conf=etcd_prefix=/a", "t.py"})
            .ends_with("not of c10d"));
  CHECK(Refused({"--rdzv-conf=bogus=1", "t.py"}).starts_with("--rdzv-conf: unknown key 'bogus'"));
  CHECK(Refused({"--rdzv-conf=store_max_bytes=1", "t.py"}).find("store_max_bytes") !=
        std::string::npos);
  CHECK(Refused({"--rdzv-conf=a=1,,b=2", "t.py"}).find("must be in format") != std::string::npos);
}

}  // namespace
}  // namespace cpplaunch
