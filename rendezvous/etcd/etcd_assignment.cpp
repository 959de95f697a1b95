#include "rendezvous/etcd/etcd_assignment.h"

#include <charconv>

namespace cpplaunch {
namespace {

constexpr std::string_view kMarker = "@records ";

// Reads a decimal number ending at `stop` from the front of *text, and the stop character.
bool TakeNumber(std::string_view* text, char stop, int64_t* value) {
  const size_t end = text->find(stop);
  if (end == std::string_view::npos) return false;
  const auto [ptr, error] = std::from_chars(text->data(), text->data() + end, *value);
  if (error != std::errc() || ptr != text->data() + end || *value < 0) return false;
  text->remove_prefix(end + 1);
  return true;
}

}  // namespace

std::string EncodePublishedAssignment(const RoundAssignment& assignment, int64_t revision,
                                      const std::map<std::string, std::string>& records) {
  std::string carried;
  size_t count = 0;
  for (const auto& [rank, id] : assignment.peers) {
    const auto found = records.find(id);
    if (found == records.end()) continue;
    carried += std::to_string(found->second.size()) + " " + id + "\n" + found->second;
    ++count;
  }
  return assignment.Encode() + std::string(kMarker) + std::to_string(revision) + " " +
         std::to_string(count) + "\n" + carried;
}

std::optional<PublishedAssignment> DecodePublishedAssignment(std::string_view value,
                                                             std::string* error) {
  PublishedAssignment out;
  // The assignment's text ends with '\n' and its keys never start with '@'.
  size_t at = value.starts_with(kMarker) ? 0 : value.find("\n" + std::string(kMarker));
  if (at != std::string_view::npos && at != 0) ++at;
  auto assignment = RoundAssignment::Decode(value.substr(0, at), error);
  if (!assignment) return std::nullopt;
  out.assignment = std::move(*assignment);
  if (at == std::string_view::npos) return out;
  std::string_view rest = value.substr(at + kMarker.size());
  int64_t count = 0;
  if (!TakeNumber(&rest, ' ', &out.records_revision) || !TakeNumber(&rest, '\n', &count)) {
    *error = "round assignment: malformed records header";
    return std::nullopt;
  }
  for (int64_t i = 0; i < count; ++i) {
    int64_t length = 0;
    const bool sized = TakeNumber(&rest, ' ', &length);
    const size_t id_end = rest.find('\n');
    if (!sized || id_end == std::string_view::npos) {
      *error = "round assignment: malformed record " + std::to_string(i + 1);
      return std::nullopt;
    }
    std::string id(rest.substr(0, id_end));
    rest.remove_prefix(id_end + 1);
    if (static_cast<uint64_t>(length) > rest.size()) {
      *error = "round assignment: record of " + id + " cut short";
      return std::nullopt;
    }
    out.records[std::move(id)] = std::string(rest.substr(0, static_cast<size_t>(length)));
    rest.remove_prefix(static_cast<size_t>(length));
  }
  if (!rest.empty()) {
    *error = "round assignment: " + std::to_string(rest.size()) + " bytes after the records";
    return std::nullopt;
  }
  return out;
}

}  // namespace cpplaunch
