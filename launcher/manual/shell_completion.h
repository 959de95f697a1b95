#pragma once
// Shell completion scripts for cpplaunch, built from the option table: every option in each
// of its spellings, and the values of options with a fixed set of choices. Pure. Written at
// build time by packaging/install_files_main.cpp, installed as
// share/bash-completion/completions/cpplaunch and share/zsh/vendor-completions/_cpplaunch.

#include <string>

namespace cpplaunch {

// Defines _cpplaunch and registers it for cpplaunch (`complete -o default`, so the script and
// its arguments complete as file names). Needs plain bash only, not the bash-completion package.
std::string BashCompletion();

// A #compdef file for zsh's completion system (_arguments).
std::string ZshCompletion();

}  // namespace cpplaunch
