#include "etcd_client/etcd_wire.h"

#include <array>

#include "etcd_client/etcd_json.h"
#include "etcd_client/etcd_proto.h"

namespace cpplaunch::etcd {
namespace {

const char* GatewayPath(Rpc rpc) {
  switch (rpc) {
    case Rpc::kRange:
      return "/v3/kv/range";
    case Rpc::kPut:
      return "/v3/kv/put";
    case Rpc::kDeleteRange:
      return "/v3/kv/deleterange";
    case Rpc::kTxn:
      return "/v3/kv/txn";
    case Rpc::kCompact:
      return "/v3/kv/compaction";
    case Rpc::kLeaseGrant:
      return "/v3/lease/grant";
    case Rpc::kLeaseRevoke:
      return "/v3/lease/revoke";
    case Rpc::kLeaseKeepAlive:
      return "/v3/lease/keepalive";
    case Rpc::kWatch:
      return "/v3/watch";
  }
  return "";
}

const char* GrpcPath(Rpc rpc) {
  switch (rpc) {
    case Rpc::kRange:
      return "/etcdserverpb.KV/Range";
    case Rpc::kPut:
      return "/etcdserverpb.KV/Put";
    case Rpc::kDeleteRange:
      return "/etcdserverpb.KV/DeleteRange";
    case Rpc::kTxn:
      return "/etcdserverpb.KV/Txn";
    case Rpc::kCompact:
      return "/etcdserverpb.KV/Compact";
    case Rpc::kLeaseGrant:
      return "/etcdserverpb.Lease/LeaseGrant";
    case Rpc::kLeaseRevoke:
      return "/etcdserverpb.Lease/LeaseRevoke";
    case Rpc::kLeaseKeepAlive:
      return "/etcdserverpb.Lease/LeaseKeepAlive";
    case Rpc::kWatch:
      return "/etcdserverpb.Watch/Watch";
  }
  return "";
}

constexpr Wire kGateway{
    GatewayPath,
    json::RangeRequest,
    json::PutRequest,
    json::DeleteRequest,
    json::TxnRequest,
    json::LeaseGrantRequest,
    json::LeaseRequest,
    json::CompactRequest,
    json::WatchCreateRequest,
    json::ParseRange,
    json::ParsePut,
    json::ParseDelete,
    json::ParseTxn,
    json::ParseLeaseGrant,
    json::ParseKeepAlive,
    json::ParseWatchMessage,
};

constexpr Wire kGrpc{
    GrpcPath,
    proto::RangeRequest,
    proto::PutRequest,
    proto::DeleteRequest,
    proto::TxnRequest,
    proto::LeaseGrantRequest,
    proto::LeaseRequest,
    proto::CompactRequest,
    proto::WatchCreateRequest,
    proto::ParseRange,
    proto::ParsePut,
    proto::ParseDelete,
    proto::ParseTxn,
    proto::ParseLeaseGrant,
    proto::ParseKeepAlive,
    proto::ParseWatchMessage,
};

// gRPC's status codes 0..16, by name, with the HTTP status the gateway answers each with.
struct StatusRow {
  const char* name;
  int http;
};
constexpr std::array<StatusRow, 17> kStatuses{{
    {"OK", 200},
    {"Canceled", 408},
    {"Unknown", 500},
    {"InvalidArgument", 400},
    {"DeadlineExceeded", 504},
    {"NotFound", 404},
    {"AlreadyExists", 409},
    {"PermissionDenied", 403},
    {"ResourceExhausted", 429},
    {"FailedPrecondition", 400},
    {"Aborted", 409},
    {"OutOfRange", 400},
    {"Unimplemented", 501},
    {"Internal", 500},
    {"Unavailable", 503},
    {"DataLoss", 500},
    {"Unauthenticated", 401},
}};

}  // namespace

const Wire& GatewayWire() { return kGateway; }
const Wire& GrpcWire() { return kGrpc; }

int HttpStatusOfGrpc(int grpc_status) {
  if (grpc_status < 0 || grpc_status >= static_cast<int>(kStatuses.size())) return 500;
  return kStatuses[static_cast<size_t>(grpc_status)].http;
}

std::string GrpcStatusName(int grpc_status) {
  if (grpc_status < 0 || grpc_status >= static_cast<int>(kStatuses.size())) {
    return "status " + std::to_string(grpc_status);
  }
  return kStatuses[static_cast<size_t>(grpc_status)].name;
}

}  // namespace cpplaunch::etcd
