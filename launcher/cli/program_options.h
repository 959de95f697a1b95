#pragma once
// The option table (option_table.h) as a Boost.Program_options description: one
// option_description per row, named "<name>,<alias>,<short>" so that both spellings are
// names of one option. Program_options keys an option by its first long name without
// dashes ("nproc-per-node"); KeyOf and SpecForKey translate between keys and table rows.
// Built once, then read-only (safe to use from any thread).

#include <boost/program_options/options_description.hpp>
#include <string>

#include "launcher/cli/option_table.h"

namespace cpplaunch {

const boost::program_options::options_description& OptionDescriptions();

// "nproc-per-node" for the row of --nproc-per-node.
std::string KeyOf(const OptionSpec& spec);
// The row whose KeyOf is `key`; every key Program_options reports names a row.
const OptionSpec& SpecForKey(const std::string& key);

}  // namespace cpplaunch
