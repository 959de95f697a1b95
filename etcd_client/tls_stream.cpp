#include "etcd_client/tls_stream.h"

namespace cpplaunch::etcd {
namespace {

class TlsCategory final : public boost::system::error_category {
 public:
  const char* name() const noexcept override { return "cpplaunch.tls"; }
  std::string message(int) const override { return "TLS failed"; }
};

}  // namespace

boost::system::error_code TlsFailure() {
  static const TlsCategory category;
  return {1, category};
}

}  // namespace cpplaunch::etcd
