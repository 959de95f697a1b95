#pragma once
// An etcd v3 client over etcd's JSON gateway (HTTP/1.1 POSTs to /v3/..., https optional), for
// code that runs on an io_context it must not block: the agent's etcd rendezvous. Each
// operation is a C++20 coroutine (boost::asio::awaitable) on the client's executor.
//
// Threads: every call, every callback and the destructors on the thread running the executor.
// Concurrency: any number of operations may be pending at once (each one holds its own
// keep-alive connection while it runs; idle connections are reused).
// Failover: a request goes to the member that answered last and moves round the endpoint list
// on a connection error, a timeout or an HTTP 5xx, until ClientSettings::request_timeout has
// passed since it began. A request is sent again when its connection broke after it was sent:
// Put and Delete are then repeated harmlessly, and a Txn may find its own earlier effect (its
// compares then fail; the failure branch's ranges show what is there).
// Errors: every operation throws EtcdError (etcd_error.h), one line: for kUnreachable
// "etcd put '/k' failed on every endpoint (tried for 5.0 s): 127.0.0.1:2379: Connection
// refused; 127.0.0.1:2479: no answer within 1.0 s", for kRefused etcd's own message.
// Lifetime: destroying the client closes it (Close()). A coroutine's caller keeps the client
// alive while it awaits; KeptLease and Watch need the client alive while they exist.

#include <boost/asio/any_io_executor.hpp>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "base/asio_coroutine.h"
#include "etcd_client/etcd_error.h"
#include "etcd_client/etcd_types.h"

namespace cpplaunch::etcd {

template <class T>
using Task = boost::asio::awaitable<T>;

class Client {
 public:
  // Throws EtcdError (kSetup) for an empty endpoint list or TLS files that cannot be loaded.
  Client(boost::asio::any_io_executor executor, ClientSettings settings);
  ~Client();
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  // The keys in [key, range_end); range_end "" means `key` alone, PrefixEnd(p) a prefix scan.
  // A missing key is an empty result, not an error.
  Task<RangeResult> Range(std::string key, std::string range_end = "");
  // Returns the revision of the put. lease 0 detaches the key from any lease; an unknown or
  // expired lease is EtcdError kRefused ("requested lease not found").
  Task<int64_t> Put(std::string key, std::string value, int64_t lease = 0);
  // Returns how many keys were deleted.
  Task<int64_t> Delete(std::string key, std::string range_end = "");
  // If every compare holds, runs `success`, else `failure`, atomically.
  Task<TxnResult> Txn(std::vector<Compare> compare, std::vector<TxnOp> success,
                      std::vector<TxnOp> failure);
  // Returns the new lease's id; etcd may raise a short ttl to its minimum (2 s in 3.4).
  Task<int64_t> GrantLease(std::chrono::seconds ttl);
  // Renews the lease once; returns its ttl again, or 0 s when it expired or was revoked.
  Task<std::chrono::seconds> KeepAliveOnce(int64_t lease);
  // Deletes the lease and every key attached to it; an unknown lease is not an error.
  Task<void> RevokeLease(int64_t lease);
  // Makes etcd forget revisions before `revision` (watches started before it are cancelled with
  // compact_revision). For tests and operators; the agent never compacts.
  Task<void> Compact(int64_t revision);

  // Pending operations end with EtcdError kClosed, later ones throw it at once; kept leases
  // stop and watches end as after Cancel() (without on_end).
  void Close();
  bool closed() const;
  const ClientSettings& settings() const;
  boost::asio::any_io_executor executor() const;

  struct Impl;  // shared with KeptLease and Watch (etcd_client_impl.h)
  const std::shared_ptr<Impl>& impl() const { return impl_; }

 private:
  std::shared_ptr<Impl> impl_;
};

}  // namespace cpplaunch::etcd

// The helpers built on the client, declared in their own headers.
#include "etcd_client/etcd_watch.h"  // IWYU pragma: export
#include "etcd_client/kept_lease.h"  // IWYU pragma: export
