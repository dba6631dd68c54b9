// cli/ufm_flags.h: the --ufm-* flags, shared by every subcommand that takes --source ufm:URL.
//
// The flags fill the ufm source's own config struct (discoverers/ufm/ufm_source.h, UfmSourceConfig),
// the one the agent's YAML fills too; each `ufm:URL` source gets a copy with its endpoint set.
//
//   discoverers::ufm::UfmSourceConfig ufm;
//   add_ufm_flags(cmd, ufm);
//   ...
//   if (auto ok = apply_ufm_flags(specs, ufm); !ok) ...   // specs: std::vector<SourceSpec>
#pragma once

#include <CLI/CLI.hpp>
#include <expected>
#include <vector>

#include "discoverers/registry/discoverer.h"
#include "discoverers/ufm/ufm_source.h"
#include "errors/error.h"

namespace hypertopo::cli {

// --ufm-credentials DIR, --ufm-ca FILE, --ufm-insecure, --ufm-timeout SECONDS, --ufm-max-bytes N,
// --ufm-page-size N.
void add_ufm_flags(CLI::App* cmd, discoverers::ufm::UfmSourceConfig& flags);

// Gives every `ufm:` spec the flags' config with its own endpoint; fails when flags were given and
// no source is `ufm:`.
std::expected<void, Error> apply_ufm_flags(std::vector<discoverers::SourceSpec>& specs,
                                           const discoverers::ufm::UfmSourceConfig& flags);

}  // namespace hypertopo::cli
