// cli/ufm_flags.h: the --ufm-* flags, shared by every subcommand that takes --source ufm:URL.
//
// The flags only describe how to reach UFM; they are folded into each `ufm:` source string (see
// discoverers/ufm/ufm_client.h, with_ufm_settings), so a source spec carries everything its factory
// needs and the agent's config can say the same thing in one string.
//
//   discoverers::ufm::UfmSettings ufm;
//   add_ufm_flags(cmd, ufm);
//   ...
//   auto sources = apply_ufm_flags(opts.sources, ufm);   // std::expected<std::vector<std::string>, Error>
#pragma once

#include <CLI/CLI.hpp>
#include <expected>
#include <string>
#include <vector>

#include "discoverers/ufm/ufm_client.h"
#include "errors/error.h"

namespace hypertopo::cli {

// --ufm-credentials DIR, --ufm-ca FILE, --ufm-insecure, --ufm-timeout SECONDS, --ufm-max-bytes N,
// --ufm-page-size N.
void add_ufm_flags(CLI::App* cmd, discoverers::ufm::UfmSettings& settings);

// Adds the settings to every `ufm:` source; fails when flags were given and no source is `ufm:`.
std::expected<std::vector<std::string>, Error> apply_ufm_flags(const std::vector<std::string>& sources,
                                                               const discoverers::ufm::UfmSettings& settings);

}  // namespace hypertopo::cli
