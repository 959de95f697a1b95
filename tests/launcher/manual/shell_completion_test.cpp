#include "launcher/manual/shell_completion.h"

#include <catch2/catch.hpp>

#include "launcher/cli/option_table.h"

namespace cpplaunch {
namespace {

bool Contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST_CASE("bash: every spelling of every option, the valued ones apart, choices by option") {
  const std::string script = BashCompletion();
  CHECK(Contains(script, "complete -o default -F _cpplaunch cpplaunch\n"));
  for (const OptionSpec& spec : OptionTable()) {
    INFO(spec.name);
    CHECK(Contains(script, " " + std::string(spec.name) + " "));
    if (!spec.alias.empty()) CHECK(Contains(script, " " + std::string(spec.alias) + " "));
    if (!spec.short_name.empty()) CHECK(Contains(script, std::string(spec.short_name) + " "));
  }
  CHECK(Contains(script, "local valued=\" --nnodes --nproc-per-node --nproc_per_node "));
  CHECK(Contains(script, " -r --redirects -t --tee "));
  CHECK(Contains(script,
                 "    --start-method|--start_method) COMPREPLY=($(compgen -W \"spawn fork "
                 "forkserver\" -- \"$cur\")) ;;\n"));
  CHECK(Contains(script, "    --engine) COMPREPLY=($(compgen -W \"auto none slurm mpi k8s\""));
  // Issue 27: options that take any word still offer their usual values.
  CHECK(Contains(script,
                 "    --rdzv-backend|--rdzv_backend) COMPREPLY=($(compgen -W \"static c10d "
                 "etcd etcd-v2 etcd-v3\" -- \"$cur\")) ;;\n"));
  CHECK(Contains(script,
                 "    --nproc-per-node|--nproc_per_node) COMPREPLY=($(compgen -W \"auto "
                 "cpu gpu\""));
  CHECK(Contains(script, "compgen -W \"null console dynamic_rendezvous\""));
}

TEST_CASE("zsh: one _arguments spec per option, all spellings excluding each other") {
  const std::string script = ZshCompletion();
  CHECK(script.starts_with("#compdef cpplaunch\n"));
  CHECK(Contains(script, "  '(- *)'{-h,--help}'[show this help message and exit]' \\\n"));
  CHECK(Contains(script, "  '(- *)'--version'[show the version and exit]' \\\n"));
  CHECK(Contains(script, "'(-r --redirects)'{-r+,--redirects=}'["));
  CHECK(Contains(script, "'(-m --module)'{-m,--module}'[run the script as a module"));
  CHECK(Contains(script,
                 "'(--engine)'--engine='[nodes, node rank, store from Slurm/MPI/k8s]"
                 ":value:(auto none slurm mpi k8s)' \\\n"));
  CHECK(Contains(script,
                 "'(--nproc-per-node --nproc_per_node)'"
                 "{--nproc-per-node=,--nproc_per_node=}'["));
  for (const OptionSpec& spec : OptionTable()) {
    INFO(spec.name);
    CHECK(Contains(script, std::string(spec.name) + (TakesValue(spec) ? "=" : "")));
  }
  // A quote in a help line would end the single-quoted spec, a bracket the description.
  CHECK(Contains(script, "[workers'\\'' store: the agent'\\''s, or rank 0'\\''s]"));
  CHECK(Contains(script, "[host\\[:port\\] (etcd: host\\[:port\\],...)]"));
}

}  // namespace
}  // namespace cpplaunch
