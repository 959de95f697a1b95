#include "rendezvous/etcd/etcd_link.h"

#include <utility>

namespace cpplaunch {

EtcdLink::EtcdLink(boost::asio::any_io_executor executor, EtcdSettings settings,
                   const std::string& run_id)
    : settings_(std::move(settings)),
      keys_(settings_.prefix, run_id),
      client_(std::move(executor), settings_.client) {}

EtcdLink::~EtcdLink() {
  *alive_ = false;
  Close();
}

std::string EtcdLink::Endpoints() const {
  std::string text;
  for (const auto& endpoint : settings_.client.endpoints) {
    text += (text.empty() ? "" : ",") + endpoint.ToString();
  }
  return text;
}

EtcdLink::Task<void> EtcdLink::EnsureLease() {
  if (lease_) co_return;
  auto alive = alive_;
  // Arguments of a co_await expression are named, never temporaries: GCC 12 destroys those twice.
  std::function<void()> on_lost = [this, alive] {
    if (*alive) LeaseLost();
  };
  auto lease = co_await etcd::KeepLease(client_, settings_.lease_ttl, std::move(on_lost));
  if (!*alive) co_return;
  lease_ = std::move(lease);
}

int64_t EtcdLink::lease() const { return lease_ ? lease_->id() : 0; }

void EtcdLink::LeaseLost() {
  lease_lost_ = true;
  if (auto fn = std::exchange(on_lease_lost_, nullptr)) fn();
}

void EtcdLink::OnLeaseLost(std::function<void()> fn) {
  if (lease_lost_) return fn();
  on_lease_lost_ = std::move(fn);
}

EtcdLink::Task<void> EtcdLink::RevokeLease() {
  if (!lease_) co_return;
  try {
    co_await lease_->Revoke();
  } catch (const std::exception&) {
    // The lease expires by itself after its TTL.
  }
}

EtcdLink::Task<RoundEnd> EtcdLink::EndRound(int64_t round, RoundEnd notice) {
  const std::string key = keys_.End(round);
  std::vector<etcd::Compare> compare{etcd::Compare::Absent(key)};
  std::vector<etcd::TxnOp> success{etcd::TxnOp::Put(key, notice.Encode())};
  std::vector<etcd::TxnOp> failure{etcd::TxnOp::Range(key)};
  etcd::TxnResult result =
      co_await client_.Txn(std::move(compare), std::move(success), std::move(failure));
  if (result.succeeded) co_return notice;
  if (result.ranges.empty() || result.ranges.front().kvs.empty()) co_return notice;
  std::string error;
  auto stored = RoundEnd::Decode(result.ranges.front().kvs.front().value, &error);
  if (!stored) {
    throw etcd::EtcdError(etcd::EtcdError::Kind::kMalformed,
                          "etcd at " + Endpoints() + " holds an unreadable round-end notice at " +
                              key + ": " + error);
  }
  co_return *stored;
}

void EtcdLink::Close() {
  on_lease_lost_ = nullptr;
  lease_.reset();
  client_.Close();
}

}  // namespace cpplaunch
