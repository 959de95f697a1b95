// libcpplaunch-tls.so: tls_session.h's contract on OpenSSL, with memory BIOs in place of a
// socket. The only file that includes OpenSSL; loaded by tls_module.cpp for https endpoints.
#include <arpa/inet.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include <cstdio>
#include <cstring>
#include <new>
#include <string>

#include "etcd_client/tls/tls_session.h"

namespace cpplaunch::etcd {
namespace {

void SetError(TlsStep* step, const std::string& text) {
  step->want = TlsStep::Want::kError;
  std::snprintf(step->error, sizeof step->error, "%s", text.c_str());
}

// Why the last OpenSSL call on this thread failed, in a few words ("certificate verify failed",
// "No such file or directory"), emptying its error queue so that the next failure is not blamed
// on this one. The oldest entry is the cause ("no start line"), the later ones where it surfaced
// ("PEM lib"); a system error (errno) is the most specific cause a queue holds.
std::string LastReason(const char* otherwise) {
  std::string system;
  std::string oldest;
  while (unsigned long code = ERR_get_error()) {
    if (ERR_SYSTEM_ERROR(code)) {
      if (system.empty()) system = std::strerror(ERR_GET_REASON(code));
    } else if (const char* reason = ERR_reason_error_string(code); reason && oldest.empty()) {
      oldest = reason;
    }
  }
  if (!system.empty()) return system;
  if (oldest == "no start line") return "not a PEM file";
  return oldest.empty() ? otherwise : oldest;
}

bool IsAddress(const char* host) {
  unsigned char buffer[sizeof(in6_addr)];
  return inet_pton(AF_INET, host, buffer) == 1 || inet_pton(AF_INET6, host, buffer) == 1;
}

class OpenSslSession final : public TlsSession {
 public:
  explicit OpenSslSession(SSL* ssl) : ssl_(ssl) {}
  ~OpenSslSession() override { SSL_free(ssl_); }  // frees both BIOs
  OpenSslSession(const OpenSslSession&) = delete;
  OpenSslSession& operator=(const OpenSslSession&) = delete;

  TlsStep Handshake() override { return Step(SSL_connect(ssl_), 0, "TLS handshake failed"); }
  TlsStep Read(char* data, std::size_t size) override {
    std::size_t moved = 0;
    int ok = SSL_read_ex(ssl_, data, size, &moved);
    return Step(ok, moved, "TLS read failed");
  }
  TlsStep Write(const char* data, std::size_t size) override {
    std::size_t moved = 0;
    int ok = SSL_write_ex(ssl_, data, size, &moved);
    return Step(ok, moved, "TLS write failed");
  }
  void Received(const char* data, std::size_t size) override {
    BIO_write(SSL_get_rbio(ssl_), data, static_cast<int>(size));
  }
  std::size_t TakeOutput(char* data, std::size_t size) override {
    BIO* out = SSL_get_wbio(ssl_);
    if (BIO_ctrl_pending(out) == 0) return 0;
    int moved = BIO_read(out, data, static_cast<int>(size));
    return moved > 0 ? static_cast<std::size_t>(moved) : 0;
  }

 private:
  TlsStep Step(int ok, std::size_t moved, const char* otherwise) {
    TlsStep step;
    if (ok == 1) {
      step.bytes = moved;
      return step;
    }
    switch (SSL_get_error(ssl_, ok)) {
      case SSL_ERROR_WANT_READ:
        step.want = TlsStep::Want::kInput;
        return step;
      case SSL_ERROR_ZERO_RETURN:
        step.want = TlsStep::Want::kClosed;
        return step;
      default:
        break;
    }
    std::string why = LastReason(otherwise);
    long verify = SSL_get_verify_result(ssl_);
    if (verify != X509_V_OK) why += std::string(" (") + X509_verify_cert_error_string(verify) + ")";
    SetError(&step, why);
    return step;
  }

  SSL* ssl_;
};

class OpenSslContext final : public TlsContext {
 public:
  explicit OpenSslContext(SSL_CTX* context) : context_(context) {}
  ~OpenSslContext() override { SSL_CTX_free(context_); }
  OpenSslContext(const OpenSslContext&) = delete;
  OpenSslContext& operator=(const OpenSslContext&) = delete;

  TlsSession* NewSession(const char* host, TlsStep* error) override {
    SSL* ssl = SSL_new(context_);
    BIO* in = BIO_new(BIO_s_mem());
    BIO* out = BIO_new(BIO_s_mem());
    if (ssl == nullptr || in == nullptr || out == nullptr) {
      SSL_free(ssl);
      BIO_free(in);
      BIO_free(out);
      SetError(error, LastReason("cannot make a TLS session"));
      return nullptr;
    }
    SSL_set_bio(ssl, in, out);
    // The certificate must name what was connected to; SNI carries names only.
    bool named = IsAddress(host)
                     ? X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), host) == 1
                     : SSL_set1_host(ssl, host) == 1 && SSL_set_tlsext_host_name(ssl, host) == 1;
    if (!named) {
      SSL_free(ssl);
      SetError(error, std::string("cannot verify the name '") + host + "'");
      return nullptr;
    }
    SSL_set_connect_state(ssl);
    auto* session = new (std::nothrow) OpenSslSession(ssl);
    if (session == nullptr) {
      SSL_free(ssl);
      SetError(error, "out of memory");
    }
    return session;
  }

 private:
  SSL_CTX* context_;
};

// Runs one load step; false with *error naming the file when it fails.
bool Load(int ok, const char* what, const char* file, TlsStep* error) {
  if (ok == 1) return true;
  SetError(error, std::string("cannot use the etcd ") + what + " '" + file +
                      "': " + LastReason("unreadable"));
  return false;
}

}  // namespace
}  // namespace cpplaunch::etcd

extern "C" __attribute__((visibility("default"))) cpplaunch::etcd::TlsContext*
cpplaunch_tls_context_v1(const char* ca_file, const char* cert_file, const char* key_file,
                         cpplaunch::etcd::TlsStep* error) {
  using cpplaunch::etcd::Load;
  SSL_CTX* context = SSL_CTX_new(TLS_client_method());
  if (context == nullptr) {
    cpplaunch::etcd::SetError(error, cpplaunch::etcd::LastReason("cannot make a TLS context"));
    return nullptr;
  }
  SSL_CTX_set_min_proto_version(context, TLS1_2_VERSION);
  SSL_CTX_set_verify(context, SSL_VERIFY_PEER, nullptr);
  bool ok = *ca_file == '\0' ? Load(SSL_CTX_set_default_verify_paths(context), "system CA store",
                                    "default paths", error)
                             : Load(SSL_CTX_load_verify_locations(context, ca_file, nullptr),
                                    "CA file", ca_file, error);
  if (ok && *cert_file != '\0') {
    ok = Load(SSL_CTX_use_certificate_chain_file(context, cert_file), "client certificate",
              cert_file, error) &&
         Load(SSL_CTX_use_PrivateKey_file(context, key_file, SSL_FILETYPE_PEM), "client key",
              key_file, error);
  }
  if (!ok) {
    SSL_CTX_free(context);
    return nullptr;
  }
  auto* made = new (std::nothrow) cpplaunch::etcd::OpenSslContext(context);
  if (made == nullptr) {
    SSL_CTX_free(context);
    cpplaunch::etcd::SetError(error, "out of memory");
  }
  return made;
}
