#pragma once
// Real etcd members for the etcd client's tests, started by tests/etcd/etcd_cluster.py (run as
// a script with its stdin and stdout on pipes), and helpers to run the client's coroutines.
//
// The script stops every member and removes their directories when its stdin closes: when the
// cluster is destroyed, and also when the test process dies in any way. When etcd is not
// installed, the constructor prints the reason and exits the test process with 77 (ctest's
// SKIP_RETURN_CODE for these tests).

#include <boost/asio/io_context.hpp>
#include <boost/asio/use_future.hpp>
#include <chrono>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "etcd_client/etcd_client.h"

namespace cpplaunch::etcd::testing {

class EtcdTestCluster {
 public:
  explicit EtcdTestCluster(int members, bool tls = false);
  ~EtcdTestCluster();
  EtcdTestCluster(const EtcdTestCluster&) = delete;
  EtcdTestCluster& operator=(const EtcdTestCluster&) = delete;

  // SIGKILLs member i (its data stays) / restarts it and waits until it is healthy.
  void Stop(int i);
  void Start(int i);
  // SIGSTOPs member i (its connections stay open, nothing is answered) / SIGCONTs it.
  void Freeze(int i);
  void Thaw(int i);

  // The members in order, https with the client certificate when tls.
  ClientSettings Settings() const;
  std::vector<Endpoint> endpoints;
  TlsFiles tls_files;  // the CA, the client's certificate and key (tls only)
  bool tls = false;

 private:
  void Command(const std::string& line);
  int pid_ = -1;
  FILE* to_script_ = nullptr;
  FILE* from_script_ = nullptr;
};

// Runs `task` on `io` (and whatever else is pending there) until it finishes; returns its
// value or rethrows its exception.
template <class T>
T RunTask(boost::asio::io_context& io, boost::asio::awaitable<T> task) {
  auto future = boost::asio::co_spawn(io, std::move(task), boost::asio::use_future);
  while (future.wait_for(std::chrono::seconds(0)) != std::future_status::ready) {
    io.restart();
    io.run_one_for(std::chrono::milliseconds(20));
  }
  return future.get();
}

// Runs `io` until `done()` holds or `limit` passes; returns done().
bool RunUntil(boost::asio::io_context& io, const std::function<bool()>& done,
              std::chrono::milliseconds limit);

}  // namespace cpplaunch::etcd::testing
