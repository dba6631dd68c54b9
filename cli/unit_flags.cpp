#include "cli/unit_flags.h"

#include <functional>

#include "io/config_reader.h"
#include "io/size_and_duration.h"

namespace hypertopo::cli {

namespace {

// The check runs before the value is stored, so a refused value never reaches the caller's variable.
CLI::Option* add_duration_option(CLI::App* cmd, const std::string& name,
                                 std::function<void(std::chrono::milliseconds)> store,
                                 const std::string& help, std::chrono::milliseconds min,
                                 std::chrono::milliseconds max) {
  auto check = [min, max](std::string& text) -> std::string {
    auto d = io::parse_duration(text);
    if (!d) return d.error().message();
    if (*d < min || *d > max)
      return "'" + text + "' is not from " + io::format_duration(min) + " to " + io::format_duration(max);
    return "";
  };
  return cmd
      ->add_option_function<std::string>(
          name, [store = std::move(store)](const std::string& text) { store(*io::parse_duration(text)); },
          help)
      ->check(CLI::Validator(check, "DURATION"))
      ->type_name("DURATION");
}

}  // namespace

CLI::Option* add_duration_flag(CLI::App* cmd, const std::string& name, double& seconds,
                               const std::string& help, std::chrono::milliseconds min,
                               std::chrono::milliseconds max) {
  return add_duration_option(
      cmd, name, [&seconds](std::chrono::milliseconds d) { seconds = d.count() / 1000.0; }, help, min, max);
}

CLI::Option* add_duration_flag(CLI::App* cmd, const std::string& name, std::chrono::milliseconds& value,
                               const std::string& help, std::chrono::milliseconds min,
                               std::chrono::milliseconds max) {
  return add_duration_option(
      cmd, name, [&value](std::chrono::milliseconds d) { value = d; }, help, min, max);
}

CLI::Option* add_size_flag(CLI::App* cmd, const std::string& name, std::uint64_t& bytes,
                           const std::string& help, std::uint64_t min, std::uint64_t max) {
  auto check = [min, max](std::string& text) -> std::string {
    auto n = io::parse_byte_size(text);
    if (!n) return n.error().message();
    if (*n < min || *n > max)
      return "'" + text + "' is not from " + io::format_byte_size(min) + " to " + io::format_byte_size(max);
    return "";
  };
  return cmd
      ->add_option_function<std::string>(
          name, [&bytes](const std::string& text) { bytes = *io::parse_byte_size(text); }, help)
      ->check(CLI::Validator(check, "SIZE"))
      ->type_name("SIZE");
}

}  // namespace hypertopo::cli
