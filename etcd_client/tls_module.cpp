#include "etcd_client/tls_module.h"

#include <dlfcn.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <system_error>

#include "etcd_client/etcd_error.h"

namespace cpplaunch::etcd {
namespace {

constexpr const char* kModuleName = "libcpplaunch-tls.so";

std::string ModulePath() {
  if (const char* set = std::getenv("CPPLAUNCH_TLS_MODULE"); set != nullptr && *set != '\0') {
    return set;
  }
  std::error_code ec;
  std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) return std::string("/usr/lib/cpplaunch/modules/") + kModuleName;
  return (self.parent_path().parent_path() / "lib" / "cpplaunch" / "modules" / kModuleName)
      .string();
}

[[noreturn]] void Fail(const std::string& what) { throw EtcdError(EtcdError::Kind::kSetup, what); }

// The factory, loaded once; the module stays loaded for the life of the process (its contexts
// may be in use until exit).
TlsContextFactory Factory() {
  static TlsContextFactory factory = [] {
    std::string path = ModulePath();
    void* module = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (module == nullptr) {
      const char* why = ::dlerror();
      Fail("https to etcd needs cpplaunch's TLS module, which cannot be loaded (" +
           std::string(why != nullptr ? why : path) +
           "); reinstall cpplaunch, or set CPPLAUNCH_TLS_MODULE to its path");
    }
    auto* found = reinterpret_cast<TlsContextFactory>(::dlsym(module, kTlsContextFactoryName));
    if (found == nullptr) {
      Fail("cpplaunch's TLS module " + path + " is not this version's (no " +
           kTlsContextFactoryName + "); reinstall cpplaunch");
    }
    return found;
  }();
  return factory;
}

}  // namespace

std::shared_ptr<TlsContext> MakeTlsContext(const TlsFiles& files) {
  if (files.cert_file.empty() != files.key_file.empty()) {
    Fail("an etcd client certificate needs both a certificate file and its key file");
  }
  TlsStep error;
  TlsContext* context =
      Factory()(files.ca_file.c_str(), files.cert_file.c_str(), files.key_file.c_str(), &error);
  if (context == nullptr) Fail(error.error);
  return std::shared_ptr<TlsContext>(context);
}

}  // namespace cpplaunch::etcd
