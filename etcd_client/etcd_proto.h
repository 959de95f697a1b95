#pragma once
// The protobuf messages of etcd's v3 gRPC API (api/etcdserverpb/rpc.proto, api/mvccpb/kv.proto),
// hand-written: the same requests and answers as etcd_json.h, as bare message bytes (no gRPC
// framing). Pure. Fields follow proto3: zero, false and empty are omitted when writing and mean
// absent when reading; unknown fields are skipped. Parsers throw EtcdError (kMalformed) for bytes
// that are not a protobuf message, or that give a field read here an unexpected wire type.

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "etcd_client/etcd_types.h"

namespace cpplaunch::etcd::proto {

// Requests: RangeRequest, PutRequest, DeleteRangeRequest, TxnRequest, LeaseGrantRequest,
// LeaseRevokeRequest and LeaseKeepAliveRequest (LeaseRequest), CompactionRequest and a
// WatchRequest that creates a watch.
std::string RangeRequest(std::string_view key, std::string_view range_end);
std::string PutRequest(std::string_view key, std::string_view value, int64_t lease);
std::string DeleteRequest(std::string_view key, std::string_view range_end);
std::string TxnRequest(const std::vector<Compare>& compare, const std::vector<TxnOp>& success,
                       const std::vector<TxnOp>& failure);
std::string LeaseGrantRequest(std::chrono::seconds ttl);
std::string LeaseRequest(int64_t lease);
std::string CompactRequest(int64_t revision);
std::string WatchCreateRequest(std::string_view key, std::string_view range_end,
                               int64_t start_revision);

// Answers: the response message of each call.
RangeResult ParseRange(std::string_view message);
int64_t ParsePut(std::string_view message);     // the put's revision
int64_t ParseDelete(std::string_view message);  // how many keys were deleted
TxnResult ParseTxn(std::string_view message);
LeaseGrant ParseLeaseGrant(std::string_view message);
std::chrono::seconds ParseKeepAlive(std::string_view message);  // 0: the lease is gone

// One WatchResponse of a watch stream.
WatchMessage ParseWatchMessage(std::string_view message);

}  // namespace cpplaunch::etcd::proto
