#include "etcd_client/etcd_types.h"

#include <utility>

namespace cpplaunch::etcd {

std::string Endpoint::ToString() const {
  bool v6 = host.find(':') != std::string::npos;
  return (v6 ? "[" + host + "]" : host) + ":" + std::to_string(port);
}

Compare Compare::Version(std::string key, Op op, int64_t version) {
  return Compare{Target::kVersion, op, std::move(key), version, {}};
}
Compare Compare::CreateRevision(std::string key, Op op, int64_t revision) {
  return Compare{Target::kCreate, op, std::move(key), revision, {}};
}
Compare Compare::ModRevision(std::string key, Op op, int64_t revision) {
  return Compare{Target::kMod, op, std::move(key), revision, {}};
}
Compare Compare::Value(std::string key, Op op, std::string value) {
  return Compare{Target::kValue, op, std::move(key), 0, std::move(value)};
}
Compare Compare::Absent(std::string key) { return CreateRevision(std::move(key), Op::kEqual, 0); }

TxnOp TxnOp::Put(std::string key, std::string value, int64_t lease) {
  return TxnOp{Kind::kPut, std::move(key), std::move(value), lease, {}};
}
TxnOp TxnOp::Range(std::string key, std::string range_end) {
  return TxnOp{Kind::kRange, std::move(key), {}, 0, std::move(range_end)};
}
TxnOp TxnOp::Delete(std::string key, std::string range_end) {
  return TxnOp{Kind::kDelete, std::move(key), {}, 0, std::move(range_end)};
}

std::string PrefixEnd(std::string_view prefix) {
  std::string end(prefix);
  while (!end.empty()) {
    auto& last = reinterpret_cast<unsigned char&>(end.back());
    if (last < 0xff) {
      ++last;
      return end;
    }
    end.pop_back();
  }
  return std::string(1, '\0');
}

}  // namespace cpplaunch::etcd
