// `hypertopo completion bash|zsh`: a shell completion script written from the parsed command line
// itself (every subcommand, its flags, the values of flags that take one of a set: output formats,
// roles, --source's kinds and label presets), so it cannot fall behind the flags. File names are
// offered only where a flag takes a file (directories where it takes one); any other value, and a
// positional argument outside its set, completes to nothing. zsh runs the same function through
// bashcompinit.
#include <CLI/CLI.hpp>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "discoverers/labels/label_presets.h"
#include "discoverers/registry/discoverer.h"

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

// Flags that name a file or directory to write or to reach, so CLI11 checks no existence for them.
bool names_a_path(const std::string& flag) {
  for (const char* f : {"--kubeconfig", "--write-manifests", "--cache", "--graph", "--state",
                        "--lldpd-socket", "--ufm-ca", "--ufm-credentials", "--work-dir", "--root"}) {
    if (flag == f) return true;
  }
  return false;
}

// What --source completes to: the kinds of the role the subcommand runs, and for `labels` each
// cloud preset (labels:preset=eks).
std::string source_words(const std::string& subcommand) {
  discoverers::DiscovererRegistry registry;
  discoverers::register_builtin_discoverers(registry);
  const auto role =
      subcommand == "probe" ? discoverers::SourceRole::kNodeProbe : discoverers::SourceRole::kLeader;
  std::string words;
  for (const auto& kind : registry.kinds(role)) words += (words.empty() ? "" : " ") + kind;
  if (role == discoverers::SourceRole::kLeader) {
    for (const auto& preset : discoverers::labels::label_presets()) words += " labels:preset=" + preset.name;
  }
  return words;
}

// The value a flag takes: one of a set (IsMember, and --source's kinds), a file or a directory (a
// flag CLI11 checks as ExistingFile/ExistingDirectory, or one that names a path), else anything,
// which completes to nothing rather than to file names.
std::string values_of(const std::string& subcommand, const std::string& flag, const CLI::Option& option) {
  if (const std::string choices = choices_of(option); !choices.empty()) return choices;
  if (flag == "--source" || flag == "-s") return source_words(subcommand);
  const std::string type = option.get_type_name();
  if (type.find("DIR") != std::string::npos || flag == "--work-dir" || flag == "--root" ||
      flag == "--ufm-credentials")
    return "DIR";
  if (type.find("FILE") != std::string::npos || type.find("PATH") != std::string::npos || names_a_path(flag))
    return "FILE";
  return "NONE";
}

std::string bash_script(const CLI::App& app) {
  std::ostringstream words, flag_values, positionals;
  std::string top = "--help --version";
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
    const std::string& name = sub->get_name();
    top += " " + name;
    std::string flags = "--help";
    for (const CLI::Option* option : sub->get_options()) {
      if (!option->nonpositional()) {
        if (const std::string choices = choices_of(*option); !choices.empty())
          positionals << "    " << name << ") values=\"" << choices << "\" ;;\n";
        continue;
      }
      for (const auto& flag : names_of(*option)) {
        if (flag == "-h" || flag == "--help") continue;
        flags += " " + flag;
        if (option->get_expected_max() == 0) continue;
        flag_values << "    \"" << name << " " << flag << "\") values=\"" << values_of(name, flag, *option)
                    << "\" ;;\n";
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
      << flag_values.str()
      << "  esac\n"
         "  case $values in\n"
         "    FILE) COMPREPLY=($(compgen -f -- \"$cur\")); return ;;\n"
         "    DIR) COMPREPLY=($(compgen -d -- \"$cur\")); return ;;\n"
         "    NONE) COMPREPLY=(); return ;;\n"
         "    ?*) COMPREPLY=($(compgen -W \"$values\" -- \"$cur\")); return ;;\n"
         "  esac\n"
         "  case $sub in\n"
         "    \"\") words=\""
      << top << "\" ;;\n"
      << words.str()
      << "  esac\n"
         "  if [[ -n $sub && $cur != -* ]]; then\n"
         "    case $sub in\n"
      << positionals.str()
      << "    esac\n"
         "    COMPREPLY=($(compgen -W \"$values\" -- \"$cur\")); return\n"
         "  fi\n"
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
