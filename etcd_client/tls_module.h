#pragma once
// Loads the TLS module (libcpplaunch-tls.so, tls/tls_session.h) the first time an https endpoint
// needs it, so that a job that never uses https never loads OpenSSL.
//
// Where: $CPPLAUNCH_TLS_MODULE when set (the tests' binaries, which live outside bin/), else
// <the running program's directory>/../lib/cpplaunch/modules/libcpplaunch-tls.so:
// /usr/lib/cpplaunch/modules in the package, <build>/lib/cpplaunch/modules in a build tree.

#include <memory>

#include "etcd_client/etcd_types.h"
#include "etcd_client/tls/tls_session.h"

namespace cpplaunch::etcd {

// A client context for `files`, as tls_session.h's factory makes it. Throws EtcdError (kSetup)
// with one line: the module cannot be loaded (where it was looked for, and why), a file cannot
// be used, or a certificate is given without its key (or the other way round).
std::shared_ptr<TlsContext> MakeTlsContext(const TlsFiles& files);

}  // namespace cpplaunch::etcd
