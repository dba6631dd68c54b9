// The --ufm-* flags (see ufm_flags.h).
#include "cli/ufm_flags.h"

#include <algorithm>
#include <memory>

#include "cli/unit_flags.h"

namespace hypertopo::cli {

void add_ufm_flags(CLI::App* cmd, discoverers::ufm::UfmSourceConfig& flags) {
  cmd->add_option("--ufm-credentials", flags.credentials_dir,
                  "Directory with UFM credentials: 'token', or 'username' and 'password' (a mounted Secret)")
      ->check(CLI::ExistingDirectory);
  cmd->add_option("--ufm-ca", flags.ca_file, "PEM CA bundle that signs the UFM server's certificate")
      ->check(CLI::ExistingFile);
  cmd->add_flag(
      "--ufm-insecure", flags.insecure,
      "Do not verify the UFM server's TLS certificate, and allow http:// (credentials in clear text)");
  add_duration_flag(cmd, "--ufm-timeout", flags.timeout,
                    "Time for the whole UFM fetch, every request, retry and backoff: 30s, 2m, or seconds "
                    "(default 30s)",
                    discoverers::kRestTimeoutMin, discoverers::kRestTimeoutMax);
  add_size_flag(cmd, "--ufm-max-bytes", flags.max_bytes,
                "Largest UFM response accepted: 512Mi, 2Gi, or bytes (default 512Mi)",
                discoverers::kRestMaxBytesMin, discoverers::kRestMaxBytesMax);
  cmd->add_option("--ufm-page-size", flags.page_size, "Ask UFM for pages of N records (default: unpaged)")
      ->check(CLI::PositiveNumber);
}

std::expected<void, Error> apply_ufm_flags(std::vector<discoverers::SourceSpec>& specs,
                                           const discoverers::ufm::UfmSourceConfig& flags) {
  const discoverers::ufm::UfmSourceConfig defaults;
  const bool given = flags.credentials_dir != defaults.credentials_dir || flags.ca_file != defaults.ca_file ||
                     flags.insecure != defaults.insecure || flags.timeout != defaults.timeout ||
                     flags.max_bytes != defaults.max_bytes || flags.page_size != defaults.page_size;
  const bool any_ufm = std::any_of(specs.begin(), specs.end(),
                                   [](const discoverers::SourceSpec& s) { return s.kind == "ufm"; });
  if (given && !any_ufm) {
    return std::unexpected(
        Error(ErrorCode::kInvalidArgument, "--ufm-* flags need a --source ufm:https://HOST"));
  }
  for (auto& spec : specs) {
    if (spec.kind != "ufm") continue;
    if (spec.arg.empty()) {
      return std::unexpected(
          Error(ErrorCode::kInvalidArgument, "--source ufm needs the server: ufm:https://HOST[:PORT]"));
    }
    if (spec.arg.find('@') != std::string::npos) {
      return std::unexpected(
          Error(ErrorCode::kInvalidArgument,
                "--source ufm: the URL must not carry credentials; use --ufm-credentials DIR"));
    }
    auto config = std::make_shared<discoverers::ufm::UfmSourceConfig>(flags);
    config->endpoint = spec.arg;
    spec.settings = std::move(config);
  }
  return {};
}

}  // namespace hypertopo::cli
