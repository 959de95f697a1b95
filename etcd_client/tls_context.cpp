#include "etcd_client/tls_context.h"

#include <boost/system/system_error.hpp>

#include "etcd_client/etcd_error.h"

namespace cpplaunch::etcd {
namespace {

namespace ssl = boost::asio::ssl;

// Runs one load step; a failure becomes one line naming the file.
template <class Load>
void LoadFile(const char* what, const std::string& file, Load load) {
  boost::system::error_code ec;
  load(ec);
  if (ec) {
    throw EtcdError(EtcdError::Kind::kSetup, std::string("cannot use the etcd ") + what + " '" +
                                                 file + "': " + ec.message());
  }
}

}  // namespace

std::unique_ptr<ssl::context> MakeTlsContext(const TlsFiles& files) {
  if (files.cert_file.empty() != files.key_file.empty()) {
    throw EtcdError(EtcdError::Kind::kSetup,
                    "an etcd client certificate needs both a certificate file and its key file");
  }
  auto context = std::make_unique<ssl::context>(ssl::context::tls_client);
  context->set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 |
                       ssl::context::no_sslv3 | ssl::context::no_tlsv1 | ssl::context::no_tlsv1_1);
  context->set_verify_mode(ssl::verify_peer);
  if (files.ca_file.empty()) {
    LoadFile("system CA store", "default paths",
             [&](auto& ec) { context->set_default_verify_paths(ec); });
  } else {
    LoadFile("CA file", files.ca_file,
             [&](auto& ec) { context->load_verify_file(files.ca_file, ec); });
  }
  if (!files.cert_file.empty()) {
    LoadFile("client certificate", files.cert_file,
             [&](auto& ec) { context->use_certificate_chain_file(files.cert_file, ec); });
    LoadFile("client key", files.key_file, [&](auto& ec) {
      context->use_private_key_file(files.key_file, ssl::context::pem, ec);
    });
  }
  return context;
}

}  // namespace cpplaunch::etcd
