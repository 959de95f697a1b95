#pragma once
// The boundary between the etcd client and OpenSSL. OpenSSL lives in a module of its own
// (libcpplaunch-tls.so, tls_module.h loads it) that only an https endpoint loads: linking
// libssl and libcrypto into cpplaunch cost every launch their loading and relocation, about
// 0.6 ms of a 2.8 ms start, for a transport few jobs use.
//
// A session is TLS as a transformation of bytes: ciphertext from the network goes in
// (Received), ciphertext for the network comes out (TakeOutput), and the handshake, reads and
// writes of plaintext step as far as the bytes allow. The socket I/O stays with the caller
// (tls_stream.h), on its executor. Only plain types cross the boundary: the module carries its
// own C++ runtime, and nothing it throws leaves it.

#include <cstddef>

namespace cpplaunch::etcd {

struct TlsStep {
  enum class Want {
    kDone,    // the step finished; `bytes` says how much plaintext it moved
    kInput,   // it needs more ciphertext from the network
    kClosed,  // the peer ended the session (close_notify)
    kError,   // it failed: `error` says why, in a few words
  };
  Want want = Want::kDone;
  std::size_t bytes = 0;
  char error[256] = {};
};

class TlsSession {
 public:
  virtual ~TlsSession() = default;
  // The client's side of the handshake; verifies the server's certificate against the context's
  // CAs and the name (or address) given to TlsContext::NewSession.
  virtual TlsStep Handshake() = 0;
  // Plaintext the peer sent, into data[0, size).
  virtual TlsStep Read(char* data, std::size_t size) = 0;
  // Encrypts all of data[0, size) into the output.
  virtual TlsStep Write(const char* data, std::size_t size) = 0;
  // Ciphertext that arrived from the network.
  virtual void Received(const char* data, std::size_t size) = 0;
  // Moves up to `size` bytes of ciphertext to send into data; returns how many (0: none pending).
  virtual std::size_t TakeOutput(char* data, std::size_t size) = 0;
};

class TlsContext {
 public:
  virtual ~TlsContext() = default;
  // A session with the server named `host` (a DNS name, sent as SNI, or an IP address). Null
  // with *error when OpenSSL cannot make one.
  virtual TlsSession* NewSession(const char* host, TlsStep* error) = 0;
};

// The module's one entry point, `cpplaunch_tls_context_v1`: a TLS 1.2+ client context that
// verifies servers against `ca_file` (the system's CAs when empty) and presents `cert_file` with
// `key_file` when they are not empty. Null with error->error naming the file that cannot be used
// and why. The caller owns the result (delete it).
using TlsContextFactory = TlsContext* (*)(const char* ca_file, const char* cert_file,
                                          const char* key_file, TlsStep* error);
inline constexpr const char* kTlsContextFactoryName = "cpplaunch_tls_context_v1";

}  // namespace cpplaunch::etcd
