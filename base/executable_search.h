#pragma once
// Where execvp would find a program: the launcher names the interpreter its workers run, and
// refuses a --no-python program that no worker could start, before any worker starts.
//
// Blocking filesystem calls (access(2), stat(2)); never throws. Thread-safe.

#include <optional>
#include <string>
#include <vector>

namespace cpplaunch {

struct ExecutableSearch {
  std::optional<std::string> found;  // the first candidate execve would run
  // When not found: a regular file (or more) that matched by name but is not executable by
  // this process (execvp's EACCES); empty means nothing of that name (ENOENT).
  std::vector<std::string> not_executable;
};

// The exec candidates for `program`: itself when it contains '/', else each entry of
// `path_value` joined with it ("" = the current directory; null = PATH unset, glibc's default
// "/bin:/usr/bin"). Pure: the worker's exec walks them in the forked child.
std::vector<std::string> ExecCandidates(const std::string& program, const char* path_value);

// execvp's search: `program` itself when it contains '/', else each entry of `path_value`
// ("" = the current directory; null = glibc's default "/bin:/usr/bin"). A candidate counts when
// it is a regular file this process may execute.
ExecutableSearch FindExecutable(const std::string& program, const char* path_value);

}  // namespace cpplaunch
