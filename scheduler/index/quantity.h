// scheduler/index/quantity.h: Kubernetes resource quantities as exact integers.
//
// The scheduler counts in canonical integer units: `cpu` in millicores, every other resource
// (memory, ephemeral-storage, hugepages-*, GPUs, pods) in whole units, rounded up as the API server
// rounds Quantity.Value(). Fractions of a GPU or malformed suffixes are errors naming the resource.
//
//   auto cpu = parse_quantity("cpu", "1500m");      // 1500
//   auto mem = parse_quantity("memory", "64Gi");    // 68719476736
//   auto bad = parse_quantity("memory", "12XB");    // Error: memory: malformed quantity '12XB'
#pragma once

#include <cstdint>
#include <expected>
#include <map>
#include <string>
#include <string_view>

#include "errors/error.h"

namespace hypertopo::scheduler {

// Resource name -> amount in canonical units (cpu: millicores; others: whole units).
using ResourceAmounts = std::map<std::string, std::int64_t>;

// True for resources counted in thousandths (cpu); their quantities are scaled by 1000.
bool counted_in_millis(std::string_view resource);

std::expected<std::int64_t, Error> parse_quantity(std::string_view resource, std::string_view text);

// Parses every entry of a name -> quantity-string map; the error names the offending resource.
std::expected<ResourceAmounts, Error> parse_resource_list(const std::map<std::string, std::string>& list);

// Renders an amount the way kubectl would accept it back ("1500m", "64Gi", "8").
std::string format_quantity(std::string_view resource, std::int64_t amount);

}  // namespace hypertopo::scheduler
