// `hypertopo completion bash|zsh`: a shell completion script written from the parsed command line
// itself (every subcommand, its flags, and the values of flags that take one of a set), so it cannot
// fall behind the flags. zsh runs the same function through bashcompinit.
#include <iostream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "cli/commands.h"

namespace hypertopo::cli {
namespace {

// "json yaml text" from a type name such as "TEXT:{json,yaml,text}"; "" when it names no set.
std::string choices_of(const CLI::Option& option) {
  const std::string type = option.get_type_name();
  const auto open = type.find('{');
  const auto close = type.find('}', open);
  if (open == std::string::npos || close == std::string::npos) return "";
  std::string list = type.substr(open + 1, close - open - 1);
  for (char& c : list) {
    if (c == ',') c = ' ';
  }
  return list;
}

std::vector<std::string> names_of(const CLI::Option& option) {
  std::vector<std::string> names;
  for (const auto& s : option.get_snames()) names.push_back("-" + s);
  for (const auto& l : option.get_lnames()) names.push_back("--" + l);
  return names;
}

std::string bash_script(const CLI::App& app) {
  std::ostringstream words, value_sets, takes_value;
  std::string top = "--help --version";
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
    const std::string& name = sub->get_name();
    top += " " + name;
    std::string flags = "--help";
    for (const CLI::Option* option : sub->get_options()) {
      if (!option->nonpositional()) continue;
      for (const auto& flag : names_of(*option)) {
        if (flag == "-h" || flag == "--help") continue;
        flags += " " + flag;
        if (option->get_expected_max() == 0) continue;
        const std::string choices = choices_of(*option);
        if (!choices.empty())
          value_sets << "    \"" << name << " " << flag << "\") values=\"" << choices << "\" ;;\n";
        else
          takes_value << "    \"" << name << " " << flag << "\") values=FILE ;;\n";
      }
    }
    words << "    " << name << ") words=\"" << flags << "\" ;;\n";
  }
  std::ostringstream out;
  out << "# hypertopo completion for bash (hypertopo completion bash), written from hypertopo's own flags.\n"
         "_hypertopo() {\n"
         "  local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]} sub=\"\" i words "
         "values=\"\"\n"
         "  for ((i = 1; i < COMP_CWORD; i++)); do\n"
         "    case ${COMP_WORDS[i]} in -*) ;; *) sub=${COMP_WORDS[i]}; break ;; esac\n"
         "  done\n"
         "  case \"$sub $prev\" in\n"
      << value_sets.str() << takes_value.str()
      << "  esac\n"
         "  if [[ $values == FILE ]]; then COMPREPLY=($(compgen -f -- \"$cur\")); return; fi\n"
         "  if [[ -n $values ]]; then COMPREPLY=($(compgen -W \"$values\" -- \"$cur\")); return; fi\n"
         "  case $sub in\n"
         "    \"\") words=\""
      << top << "\" ;;\n"
      << words.str()
      << "  esac\n"
         "  if [[ -n $sub && $cur != -* ]]; then COMPREPLY=($(compgen -f -- \"$cur\")); return; fi\n"
         "  COMPREPLY=($(compgen -W \"$words\" -- \"$cur\"))\n"
         "}\n"
         "complete -o filenames -F _hypertopo hypertopo\n";
  return out.str();
}

}  // namespace

void add_completion_command(CLI::App& app, Action& action) {
  auto shell = std::make_shared<std::string>();
  auto* cmd = app.add_subcommand("completion", "Print a shell completion script (bash or zsh)");
  cmd->footer(
      "Examples:\n"
      "  source <(hypertopo completion bash)     # in ~/.bashrc\n"
      "  source <(hypertopo completion zsh)      # in ~/.zshrc, after compinit");
  cmd->add_option("shell", *shell, "bash or zsh")->required()->check(CLI::IsMember({"bash", "zsh"}));
  cmd->callback([&app, &action, shell] {
    action = [&app, shell] {
      if (*shell == "zsh") {
        std::cout << "# hypertopo completion for zsh (hypertopo completion zsh): the bash function through\n"
                     "# zsh's bashcompinit.\n"
                     "autoload -U +X bashcompinit && bashcompinit\n";
      }
      std::cout << bash_script(app);
      return 0;
    };
  });
}

}  // namespace hypertopo::cli
