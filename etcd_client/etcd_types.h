#pragma once
// The values the etcd v3 client sends and receives (rendezvous/etcd/etcd_client.h), as etcd's
// v3 API defines them (api/etcdserverpb/rpc.proto). Pure data: no I/O.

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace cpplaunch::etcd {

// One etcd member's client URL: http(s)://host:port.
struct Endpoint {
  std::string host;  // a name or a numeric address, IPv6 without brackets
  int port = 2379;
  std::string ToString() const;  // "host:port", brackets around an IPv6 literal
};

// The files of a TLS client; an empty name means "none". With a CA file the server's
// certificate must chain to it (else the system's CAs are used) and name the host connected
// to; with cert_file and key_file the client presents that certificate.
struct TlsFiles {
  std::string ca_file;
  std::string cert_file;
  std::string key_file;
};

// How the client reaches etcd: its native gRPC service (one HTTP/2 connection per member that
// carries every request, watch and renewal), or its HTTP/JSON gateway (HTTP/1.1, a connection
// per pending request and per watch; about half of etcd's CPU goes to the gateway's JSON).
enum class Transport { kGrpc, kGateway };

struct ClientSettings {
  // Tried in order; a request moves to the next one on a connection error, a timeout or an
  // HTTP 5xx answer, and later requests start from the member that answered last.
  std::vector<Endpoint> endpoints;
  bool https = false;
  TlsFiles tls;  // https only
  // https always goes through the gateway: the TLS module offers no ALPN, which gRPC needs.
  Transport transport = Transport::kGrpc;
  // Bounds one request as a whole: every connection attempt and retry across the endpoints.
  std::chrono::milliseconds request_timeout{std::chrono::seconds(5)};
  // Bound each attempt within it on one member: its TCP (and TLS) connection, and the whole
  // attempt. A member that holds a request longer is left for the next: one that does not
  // answer at all, or a cluster electing a new leader, which drops the writes it receives
  // meanwhile without answering them (etcd answers them only after its own timeout, ~7 s).
  // After a round of the list in which an attempt ran out of time, the next round's attempts
  // get twice as long, after a random pause of up to half the last bound: members that are
  // merely busy are not sent the same request again at once by every agent. With a single
  // endpoint an attempt lasts the whole request_timeout: there is no other member to try.
  std::chrono::milliseconds connect_timeout{std::chrono::seconds(1)};
  std::chrono::milliseconds attempt_timeout{std::chrono::milliseconds(1500)};
};

// One key as etcd stores it (mvccpb.KeyValue). Keys and values are arbitrary bytes.
struct KeyValue {
  std::string key;
  std::string value;
  int64_t create_revision = 0;
  int64_t mod_revision = 0;
  int64_t version = 0;  // 1 after the first put; 0 never happens for a stored key
  int64_t lease = 0;    // 0: not attached to a lease
};

struct RangeResult {
  std::vector<KeyValue> kvs;  // empty when nothing matched
  int64_t revision = 0;       // the store's revision the range was read at
  int64_t count = 0;          // how many keys matched
};

// One condition of a transaction: `target` of `key` compared with `number` (Version, Create,
// Mod) or `value` (Value). Create == 0 means "the key does not exist".
struct Compare {
  enum class Target { kVersion, kCreate, kMod, kValue };
  enum class Op { kEqual, kNotEqual, kGreater, kLess };
  Target target = Target::kMod;
  Op op = Op::kEqual;
  std::string key;
  int64_t number = 0;
  std::string value;

  static Compare Version(std::string key, Op op, int64_t version);
  static Compare CreateRevision(std::string key, Op op, int64_t revision);
  static Compare ModRevision(std::string key, Op op, int64_t revision);
  static Compare Value(std::string key, Op op, std::string value);
  static Compare Absent(std::string key);  // CreateRevision(key, kEqual, 0)
};

// One operation of a transaction's branch. range_end as in Client::Range ("" = the key alone).
struct TxnOp {
  enum class Kind { kPut, kRange, kDelete };
  Kind kind = Kind::kPut;
  std::string key;
  std::string value;      // kPut
  int64_t lease = 0;      // kPut; 0 detaches the key from any lease
  std::string range_end;  // kRange, kDelete

  static TxnOp Put(std::string key, std::string value, int64_t lease = 0);
  static TxnOp Range(std::string key, std::string range_end = "");
  static TxnOp Delete(std::string key, std::string range_end = "");
};

struct TxnResult {
  bool succeeded = false;  // every compare held: the success branch ran
  int64_t revision = 0;    // the store's revision after the transaction
  // One per kRange op of the branch that ran, in order.
  std::vector<RangeResult> ranges;
};

struct WatchEvent {
  enum Kind { kPut, kDelete };
  Kind kind = kPut;
  KeyValue kv;  // for kDelete: the key and the deletion's revision (mod_revision) only
};

// A lease grant's answer.
struct LeaseGrant {
  int64_t id = 0;
  std::chrono::seconds ttl{0};  // as granted: etcd may raise a short one to its minimum
};

// One message of a watch stream.
struct WatchMessage {
  bool created = false;
  bool canceled = false;
  int64_t revision = 0;          // header.revision
  int64_t compact_revision = 0;  // set when canceled because the start revision was compacted
  std::string cancel_reason;     // etcd's reason, or the error of an {"error":...} line
  std::vector<WatchEvent> events;
};

// The range_end that makes [prefix, PrefixEnd(prefix)) every key starting with `prefix`: the
// prefix with its last byte below 0xff incremented and what follows dropped; "\0" (every key)
// when there is none.
std::string PrefixEnd(std::string_view prefix);

}  // namespace cpplaunch::etcd
