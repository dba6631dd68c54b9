#pragma once
// A GUID held as an integer, written as every fabric source names it in the graph.

#include <cstdint>
#include <string>

namespace hypertopo::topology {

// "0x" and 16 lower-case hex digits, as normalize_guid (fabric_graph.h) writes a GUID.
std::string guid_text(std::uint64_t guid);

}  // namespace hypertopo::topology
