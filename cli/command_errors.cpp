#include "cli/command_errors.h"

#include <algorithm>
#include <iostream>
#include <map>

#include "text/terminal_safe.h"

namespace hypertopo::cli {

int exit_status_of(ErrorCode code) {
  switch (code) {
    case ErrorCode::kInvalidArgument:
    case ErrorCode::kParse:
    case ErrorCode::kNotFound:
      return kExitInvalid;
    case ErrorCode::kInvariant:
      return kExitNoAnswer;
    case ErrorCode::kUnavailable:
    case ErrorCode::kConflict:
    case ErrorCode::kPermission:
    case ErrorCode::kInternal:
      break;
  }
  return kExitRuntime;
}

int report_error(std::string_view command, std::string_view message, int status) {
  std::cerr << "hypertopo" << (command.empty() ? "" : " ") << command
            << ": error: " << text::terminal_safe(message) << "\n";
  return status;
}

int report_error(std::string_view command, const Error& e) {
  return report_error(command, e.message(), exit_status_of(e.code()));
}

int report_error(std::string_view command, const Error& e, int status) {
  return report_error(command, e.message(), status);
}

std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

std::string nearest_name(std::string_view given, const std::vector<std::string>& known) {
  std::string best;
  // A name cut short ("--ufm-ti") is the name it begins, the shortest of several.
  for (const auto& name : known) {
    if (name.starts_with(given) && (best.empty() || name.size() < best.size())) best = name;
  }
  if (!best.empty()) return best;
  std::size_t best_distance = std::string::npos;
  for (const auto& name : known) {
    const std::size_t d = edit_distance(given, name);
    if (d < best_distance) best_distance = d, best = name;
  }
  return best;
}

namespace {

// At most 40 characters of what the user typed, so a pasted blob stays one short line.
std::string shown(std::string_view given) {
  return given.size() > 40 ? std::string(given.substr(0, 40)) + "..." : std::string(given);
}

}  // namespace

std::optional<std::string> unknown_flag(const CLI::App& command, int argc, const char* const* args) {
  std::map<std::string, const CLI::Option*, std::less<>> by_name;  // "--source", "-s"
  for (const CLI::Option* option : command.get_options()) {
    if (!option->nonpositional()) continue;
    for (const auto& l : option->get_lnames()) by_name["--" + l] = option;
    for (const auto& s : option->get_snames()) by_name["-" + s] = option;
  }
  auto takes_value = [](const CLI::Option* option) { return option->get_expected_max() > 0; };
  auto unknown = [&](std::string_view given) {
    std::vector<std::string> known;
    for (const auto& [name, option] : by_name) {
      if (name.starts_with("--")) known.push_back(name);
    }
    const std::string near = nearest_name(given, known);
    return shown(given) + ": unknown flag" + (near.empty() ? "" : " (did you mean " + near + "?)");
  };
  bool value_next = false;
  for (int i = 0; i < argc; ++i) {
    const std::string_view arg = args[i];
    if (value_next) {  // the value of the flag before, whatever it begins with
      value_next = false;
      continue;
    }
    if (arg == "--") break;
    if (arg.size() < 2 || arg[0] != '-') continue;
    if (arg.starts_with("--")) {
      const std::string_view name = arg.substr(0, arg.find('='));
      const auto it = by_name.find(name);
      if (it == by_name.end()) return unknown(name);
      value_next = takes_value(it->second) && name.size() == arg.size();
      continue;
    }
    // Short flags, bundled or with the value attached: -v, -vo json, -ojson.
    for (std::size_t j = 1; j < arg.size(); ++j) {
      const auto it = by_name.find("-" + std::string(1, arg[j]));
      if (it == by_name.end()) return unknown(std::string("-") + arg[j]);
      if (takes_value(it->second)) {
        value_next = j + 1 == arg.size();
        break;
      }
    }
  }
  return std::nullopt;
}

std::string parse_error_message(const CLI::ParseError& e) {
  std::string message = e.what();
  // "--source is required", "shell is required"
  if (const std::string tail = " is required";
      message.ends_with(tail) && message.find(' ') == message.size() - tail.size())
    return message.substr(0, message.size() - tail.size()) + ": is required";
  // "--nodes: 1 required TEXT:FILE missing"
  if (const auto colon = message.find(": "); colon != std::string::npos && message.ends_with(" missing") &&
                                             message.find(" required ", colon) != std::string::npos)
    return message.substr(0, colon) + ": needs a value";
  // "Could not convert: --max-nodes-listed = abc"
  if (const std::string head = "Could not convert: "; message.starts_with(head)) {
    const auto equals = message.find(" = ", head.size());
    if (equals != std::string::npos)
      return message.substr(head.size(), equals - head.size()) + ": '" + shown(message.substr(equals + 3)) +
             "' is not a value it takes";
  }
  // "The following argument was not expected: extra" (the flags were checked before parsing)
  for (const std::string head :
       {"The following argument was not expected: ", "The following arguments were not expected: "}) {
    if (message.starts_with(head)) return shown(message.substr(head.size())) + ": unexpected argument";
  }
  if (message == "A subcommand is required") return "a subcommand is required (hypertopo --help lists them)";
  if (!message.empty()) message[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(message[0])));
  return message;
}

}  // namespace hypertopo::cli
