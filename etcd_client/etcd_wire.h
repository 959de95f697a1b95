#pragma once
// The calls of etcd's v3 API the client makes, and how each of its two transports names and
// encodes them: etcd's JSON gateway (HTTP/1.1 POSTs to /v3/...) or its native gRPC service
// (protobuf over HTTP/2). The client picks one Wire and never asks which. Pure.

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "etcd_client/etcd_types.h"

namespace cpplaunch::etcd {

enum class Rpc {
  kRange,
  kPut,
  kDeleteRange,
  kTxn,
  kCompact,
  kLeaseGrant,
  kLeaseRevoke,
  kLeaseKeepAlive,
  kWatch,
};

// The codec of one transport (etcd_json.h, etcd_proto.h), as a table.
struct Wire {
  const char* (*path)(Rpc rpc);
  std::string (*range_request)(std::string_view key, std::string_view range_end);
  std::string (*put_request)(std::string_view key, std::string_view value, int64_t lease);
  std::string (*delete_request)(std::string_view key, std::string_view range_end);
  std::string (*txn_request)(const std::vector<Compare>& compare, const std::vector<TxnOp>& success,
                             const std::vector<TxnOp>& failure);
  std::string (*lease_grant_request)(std::chrono::seconds ttl);
  std::string (*lease_request)(int64_t lease);
  std::string (*compact_request)(int64_t revision);
  std::string (*watch_create_request)(std::string_view key, std::string_view range_end,
                                      int64_t start_revision);
  RangeResult (*parse_range)(std::string_view body);
  int64_t (*parse_put)(std::string_view body);
  int64_t (*parse_delete)(std::string_view body);
  TxnResult (*parse_txn)(std::string_view body);
  LeaseGrant (*parse_lease_grant)(std::string_view body);
  std::chrono::seconds (*parse_keep_alive)(std::string_view body);
  WatchMessage (*parse_watch_message)(std::string_view message);
};

const Wire& GatewayWire();
const Wire& GrpcWire();

// The HTTP status etcd's gateway gives a gRPC status (as grpc-gateway maps them), so that both
// transports' answers are judged alike: 5xx is worth another member, 4xx is a refusal.
int HttpStatusOfGrpc(int grpc_status);
// "NotFound" for 5, for messages.
std::string GrpcStatusName(int grpc_status);

}  // namespace cpplaunch::etcd
