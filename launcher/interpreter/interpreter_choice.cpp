#include "launcher/interpreter/interpreter_choice.h"

namespace cpplaunch {

bool LooksElsewhere(const PythonFacts& first) {
  return first.modules == PythonFacts::Modules::kMissing;
}

bool Fits(const PythonFacts& other) { return other.modules == PythonFacts::Modules::kAll; }

PythonChoice OtherPython(const PythonFacts& first, const PythonFacts& other) {
  const std::string lacks = "has no module '" + first.missing + "'";
  PythonChoice choice;
  choice.program = other.program;
  choice.note = "the workers run " + other.program + ": the python3 on PATH, " + first.shown +
                ", " + lacks + " (PYTHON_EXEC chooses another)";
  choice.origin = "python3 on PATH " + lacks;
  return choice;
}

PythonChoice ShadowedTorchrunPython(const std::string& interpreter, const std::string& torchrun) {
  return PythonChoice{interpreter, "",
                      "the #! of " + torchrun + ", which this torchrun stands in for"};
}

}  // namespace cpplaunch
