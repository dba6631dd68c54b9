// The --ufm-* flags (see ufm_flags.h).
#include "cli/ufm_flags.h"

#include <algorithm>

namespace hypertopo::cli {

void add_ufm_flags(CLI::App* cmd, discoverers::ufm::UfmSettings& settings) {
  cmd->add_option("--ufm-credentials", settings.credentials_dir,
                  "Directory with UFM credentials: 'token', or 'username' and 'password' (a mounted Secret)")
      ->check(CLI::ExistingDirectory);
  cmd->add_option("--ufm-ca", settings.ca_file, "PEM CA bundle that signs the UFM server's certificate")
      ->check(CLI::ExistingFile);
  cmd->add_flag(
      "--ufm-insecure", settings.insecure,
      "Do not verify the UFM server's TLS certificate, and allow http:// (credentials in clear text)");
  cmd->add_option("--ufm-timeout", settings.timeout_seconds,
                  "Seconds for the whole UFM fetch: every request, retry and backoff (default 30)")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--ufm-max-bytes", settings.max_bytes, "Largest UFM response accepted (default 512 MiB)")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--ufm-page-size", settings.page_size, "Ask UFM for pages of N records (default: unpaged)")
      ->check(CLI::PositiveNumber);
}

std::expected<std::vector<std::string>, Error> apply_ufm_flags(
    const std::vector<std::string>& sources, const discoverers::ufm::UfmSettings& settings) {
  if (settings.empty()) return sources;
  if (std::none_of(sources.begin(), sources.end(),
                   [](const std::string& s) { return s.starts_with("ufm:"); })) {
    return std::unexpected(
        Error(ErrorCode::kInvalidArgument, "--ufm-* flags need a --source ufm:https://HOST"));
  }
  std::vector<std::string> out;
  out.reserve(sources.size());
  for (const auto& s : sources) out.push_back(discoverers::ufm::with_ufm_settings(s, settings));
  return out;
}

}  // namespace hypertopo::cli
