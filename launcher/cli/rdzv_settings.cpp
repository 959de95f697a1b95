#include "launcher/cli/rdzv_settings.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <iterator>

#include "base/text.h"
#include "rendezvous/core/segments.h"

namespace cpplaunch {
namespace {

using std::chrono::milliseconds;

// Which backends read a key.
enum Family : unsigned {
  kStatic = 1,
  kC10d = 2,
  kEtcd = 4,
  kEvery = kStatic | kC10d | kEtcd,
  kStoreElection = kStatic | kC10d,
  kDynamic = kC10d | kEtcd,
};

// Reads one key's value into the settings; false with *error (one line) when malformed.
using Reader = bool (*)(const std::string& key, const std::string& value, RdzvSettings* out,
                        std::string* error);

struct Key {
  std::string_view name;
  unsigned families;
  Reader read;  // nullptr: read after every key is known (keys that depend on each other)
};

// Below this the job's own keys (a few KiB per worker) and replies might not fit.
constexpr uint64_t kMinStoreBytes = uint64_t{16} << 20;

// torchrun takes whole seconds; fractions are accepted too (tests use short heartbeats).
std::optional<milliseconds> ParseSeconds(const std::string& key, const std::string& text,
                                         std::string* error) {
  char* end = nullptr;
  const double value = std::strtod(text.c_str(), &end);
  if (text.empty() || *end != '\0' || !std::isfinite(value) || value < 0) {
    *error = "The rendezvous configuration option '" + key +
             "' does not represent a valid number of seconds: '" + text + "'";
    return std::nullopt;
  }
  return milliseconds(static_cast<int64_t>(std::llround(value * 1000)));
}

template <std::optional<milliseconds> RdzvTimings::*field>
bool ReadSeconds(const std::string& key, const std::string& value, RdzvSettings* out,
                 std::string* error) {
  out->timings.*field = ParseSeconds(key, value, error);
  return (out->timings.*field).has_value();
}

// `value` as an integer of at least `minimum` (capped at INT32_MAX); nullopt with *error naming
// the key, or saying `too_small` for a value below the minimum.
std::optional<int> ReadIntAtLeast(const std::string& key, const std::string& value, int64_t minimum,
                                  const std::string& too_small, std::string* error) {
  RdzvConfig one;
  one.Set(key, value);
  auto number = one.GetInt(key, 0, error);
  if (!number) return std::nullopt;
  if (*number < minimum) {
    *error = too_small;
    return std::nullopt;
  }
  return static_cast<int>(std::min<int64_t>(*number, INT32_MAX));
}

bool ReadKeepAliveMaxAttempt(const std::string& key, const std::string& value, RdzvSettings* out,
                             std::string* error) {
  out->timings.keep_alive_max_attempt = ReadIntAtLeast(
      key, value, 1,
      "The rendezvous configuration option 'keep_alive_max_attempt' must be at least 1", error);
  return out->timings.keep_alive_max_attempt.has_value();
}

bool ReadQuarantineAfter(const std::string& key, const std::string& value, RdzvSettings* out,
                         std::string* error) {
  out->quarantine_after = ReadIntAtLeast(
      key, value, 0,
      "The rendezvous configuration option 'quarantine_after' must be at least 0 (0: never)",
      error);
  return out->quarantine_after.has_value();
}

bool ReadSegment(const std::string&, const std::string& value, RdzvSettings* out,
                 std::string* error) {
  if (!IsSegmentName(value)) {
    *error =
        "The rendezvous configuration option 'segment' must be 1 to 64 letters, digits or "
        ". _ : / - (for example nvl72-rack3), not '" +
        value + "'";
    return false;
  }
  out->segment = value;
  return true;
}

bool ReadIsHost(const std::string& key, const std::string& value, RdzvSettings* out,
                std::string* error) {
  RdzvConfig one;
  one.Set(key, value);
  out->is_host = one.GetBool(key, false, error);
  return out->is_host.has_value();
}

bool ReadSecretFilePath(const std::string&, const std::string& value, RdzvSettings* out,
                        std::string*) {
  out->store.secret_file = value;
  out->store.secret_source = "--rdzv-conf secret_file";
  return true;
}

bool ReadAllowedPeers(const std::string&, const std::string& value, RdzvSettings* out,
                      std::string* error) {
  std::string why;
  auto networks = ParsePeerNetworks(value, &why);
  if (!networks) {
    *error = "--rdzv-conf allowed_peers: " + why +
             " (give CIDR blocks separated by ';', e.g. 10.0.0.0/8;fd00::/8)";
    return false;
  }
  out->store.allowed_peers = std::move(*networks);
  return true;
}

// "1073741824", "512M", "2G", "2GiB", "64k" -> bytes; nullopt when malformed or too large.
std::optional<uint64_t> ParseByteCount(std::string_view text) {
  size_t digits = 0;
  uint64_t value = 0;
  for (; digits < text.size() && text[digits] >= '0' && text[digits] <= '9'; ++digits) {
    if (value > (UINT64_MAX - 9) / 10) return std::nullopt;
    value = value * 10 + static_cast<uint64_t>(text[digits] - '0');
  }
  if (digits == 0) return std::nullopt;
  std::string unit(text.substr(digits));
  for (char& c : unit) c = static_cast<char>(c >= 'a' && c <= 'z' ? c - 'a' + 'A' : c);
  if (unit.ends_with("IB")) unit.resize(unit.size() - 2);
  int shift = 0;
  if (unit == "K") {
    shift = 10;
  } else if (unit == "M") {
    shift = 20;
  } else if (unit == "G") {
    shift = 30;
  } else if (unit == "T") {
    shift = 40;
  } else if (!unit.empty() && unit != "B") {
    return std::nullopt;
  }
  if (value > (UINT64_MAX >> shift)) return std::nullopt;
  return value << shift;
}

bool ReadStoreMaxBytes(const std::string&, const std::string& value, RdzvSettings* out,
                       std::string* error) {
  auto bytes = ParseByteCount(value);
  if (!bytes || *bytes < kMinStoreBytes) {
    *error =
        "The rendezvous configuration option 'store_max_bytes' must be a byte count of at "
        "least 16M (for example 1073741824, 512M or 2G), not '" +
        value + "'";
    return false;
  }
  out->store.max_bytes = *bytes;
  return true;
}

bool ReadEtcdPrefix(const std::string&, const std::string& value, RdzvSettings* out,
                    std::string* error) {
  if (value.front() != '/') {
    *error =
        "The rendezvous configuration option 'etcd_prefix' must start with '/': '" + value + "'";
    return false;
  }
  out->etcd.prefix = value;
  return true;
}

// In name order, as the error for an unknown key lists them.
constexpr Key kKeys[] = {
    {"allowed_peers", kEvery, ReadAllowedPeers},
    {"ca_cert", kEtcd, nullptr},
    {"cacert", kEtcd, nullptr},
    {"cert", kEtcd, nullptr},
    {"close_timeout", kEvery, ReadSeconds<&RdzvTimings::close_timeout>},
    {"etcd_prefix", kEtcd, ReadEtcdPrefix},
    {"heartbeat_timeout", kEvery, ReadSeconds<&RdzvTimings::heartbeat_timeout>},
    {"is_host", kStoreElection, ReadIsHost},
    {"join_timeout", kEvery, ReadSeconds<&RdzvTimings::join_timeout>},
    {"keep_alive_interval", kEvery, ReadSeconds<&RdzvTimings::keep_alive_interval>},
    {"keep_alive_max_attempt", kEvery, ReadKeepAliveMaxAttempt},
    {"key", kEtcd, nullptr},
    {"last_call_timeout", kEvery, ReadSeconds<&RdzvTimings::last_call_timeout>},
    {"protocol", kEtcd, nullptr},
    {"quarantine_after", kDynamic, ReadQuarantineAfter},
    {"read_timeout", kEvery, ReadSeconds<&RdzvTimings::read_timeout>},
    {"secret_file", kEvery, ReadSecretFilePath},
    {"segment", kDynamic, ReadSegment},
    {"ssl_cert", kEtcd, nullptr},
    {"ssl_cert_key", kEtcd, nullptr},
    {"store_max_bytes", kEvery, ReadStoreMaxBytes},
    {"timeout", kEvery, ReadSeconds<&RdzvTimings::timeout>},
};

unsigned FamilyOf(std::string_view backend) {
  if (backend == "static") return kStatic;
  if (backend == "c10d") return kC10d;
  return kEtcd;  // etcd, etcd-v2, etcd-v3: the caller checked the name
}

std::string FamilyNames(unsigned families) {
  std::vector<std::string> names;
  if (families & kStatic) names.emplace_back("static");
  if (families & kC10d) names.emplace_back("c10d");
  if (families & kEtcd) names.emplace_back("etcd, etcd-v2, etcd-v3");
  return Join(names, ", ");
}

std::string KeysOf(unsigned family) {
  std::vector<std::string> names;
  for (const Key& key : kKeys) {
    if (key.families & family) names.emplace_back(key.name);
  }
  return Join(names, ", ");
}

// Checks that `name` is a key of `backend` and reads its value.
bool ReadKey(const std::string& name, const std::string& value, std::string_view backend,
             RdzvSettings* out, std::string* error) {
  const unsigned family = FamilyOf(backend);
  const Key* key = std::find_if(std::begin(kKeys), std::end(kKeys),
                                [&](const Key& k) { return k.name == name; });
  if (key == std::end(kKeys)) {
    *error = "--rdzv-conf: unknown key '" + name + "' (the " + std::string(backend) +
             " rendezvous reads " + KeysOf(family) + ")";
    return false;
  }
  if (!(key->families & family)) {
    *error = "--rdzv-conf: '" + name + "' is a key of the " + FamilyNames(key->families) +
             " rendezvous, not of " + std::string(backend);
    return false;
  }
  return key->read == nullptr || key->read(name, value, out, error);
}

// The first of `names` given wins; the legacy backend's names come first.
std::string FirstOf(const RdzvConfig& conf, std::initializer_list<const char*> names) {
  for (const char* name : names) {
    if (auto value = conf.Get(name)) return *value;
  }
  return "";
}

bool ReadEtcdTls(const RdzvConfig& conf, EtcdConfSettings* etcd, std::string* error) {
  const std::string protocol = conf.Get("protocol").value_or("http");
  if (protocol != "http" && protocol != "https") {
    *error = "The rendezvous configuration option 'protocol' must be http or https, not '" +
             protocol + "'";
    return false;
  }
  etcd->https = protocol == "https";
  etcd->ca_file = FirstOf(conf, {"cacert", "ca_cert"});
  etcd->cert_file = FirstOf(conf, {"cert", "ssl_cert"});
  etcd->key_file = FirstOf(conf, {"key", "ssl_cert_key"});
  if (!etcd->https && !(etcd->ca_file + etcd->cert_file + etcd->key_file).empty()) {
    *error = "--rdzv-conf names TLS files but not protocol=https (add it, or drop the files)";
    return false;
  }
  if (etcd->cert_file.empty() != etcd->key_file.empty()) {
    *error = "--rdzv-conf: a client certificate needs both cert (ssl_cert) and key (ssl_cert_key)";
    return false;
  }
  return true;
}

}  // namespace

std::optional<RdzvSettings> ReadRdzvSettings(const RdzvConfig& conf, std::string_view backend,
                                             const EnvMap& env, std::string* error) {
  RdzvSettings settings;
  for (const auto& [name, value] : conf.values()) {
    if (!ReadKey(name, value, backend, &settings, error)) return std::nullopt;
  }
  if (FamilyOf(backend) == kEtcd && !ReadEtcdTls(conf, &settings.etcd, error)) {
    return std::nullopt;
  }
  if (!settings.store.secret_file) {
    settings.store.secret_file = Lookup(env, kSecretFileVariable);
    settings.store.secret_source = settings.store.secret_file ? kSecretFileVariable : "";
  }
  return settings;
}

}  // namespace cpplaunch
