#pragma once
// What a peer answered a store handshake with, in one line of a message: a launcher whose store
// port is taken by another service (a web server, a database) names that service's first words
// instead of retrying for the whole rendezvous timeout. Pure; thread-safe.

#include <string>
#include <string_view>

namespace cpplaunch {

// The answer's first line when it is printable text (`"HTTP/1.0 400 Bad request"`, cut at 80
// characters with "..."), else its first bytes in hex (`8 bytes: 00 00 00 2a ...`). "" for "".
std::string QuoteAnswer(std::string_view bytes);

}  // namespace cpplaunch
