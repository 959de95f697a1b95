#include "launcher/multihost/etcd_plan.h"

#include <cmath>

#include "base/text.h"
#include "rendezvous/store/endpoint.h"

namespace cpplaunch {
namespace {

bool ReadEndpoints(const std::string& text, EtcdSettings* settings, std::string* error) {
  if (Strip(text).empty()) {
    *error =
        "--rdzv-endpoint=host[:port][,host[:port]...] is required for the etcd rendezvous "
        "(the etcd cluster's client endpoints)";
    return false;
  }
  for (std::string_view item : Split(text, ',')) {
    std::string why;
    auto endpoint = ParseEndpoint(Strip(item), &why);
    if (!endpoint) {
      *error = "--rdzv-endpoint: '" + std::string(Strip(item)) + "': " + why;
      return false;
    }
    settings->client.endpoints.push_back(
        etcd::Endpoint{endpoint->host, endpoint->port >= 0 ? endpoint->port : kDefaultEtcdPort});
  }
  return true;
}

// The first of `names` given wins; the legacy backend's names come first.
std::string FirstOf(const RdzvConfig& conf, std::initializer_list<const char*> names) {
  for (const char* name : names) {
    if (auto value = conf.Get(name)) return *value;
  }
  return "";
}

bool ReadTls(const RdzvConfig& conf, EtcdSettings* settings, std::string* error) {
  const std::string protocol = conf.Get("protocol").value_or("http");
  if (protocol != "http" && protocol != "https") {
    *error = "The rendezvous configuration option 'protocol' must be http or https, not '" +
             protocol + "'";
    return false;
  }
  etcd::TlsFiles& tls = settings->client.tls;
  tls.ca_file = FirstOf(conf, {"cacert", "ca_cert"});
  tls.cert_file = FirstOf(conf, {"cert", "ssl_cert"});
  tls.key_file = FirstOf(conf, {"key", "ssl_cert_key"});
  settings->client.https = protocol == "https";
  if (!settings->client.https && !(tls.ca_file + tls.cert_file + tls.key_file).empty()) {
    *error = "--rdzv-conf names TLS files but not protocol=https (add it, or drop the files)";
    return false;
  }
  if (tls.cert_file.empty() != tls.key_file.empty()) {
    *error = "--rdzv-conf: a client certificate needs both cert (ssl_cert) and key (ssl_cert_key)";
    return false;
  }
  return true;
}

}  // namespace

std::chrono::seconds EtcdLeaseTtl(std::chrono::milliseconds keep_alive_interval,
                                  int keep_alive_max_attempt) {
  const auto total = keep_alive_interval * std::max(keep_alive_max_attempt, 1);
  const auto seconds = std::chrono::ceil<std::chrono::seconds>(total);
  return std::max(seconds, std::chrono::seconds(2));
}

std::optional<EtcdSettings> PlanEtcd(const LaunchOptions& options, std::string* error) {
  EtcdSettings settings;
  if (!ReadEndpoints(options.rdzv_endpoint, &settings, error) ||
      !ReadTls(options.rdzv_conf, &settings, error)) {
    return std::nullopt;
  }
  if (auto prefix = options.rdzv_conf.Get("etcd_prefix")) {
    if (prefix->empty() || prefix->front() != '/') {
      *error = "The rendezvous configuration option 'etcd_prefix' must start with '/': '" +
               *prefix + "'";
      return std::nullopt;
    }
    settings.prefix = *prefix;
  }
  return settings;
}

}  // namespace cpplaunch
