#pragma once
// torchrun's PET_<DEST> variables as Program_options input. Each option with a PET_ variable
// (option_table.h: has_env) reads its default from it: PET_NPROC_PER_NODE for
// --nproc-per-node. Values come back as text, unchecked (option_value.h checks them).

#include <boost/program_options/parsers.hpp>
#include <string>

#include "worker_env/env_map.h"

namespace cpplaunch {

// Program_options' name mapper: "PET_NPROC_PER_NODE" -> "nproc-per-node" (the option's key),
// "" for every other variable, including PET_ names of options that have no variable.
std::string PetNameMapper(const std::string& env_name);

// Program_options' parse_environment(description, PetNameMapper) over `env` instead of the
// process's environ: the parse stays pure (ParseOptions takes the environment as a value).
// Options come in the order of `env` (by name); each has one value.
boost::program_options::parsed_options ParsePetEnvironment(const EnvMap& env);

}  // namespace cpplaunch
