#include "launcher/multihost/etcd_plan.h"

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

}  // namespace

std::chrono::seconds EtcdLeaseTtl(std::chrono::milliseconds keep_alive_interval,
                                  int keep_alive_max_attempt) {
  const auto total = keep_alive_interval * std::max(keep_alive_max_attempt, 1);
  const auto seconds = std::chrono::ceil<std::chrono::seconds>(total);
  return std::max(seconds, std::chrono::seconds(2));
}

std::chrono::milliseconds EtcdRequestTimeout(std::chrono::milliseconds base, int max_nodes,
                                             std::chrono::milliseconds join_timeout) {
  return std::min(std::max(base, kEtcdQueuePerAgent * std::max(max_nodes, 1)), join_timeout);
}

std::optional<EtcdSettings> PlanEtcd(const LaunchOptions& options, std::string* error) {
  EtcdSettings settings;
  if (!ReadEndpoints(options.rdzv_endpoint, &settings, error)) return std::nullopt;
  const EtcdConfSettings& conf = options.rdzv.etcd;
  settings.client.https = conf.https;
  settings.client.tls = etcd::TlsFiles{conf.ca_file, conf.cert_file, conf.key_file};
  if (conf.prefix) settings.prefix = *conf.prefix;
  return settings;
}

}  // namespace cpplaunch
