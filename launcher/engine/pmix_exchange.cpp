#include "launcher/engine/pmix_exchange.h"

#include <algorithm>

#ifdef CPPLAUNCH_HAVE_PMIX
#include <dlfcn.h>
#include <pmix.h>

#include <cstring>
#include <optional>

#include "launcher/engine/address_facts.h"
#include "launcher/process/bounded_child.h"
#endif

namespace cpplaunch {
namespace {

#ifdef CPPLAUNCH_HAVE_PMIX

// The child's answer on its pipe: "ok <address>" or "error <text>".
constexpr std::string_view kOk = "ok ";
constexpr std::string_view kError = "error ";

constexpr char kAddressKey[] = "cpplaunch.rank0_address";
constexpr const char* kSonames[] = {"libpmix.so.2", "libpmix.so"};

// The PMIx client calls, resolved from the library loaded at run time; the types come from
// pmix.h, so a signature change fails the build, not the run.
struct PmixApi {
  decltype(&PMIx_Init) init = nullptr;
  decltype(&PMIx_Put) put = nullptr;
  decltype(&PMIx_Commit) commit = nullptr;
  decltype(&PMIx_Fence) fence = nullptr;
  decltype(&PMIx_Get) get = nullptr;
  decltype(&PMIx_Finalize) finalize = nullptr;
  decltype(&PMIx_Error_string) error_string = nullptr;

