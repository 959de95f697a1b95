#pragma once
// The proof a status request carries for an agent of a job with a secret (the header
// X-Cpplaunch-Proof, shared by the agent's --status-port endpoint and cpplaunch-status):
// "<t>:<mac>", t the sender's Unix time in whole
// seconds and mac the lowercase hex of HMAC-SHA256(secret, "cpplaunch-status\n" + t + "\n" +
// path). Binding the path and the time means a captured header opens one page for five minutes,
// not the job's secret. Pure: the caller passes the clock's reading; nothing here throws.

#include <cstdint>
#include <string>
#include <string_view>

namespace cpplaunch {

// The header's name, as both sides spell it.
inline constexpr std::string_view kStatusProofHeader = "X-Cpplaunch-Proof";
// How far the sender's clock may be from the agent's, either way.
inline constexpr int64_t kStatusProofWindowSeconds = 300;

// The header value proving knowledge of `secret` (the key bytes StoreSecurity holds) for a
// request of `path` (the request target, e.g. "/status") sent at `unix_seconds`.
std::string StatusProof(std::string_view secret, int64_t unix_seconds, std::string_view path);

// True when `header` is a proof of `secret` for `path` whose time is within
// kStatusProofWindowSeconds of `now`, either side. A malformed header is simply false; the MAC
// is compared in constant time.
bool CheckStatusProof(std::string_view secret, std::string_view header, int64_t now,
                      std::string_view path);

}  // namespace cpplaunch
