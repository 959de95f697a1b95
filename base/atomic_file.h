#pragma once
// Replacing a file so that a reader never sees half of it: the bytes go to a temporary file
// beside the target ("<path>.tmp.<pid>"; the same directory, so rename(2) cannot cross file
// systems), which is then renamed over the target. A reader opens either the old file or the
// new one. No fsync: this is about concurrent readers, not about surviving a crash.
// The temporary is created with O_EXCL | O_NOFOLLOW: a symlink planted under its name is never
// followed (its target is never written); a leftover is unlinked once and the create retried.
//
// Blocking. Errors throw std::system_error ("open <temp>", "write <temp>", "close <temp>",
// "rename to <path>"); the temporary file is removed and the target is left as it was.

#include <filesystem>
#include <string_view>

namespace cpplaunch {

void ReplaceFile(const std::filesystem::path& path, std::string_view bytes);

}  // namespace cpplaunch