  std::string Describe(pmix_status_t status) const {
    const char* text = error_string(status);
    return text != nullptr ? text : "PMIx status " + std::to_string(status);
  }
};

template <typename F>
bool Resolve(void* library, const char* name, F* function) {
  *function = reinterpret_cast<F>(::dlsym(library, name));
  return *function != nullptr;
}

// The library stays loaded: this runs in the bounded child, which exits after the exchange.
std::optional<PmixApi> LoadPmix(std::string* error) {
  void* library = nullptr;
  for (const char* soname : kSonames) {
    library = ::dlopen(soname, RTLD_NOW | RTLD_LOCAL);
    if (library != nullptr) break;
  }
  if (library == nullptr) {
    const char* why = ::dlerror();
    *error = std::string("cannot load libpmix.so.2 (install libpmix2): ") + (why ? why : "");
    return std::nullopt;
  }
  PmixApi api;
  if (!Resolve(library, "PMIx_Init", &api.init) || !Resolve(library, "PMIx_Put", &api.put) ||
      !Resolve(library, "PMIx_Commit", &api.commit) ||
      !Resolve(library, "PMIx_Fence", &api.fence) || !Resolve(library, "PMIx_Get", &api.get) ||
      !Resolve(library, "PMIx_Finalize", &api.finalize) ||
      !Resolve(library, "PMIx_Error_string", &api.error_string)) {
    *error = "libpmix lacks a PMIx client call (PMIx_Init ... PMIx_Finalize)";
    return std::nullopt;
  }
  return api;
}

// The steps between PMIx_Init and PMIx_Finalize; returns "ok <address>" or "error <text>".
std::string PutFenceGet(const PmixApi& api, const pmix_proc_t& self, const EnvMap& env,
                        int fence_seconds) {
  if (self.rank == 0) {
    std::string address = ChooseAdvertisedAddress(GatherAddressFacts(env));
    pmix_value_t value{};
    value.type = PMIX_STRING;
    value.data.string = address.data();
    const pmix_status_t put = api.put(PMIX_GLOBAL, kAddressKey, &value);
    if (put != PMIX_SUCCESS) return std::string(kError) + "PMIx_Put: " + api.Describe(put);
  }
  const pmix_status_t commit = api.commit();
  if (commit != PMIX_SUCCESS) return std::string(kError) + "PMIx_Commit: " + api.Describe(commit);

  // The info structs are filled by hand: PMIx's loading macros call into the library.
  pmix_info_t info[2] = {};
  std::strncpy(info[0].key, PMIX_COLLECT_DATA, PMIX_MAX_KEYLEN);
  info[0].value.type = PMIX_BOOL;
  info[0].value.data.flag = true;
  std::strncpy(info[1].key, PMIX_TIMEOUT, PMIX_MAX_KEYLEN);
  info[1].value.type = PMIX_INT;
  info[1].value.data.integer = fence_seconds;
  pmix_proc_t everyone{};
  std::memcpy(everyone.nspace, self.nspace, sizeof(everyone.nspace));
  everyone.rank = PMIX_RANK_WILDCARD;
  const pmix_status_t fence = api.fence(&everyone, 1, info, 2);
  if (fence != PMIX_SUCCESS) {
    return std::string(kError) +
           "PMIx_Fence (waiting for every rank of the job): " + api.Describe(fence);
  }

  pmix_proc_t rank_zero = everyone;
  rank_zero.rank = 0;
  pmix_value_t* found = nullptr;
  const pmix_status_t get = api.get(&rank_zero, kAddressKey, nullptr, 0, &found);
  if (get != PMIX_SUCCESS || found == nullptr) {
    return std::string(kError) + "PMIx_Get of rank 0's address: " + api.Describe(get);
  }
  std::string answer = found->type == PMIX_STRING && found->data.string != nullptr
                           ? std::string(kOk) + found->data.string
                           : std::string(kError) + "rank 0 published no text address";
  // The child exits next; the value (malloc'd by libpmix) dies with it.
  return answer;
}

std::string ExchangeInChild(const EnvMap& env, int fence_seconds) {
  std::string error;
  const std::optional<PmixApi> api = LoadPmix(&error);
  if (!api) return std::string(kError) + error;
  pmix_proc_t self{};
  const pmix_status_t init = api->init(&self, nullptr, 0);
  if (init != PMIX_SUCCESS) return std::string(kError) + "PMIx_Init: " + api->Describe(init);
  std::string answer = PutFenceGet(*api, self, env, fence_seconds);
  const pmix_status_t finalize = api->finalize(nullptr, 0);
  if (finalize != PMIX_SUCCESS && answer.starts_with(kOk)) {
    answer = std::string(kError) + "PMIx_Finalize: " + api->Describe(finalize);
  }
  return answer;
}

std::string Seconds(std::chrono::milliseconds duration) {
  return std::to_string((duration.count() + 999) / 1000) + " s";
}

PmixExchangeResult FromChild(const BoundedChildResult& child, std::chrono::milliseconds timeout) {
  PmixExchangeResult result;
  switch (child.status) {
    case BoundedChildResult::Status::kTimedOut:
      result.error = "the PMIx exchange did not finish within " + Seconds(timeout) +
                     " (does every rank of the MPI job run cpplaunch?)";
      break;
    case BoundedChildResult::Status::kDied:
      result.error = "the PMIx exchange process ended without an answer (libpmix crashed?)";
      break;
    case BoundedChildResult::Status::kDone:
      if (child.output.starts_with(kOk)) {
        result.address = child.output.substr(kOk.size());
      } else if (child.output.starts_with(kError)) {
        result.error = child.output.substr(kError.size());
      } else {
        result.error = "the PMIx exchange process gave no answer";
      }
      break;
  }
  return result;
}

#endif  // CPPLAUNCH_HAVE_PMIX

}  // namespace

bool PmixPresent(const EnvMap& env) {
  const bool server = std::any_of(env.begin(), env.end(), [](const auto& entry) {
    return entry.first.starts_with("PMIX_SERVER_URI");
  });
  return server && env.contains("PMIX_NAMESPACE") && env.contains("PMIX_RANK");
}

bool PmixCompiledIn() {
#ifdef CPPLAUNCH_HAVE_PMIX
  return true;
#else
  return false;
#endif
}

PmixExchangeResult ExchangeRankZeroAddress(const EnvMap& env,
                                           [[maybe_unused]] std::chrono::milliseconds timeout) {
  PmixExchangeResult result;
  if (!PmixCompiledIn()) {
    result.error = "this cpplaunch was built without PMIx support (pmix.h was not found)";
    return result;
  }
  if (!PmixPresent(env)) {
    result.error =
        "no PMIx server in this process's environment (PMIX_NAMESPACE, PMIX_RANK, "
        "PMIX_SERVER_URI*)";
    return result;
  }
#ifdef CPPLAUNCH_HAVE_PMIX
  // PMIx's own fence timeout ends the fence a second before the child is killed, so that a
  // missing rank is reported by PMIx and the child still finalizes.
  const int fence_seconds = static_cast<int>(std::max<long long>(1, timeout.count() / 1000 - 1));
  return FromChild(
      RunInBoundedChild([&env, fence_seconds] { return ExchangeInChild(env, fence_seconds); },
                        timeout),
      timeout);
#else
  return result;
#endif
}

}  // namespace cpplaunch
