// topology/hypernode_tier.h: the one reader of a HyperNode's spec.tier.
//
// The CRD types spec.tier as an int32 with minimum 0 (deploy/overlays/with-hypernode-crd), so a
// larger value is refused, never narrowed: 4294967297 read with get<int>() would be tier 1. The top
// int32 is refused too: the cluster is a domain one tier above the highest HyperNode (the scheduler's
// index root, status's free blocks), and 2^31-1 leaves it no tier. Hand-written YAML sometimes quotes the
// number ("3"); it reads as the same tier, with the same bounds. Every door that reads HyperNodes (place and
// the extender through the cluster loader, `hypertopo status`) calls this, so they accept and refuse the same
// objects with the same words.
//
//   auto tier = topology::read_hypernode_tier(spec.find("tier"), "HyperNode rack-1");
//   if (!tier) return std::unexpected(tier.error());   // "HyperNode rack-1: spec.tier ..."
//
// The value is any io/json_view.h view (io::NlohmannView, io::SimdjsonView).
#pragma once

#include <charconv>
#include <cstdint>
#include <expected>
#include <limits>
#include <optional>
#include <string>
#include <string_view>

#include "errors/error.h"

namespace hypertopo::topology {

inline constexpr std::int64_t kMaxHyperNodeTier = std::numeric_limits<std::int32_t>::max() - 1;

// `who` names the object ("HyperNode rack-1"); every message starts with it. The offending value is
// quoted as its JSON text, so a number beyond 64 bits shows as written, not as what it wrapped to.
template <class V>
std::expected<int, Error> read_hypernode_tier(const std::optional<V>& tier, const std::string& who) {
  auto out_of_range = [&](const std::string& shown) {
    return fail(ErrorCode::kParse, who + ": spec.tier must be an integer from 0 to " +
                                       std::to_string(kMaxHyperNodeTier) + ", got " + shown);
  };
  if (!tier || tier->is_null()) return fail(ErrorCode::kParse, who + ": spec.tier is required");
  if (tier->is_integer()) {
    // A JSON text above INT64_MAX arrives wrapped to a negative value: refused all the same.
    const std::int64_t value = tier->integer();
    if (value < 0 || value > kMaxHyperNodeTier) return out_of_range(tier->text());
    return static_cast<int>(value);
  }
  if (tier->is_string()) {
    const std::string_view t = tier->string();
    std::int64_t value = 0;
    auto [p, ec] = std::from_chars(t.data(), t.data() + t.size(), value);
    if (ec == std::errc::result_out_of_range && p == t.data() + t.size())
      return out_of_range("'" + std::string(t) + "'");
    if (ec != std::errc() || p != t.data() + t.size() || t.empty()) {
      return fail(ErrorCode::kParse, who + ": spec.tier '" + std::string(t) + "' is not an integer");
    }
    if (value < 0 || value > kMaxHyperNodeTier) return out_of_range("'" + std::string(t) + "'");
    return static_cast<int>(value);
  }
  return fail(ErrorCode::kParse, who + ": spec.tier must be an integer, got " + tier->text());
}

}  // namespace hypertopo::topology
