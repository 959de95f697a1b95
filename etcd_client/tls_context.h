#pragma once
// The TLS client context of the etcd client's https connections, made from the settings' files.

#include <boost/asio/ssl/context.hpp>
#include <memory>

#include "etcd_client/etcd_types.h"

namespace cpplaunch::etcd {

// A TLS 1.2+ client context that verifies the server against `files.ca_file` (or the system's
// CAs when it is empty) and presents `files.cert_file` with `files.key_file` when given.
// Throws EtcdError (kSetup) naming the file that cannot be used and why, or a certificate
// given without its key (or the other way round).
std::unique_ptr<boost::asio::ssl::context> MakeTlsContext(const TlsFiles& files);

}  // namespace cpplaunch::etcd
