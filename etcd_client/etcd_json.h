#pragma once
// The JSON of etcd's v3 gateway: request bodies built and answers parsed, for the client's
// transport (etcd_client.cpp, etcd_watch.cpp). Pure. Bytes travel as base64, 64-bit integers as
// decimal strings, and absent fields mean zero/false/empty (engines.md section 1.3).
// Parsers throw EtcdError (kMalformed) for text that is not the answer expected.

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "etcd_client/etcd_types.h"

namespace cpplaunch::etcd::json {

// Bodies, for POST /v3/kv/range, /v3/kv/put, /v3/kv/deleterange, /v3/kv/txn,
// /v3/lease/grant, /v3/lease/keepalive and /v3/lease/revoke (LeaseRequest), /v3/kv/compaction
// and /v3/watch.
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

// Answers (HTTP 200 bodies).
RangeResult ParseRange(std::string_view body);
int64_t ParsePut(std::string_view body);     // the put's revision
int64_t ParseDelete(std::string_view body);  // how many keys were deleted
TxnResult ParseTxn(std::string_view body);
LeaseGrant ParseLeaseGrant(std::string_view body);
std::chrono::seconds ParseKeepAlive(std::string_view body);  // 0: the lease is gone

// One line of a watch stream.
WatchMessage ParseWatchMessage(std::string_view line);

// etcd's message from an error answer ({"error":..,"message":..,"code":..}), or the body itself
// (cut to one line of at most 200 bytes) when it is not JSON.
std::string ErrorMessage(std::string_view body);

}  // namespace cpplaunch::etcd::json
