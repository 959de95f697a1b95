#pragma once
// argparse's checks of one option's text, with argparse's wording: type= (int, float) and
// choices=. Both are usage errors (exit 2). Also torchrun's reading of a flag's PET_
// variable, and the bounds cpplaunch puts on option text (below). Failures throw ParseFailure
// (parse_failure.h).

#include <cstddef>
#include <string>
#include <string_view>

#include "launcher/cli/option_table.h"

namespace cpplaunch {

// "argument --max-restarts/--max_restarts: invalid int value: 'x'"; Python's int()/float().
void CheckType(const OptionSpec& spec, std::string_view text);
// "argument ...: invalid choice: 'thread' (choose from 'spawn', 'fork', 'forkserver')".
void CheckChoice(const OptionSpec& spec, std::string_view text);
// torchrun reads a flag's variable as int(value) != 0: "1" or "0"; anything that is not an
// integer is a value error (exit 1) naming the variable.
std::string FlagFromEnvironment(const OptionSpec& spec, const std::string& value);

// Bounds on the text of option values, checked before any value is used or quoted, so that a
// runaway value (a variable expanded twice, a file pasted in) is one short usage error rather
// than a failure deep in the job with the value in its message. Pure.
//
//   every option value       at most kMaxOptionValueBytes;
//   --rdzv-id                at most kMaxRunIdBytes, no control character, no '/': it names
//                            the run's log directory (<id>_XXXXXXXX, one file name) and the
//                            store's and etcd's keys. Everything else torchrun users pass
//                            (Slurm job ids such as 1234_5, Kubernetes names, UUIDs, spaces,
//                            dots, colons, non-ASCII text, the empty id) is accepted as is;
//   --role                   no control character (it starts every prefixed output line);
//   --local-addr             one host name or address, or empty: letters, digits and
//                            . - : _ % [ ] only (it starts the agent's node id, which the
//                            rendezvous state lists with ',' and etcd's keys hold between '/');
//   --log-dir                at most kMaxPathBytes (Linux's PATH_MAX less its NUL).
// Each check returns "" when the value is fine, else the one line to refuse it with (exit 2),
// naming `name` ("--rdzv-id", or the PET_* variable it came from) and never quoting a long
// value.

inline constexpr std::size_t kMaxOptionValueBytes = 8192;
// NAME_MAX (255) less the "_XXXXXXXX" mkdtemp adds to the run's log directory.
inline constexpr std::size_t kMaxRunIdBytes = 246;
inline constexpr std::size_t kMaxPathBytes = 4095;

std::string OptionValueProblem(std::string_view name, std::string_view value);
std::string RunIdProblem(std::string_view name, std::string_view id);
std::string RoleProblem(std::string_view name, std::string_view role);
// `address` without the brackets of an IPv6 literal ("[::1]" -> "::1"): the form MASTER_ADDR
// and the store's bind take (PyTorch resolves the bare literal, not the bracketed one).
std::string BareAddress(std::string_view address);
// A value that is not one host: a character outside a host name's and an IPv6 literal's (a
// list, a CIDR suffix, a space, a bracket left after BareAddress). `hint` ends the line.
std::string HostAddressProblem(std::string_view name, std::string_view address,
                               std::string_view hint);
std::string PathProblem(std::string_view name, std::string_view path);

// A value as a message may quote it: whole when at most 64 bytes, else its first 40 bytes,
// "...", and its size ("aaaa... (9000 bytes)").
std::string Abbreviated(std::string_view value);

}  // namespace cpplaunch
