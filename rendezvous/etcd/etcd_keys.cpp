#include "rendezvous/etcd/etcd_keys.h"

namespace cpplaunch {

EtcdKeys::EtcdKeys(std::string_view prefix, std::string_view run_id) {
  while (!prefix.empty() && prefix.back() == '/') prefix.remove_suffix(1);
  run_ = std::string(prefix) + "/" + std::string(run_id) + "/";
}

std::string EtcdKeys::State() const { return run_ + "state"; }
std::string EtcdKeys::Summary() const { return run_ + "summary"; }
std::string EtcdKeys::Joins() const { return run_ + "join/"; }
std::string EtcdKeys::Join(std::string_view node_id) const {
  return Joins() + std::string(node_id);
}
std::string EtcdKeys::Inbox(std::string_view node_id) const {
  return run_ + "inbox/" + std::string(node_id) + "/";
}
std::string EtcdKeys::Answer(std::string_view node_id) const { return Inbox(node_id) + "answer"; }
std::string EtcdKeys::EpochStep(std::string_view node_id) const { return Inbox(node_id) + "epoch"; }
std::string EtcdKeys::Assignment(std::string_view node_id) const {
  return Inbox(node_id) + "assign";
}
std::string EtcdKeys::Admitter() const { return run_ + "admitter"; }
std::string EtcdKeys::Nodes() const { return run_ + "node/"; }
std::string EtcdKeys::Node(std::string_view node_id) const {
  return Nodes() + std::string(node_id);
}
std::string EtcdKeys::Round(int64_t round) const {
  return run_ + "r" + std::to_string(round) + "/";
}
std::string EtcdKeys::End(int64_t round) const { return Round(round) + "end"; }
std::string EtcdKeys::Barrier(int64_t round) const { return Round(round) + "barrier/"; }
std::string EtcdKeys::Arrival(int64_t round, int group_rank) const {
  return Barrier(round) + std::to_string(group_rank);
}

std::string EtcdKeys::NodeIdOf(std::string_view key) const {
  const std::string nodes = Nodes();
  if (key.size() <= nodes.size() || key.substr(0, nodes.size()) != nodes) return "";
  return std::string(key.substr(nodes.size()));
}

std::string EtcdKeys::ClearCommand(std::string_view endpoints) const {
  return "etcdctl --endpoints=" + std::string(endpoints) + " del --prefix " + run_;
}

}  // namespace cpplaunch
