#pragma once
// The manual page cpplaunch(1), in roff, built from the option table as `--help` is, so the
// two list the same options, spellings, defaults and PET_ variables. Pure. Written at build
// time by packaging/install_files_main.cpp.

#include <string>
#include <string_view>

namespace cpplaunch {

// The page for `version` ("0.1.0"): name, synopsis, description, every option of the table in
// its order, environment, exit status, files, see also.
std::string ManPage(std::string_view version);

// Text escaped for roff: '-' as \-, '\' as \e, and a leading '.' or '\'' kept literal.
std::string RoffEscape(std::string_view text);

}  // namespace cpplaunch
