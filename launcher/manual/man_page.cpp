#include "launcher/manual/man_page.h"

#include "launcher/cli/help_text.h"
#include "launcher/cli/option_table.h"

namespace cpplaunch {
namespace {

std::string Bold(std::string_view text) { return "\\fB" + RoffEscape(text) + "\\fR"; }

// "\fB\-r\fR, \fB\-\-redirects\fR \fIVALUE\fR", the spellings in --help's order.
std::string Spellings(const OptionSpec& spec) {
  std::string text;
  if (!spec.short_name.empty()) text += Bold(spec.short_name) + ", ";
  text += Bold(spec.name);
  if (!spec.alias.empty()) text += ", " + Bold(spec.alias);
  if (TakesValue(spec)) text += " \\fIVALUE\\fR";
  return text;
}

std::string OptionEntry(const OptionSpec& spec) {
  std::string entry = ".TP\n" + Spellings(spec) + "\n" + RoffEscape(spec.help) + "\n";
  const std::string details = OptionDetails(spec);
  if (!details.empty()) entry += ".br\n(" + RoffEscape(details) + ")\n";
  return entry;
}

// No hyphenation and a ragged right margin: option names, variables and paths must survive
// as written, to be read and pasted.
constexpr std::string_view kHead = R"(.nh
.ad l
.SH NAME
cpplaunch \- torchrun\-compatible launcher for distributed PyTorch and LibTorch jobs
.SH SYNOPSIS
.B cpplaunch
[\fIoptions\fR] \fItraining_script\fR [\fItraining_script_args\fR ...]
.br
.B cpplaunch
\fB\-\-no\-python\fR [\fIoptions\fR] \fIprogram\fR [\fIargs\fR ...]
.SH DESCRIPTION
.B cpplaunch
starts \fB\-\-nproc\-per\-node\fR workers on this host, gives each the environment torchrun
gives (RANK, LOCAL_RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT, TORCHELASTIC_*), hosts a
store that speaks PyTorch's TCPStore protocol, and supervises the workers: the first failure
stops the others, signals are forwarded, and nothing is left running when it exits.
With \fB\-\-nnodes\fR greater than one, one
.B cpplaunch
runs on each host and they meet in a static, c10d or etcd\-v3 rendezvous (etcd\-v3: in an
etcd cluster named by \fB\-\-rdzv\-endpoint\fR, which outlives the loss of any host).
.PP
The command line is torchrun's: every option in both spellings (\fB\-\-nproc\-per\-node\fR,
\fB\-\-nproc_per_node\fR), any unique prefix (\fB\-\-nproc 4\fR), values as
\fB\-\-opt=value\fR or \fB\-\-opt value\fR. Everything after \fItraining_script\fR is passed to
the script unchanged, except that \fB$local_rank\fR and \fB${local_rank}\fR are replaced and
\fB$$\fR becomes \fB$\fR.
The script runs with \fBpython3\fR (or \fB$PYTHON_EXEC\fR); with \fB\-\-no\-python\fR it is
run itself.
.SH OPTIONS
)";

constexpr std::string_view kTail = R"(.SH ENVIRONMENT
.TP
.B PET_*
Every option except \fB\-\-logs\-specs\fR, \fB\-\-numa\-binding\fR and \fB\-\-version\fR takes
its default from the PET_ variable named beside it above; the command line wins.
.TP
.B PYTHON_EXEC
The interpreter that runs the training script. Unset: \fBpython3\fR from PATH, or, when that
one has no torch, another \fBpython3\fR on PATH (or \fB/usr/bin/python3\fR) that has it, said
in one line; as the drop\-in \fBtorchrun\fR, the interpreter on the #! line of the
\fBtorchrun\fR it shadows.
.TP
.B TORCH_ELASTIC_SHUTDOWN_TIMEOUT
Default of \fB\-\-shutdown\-timeout\fR.
.TP
.B TORCH_ELASTIC_EXIT_BARRIER_TIMEOUT
Default of \fB\-\-exit\-barrier\-timeout\fR (torchrun's fixed 300 s otherwise).
.TP
.B TORCHELASTIC_LOG_LINE_PREFIX_TEMPLATE
The whole prefix of tee'd worker lines instead of \fB[default0]:\fR, with \fB${role_name}\fR,
\fB${rank}\fR (global) and \fB${local_rank}\fR substituted: \fB[${rank}]:\fR shows global
ranks on a console shared by several hosts.
.SH EXIT STATUS
.TP
.B 0
every worker succeeded
.TP
.B 1
a worker failed after all restarts, the launcher was signalled, the rendezvous failed, or an
option value was rejected
.TP
.B 2
the command line could not be parsed, or asks for something cpplaunch does not support
.PP
With \fB\-\-exit\-code=worker\fR, a job whose root cause is a worker of this host that failed
on its own ends with that worker's exit status instead of 1 (128 + N for a death by signal N),
so a test runner's status reaches CI; see \fI/usr/share/doc/cpplaunch/docs/ci.md\fR.
.SH FILES
.TP
.I /usr/lib/cpplaunch/bin/torchrun
runs cpplaunch: put \fI/usr/lib/cpplaunch/bin\fR first in PATH and scripts that say
\fBtorchrun\fR run cpplaunch.
.TP
.I /usr/share/doc/cpplaunch/
README.md, and in \fIdocs/\fR the user guide, the compatibility table, CI recipes (ci.md),
troubleshooting.
.SH EXAMPLES
.nf
cpplaunch \-\-nproc\-per\-node=4 train.py
cpplaunch \-\-nproc\-per\-node=4 \-\-no\-python ./trainer
cpplaunch \-\-nnodes=2 \-\-node\-rank=0 \-\-master\-addr=10.0.0.1 \-\-master\-port=29500 train.py
.fi
.SH SEE ALSO
\fBcpplaunch \-\-help\fR, \fBpython3 \-m torch.distributed.run \-\-help\fR (torchrun),
\fI/usr/share/doc/cpplaunch/docs/user\-guide.md\fR
)";

}  // namespace

std::string RoffEscape(std::string_view text) {
  std::string out;
  for (char c : text) {
    if (c == '\\') {
      out += "\\e";
    } else if (c == '-') {
      out += "\\-";
    } else {
      out += c;
    }
  }
  if (!out.empty() && (out.front() == '.' || out.front() == '\'')) out.insert(0, "\\&");
  return out;
}

std::string ManPage(std::string_view version) {
  std::string page = ".TH CPPLAUNCH 1 \"\" \"cpplaunch " + std::string(version) +
                     "\" \"User Commands\"\n" + std::string(kHead);
  for (const OptionSpec& spec : OptionTable()) page += OptionEntry(spec);
  return page + std::string(kTail);
}

}  // namespace cpplaunch
