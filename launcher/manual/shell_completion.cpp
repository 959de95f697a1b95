#include "launcher/manual/shell_completion.h"

#include <string_view>
#include <vector>

#include "launcher/cli/option_table.h"

namespace cpplaunch {
namespace {

std::vector<std::string_view> SpellingsOf(const OptionSpec& spec) {
  std::vector<std::string_view> names;
  if (!spec.short_name.empty()) names.push_back(spec.short_name);
  names.push_back(spec.name);
  if (!spec.alias.empty()) names.push_back(spec.alias);
  return names;
}

std::string Joined(const std::vector<std::string_view>& words, std::string_view separator) {
  std::string text;
  for (std::string_view word : words) {
    if (!text.empty()) text += separator;
    text += word;
  }
  return text;
}

// The words a completion offers: the choices, else the usual values.
std::string_view OfferedValues(const OptionSpec& spec) {
  return spec.choices.empty() ? spec.completions : spec.choices;
}

// "spawn,fork,forkserver" -> "spawn fork forkserver".
std::string ChoiceWords(std::string_view choices) {
  std::string words(choices);
  for (char& c : words) {
    if (c == ',') c = ' ';
  }
  return words;
}

// Every spelling of every option, and (with a space on either side of each, for bash's
// pattern match) the spellings that take a value.
std::string AllSpellings(bool valued_only) {
  std::vector<std::string_view> names;
  for (const OptionSpec& spec : OptionTable()) {
    if (valued_only && !TakesValue(spec)) continue;
    for (std::string_view name : SpellingsOf(spec)) names.push_back(name);
  }
  return Joined(names, " ");
}

std::string BashChoiceCases() {
  std::string cases;
  for (const OptionSpec& spec : OptionTable()) {
    if (OfferedValues(spec).empty()) continue;
    cases += "    " + Joined(SpellingsOf(spec), "|") + ") COMPREPLY=($(compgen -W \"" +
             ChoiceWords(OfferedValues(spec)) + "\" -- \"$cur\")) ;;\n";
  }
  return cases;
}

// Inside a single-quoted _arguments spec: a quote ends the shell word, and a bracket the
// description, unless escaped.
std::string ZshDescription(std::string_view help) {
  std::string text;
  for (char c : help) {
    if (c == '\'') {
      text += "'\\''";
    } else if (c == '[' || c == ']') {
      text += std::string("\\") + c;
    } else {
      text += c;
    }
  }
  return text;
}

// "'(-r --redirects)'{-r+,--redirects=}'[help]:value'": the exclusion list (one option, all
// spellings), the spellings (a long one takes "=value" or the next word; a short one a glued
// value or the next word), the help, and the value's completion.
std::string ZshSpec(const OptionSpec& spec) {
  const std::vector<std::string_view> names = SpellingsOf(spec);
  const bool ends_parse = spec.kind == ValueKind::kHelp || spec.kind == ValueKind::kVersion;
  std::string spec_text = ends_parse ? "'(- *)'" : "'(" + Joined(names, " ") + ")'";
  std::vector<std::string> forms;
  for (std::string_view name : names) {
    std::string form(name);
    if (TakesValue(spec)) form += name.size() == 2 ? "+" : "=";
    forms.push_back(form);
  }
  if (forms.size() == 1) {
    spec_text += forms.front();
  } else {
    std::string braces;
    for (const std::string& form : forms) braces += (braces.empty() ? "" : ",") + form;
    spec_text += "{" + braces + "}";
  }
  spec_text += "'[" + ZshDescription(spec.help) + "]";
  if (TakesValue(spec)) {
    spec_text += ":value:";
    if (!OfferedValues(spec).empty()) spec_text += "(" + ChoiceWords(OfferedValues(spec)) + ")";
  }
  return spec_text + "'";
}

// bash splits "--engine=sl" at '=' (COMP_WORDBREAKS): the words are "--engine" "=" "sl".
constexpr std::string_view kBashTemplate =
    R"(# bash completion for cpplaunch, generated from its option table
# (launcher/cli/option_table.cpp).
_cpplaunch() {
  local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]} option="" i
  local options="@OPTIONS@"
  local valued=" @VALUED@ "
  # The first word that is neither an option nor an option's value is the script:
  # from there on, the script's own arguments (file names, -o default).
  for ((i = 1; i < COMP_CWORD; i++)); do
    if [[ ${COMP_WORDS[i]} == "=" ]]; then
      ((i++))
    elif [[ ${COMP_WORDS[i]} == -* ]]; then
      if [[ $valued == *" ${COMP_WORDS[i]} "* && ${COMP_WORDS[i+1]} != "=" ]]; then
        ((i++))
      fi
    else
      return 0
    fi
  done
  if [[ $cur == "=" ]]; then
    option=$prev
    cur=""
  elif [[ $prev == "=" ]]; then
    option=${COMP_WORDS[COMP_CWORD-2]}
  elif [[ $valued == *" $prev "* ]]; then
    option=$prev
  fi
  if [[ -n $option ]]; then
    case $option in
@CHOICES@
    esac
    return 0
  fi
  if [[ $cur == -* ]]; then
    COMPREPLY=($(compgen -W "$options" -- "$cur"))
  fi
}
complete -o default -F _cpplaunch cpplaunch
)";

void Replace(std::string& text, std::string_view placeholder, const std::string& value) {
  text.replace(text.find(placeholder), placeholder.size(), value);
}

}  // namespace

std::string BashCompletion() {
  std::string script(kBashTemplate);
  Replace(script, "@OPTIONS@", AllSpellings(false));
  Replace(script, "@VALUED@", AllSpellings(true));
  Replace(script, "@CHOICES@\n", BashChoiceCases());
  return script;
}

std::string ZshCompletion() {
  std::string text =
      "#compdef cpplaunch\n"
      "# zsh completion for cpplaunch, generated from its option table\n"
      "# (launcher/cli/option_table.cpp).\n"
      "_arguments -S -s \\\n";
  for (const OptionSpec& spec : OptionTable()) text += "  " + ZshSpec(spec) + " \\\n";
  text +=
      "  '(-)1:training script:_files' \\\n"
      "  '*::script arguments:_files'\n";
  return text;
}

}  // namespace cpplaunch
