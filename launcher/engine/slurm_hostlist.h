#pragma once
// Slurm's hostlist syntax (slurm.conf(5), "NodeName"; what `scontrol show hostnames` expands),
// read in-process so that no scontrol is needed inside a container. Pure.
//
//   list    := entry ("," entry)*              commas inside brackets do not split entries
//   entry   := text (group text)*              no text after the last group ("gpu[1-2]x" is
//                                               invalid, as in Slurm)
//   group   := "[" item ("," item)* "]"
//   item    := digits | digits "-" digits      leading zeros fix the width: [009-011]
//
// Several groups expand as their product, the first group outermost (x[1-2]y[1-2] is x1y1 x1y2
// x2y1 x2y2); the order of items and entries is kept, never sorted.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cpplaunch {

// Expansions larger than this are refused as malformed: no Slurm step has a million nodes.
inline constexpr size_t kMaxHostlistNames = 1 << 20;

// Every host name of `list`, in order. nullopt with *error = one clause saying what is wrong
// ("unbalanced '['", "range 5-3 runs backwards", ...) for an empty or malformed list.
std::optional<std::vector<std::string>> ExpandHostlist(std::string_view list, std::string* error);

}  // namespace cpplaunch
