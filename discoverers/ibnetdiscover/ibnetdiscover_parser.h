// discoverers/ibnetdiscover/ibnetdiscover_parser.h: ibnetdiscover output -> FabricGraph.
//
// Reads the topology text `ibnetdiscover` prints (node blocks with vendid/devid/sysimgguid and
// switchguid/caguid, `Switch`/`Ca`/`Rt` headers, `[port]` lines) and its ports report (`-p`). Real
// captures hold stderr lines, self-loops, parallel links, tabs, trailing whitespace, chassis
// sections, firmware-default descriptions and SHARP aggregation nodes: all are tolerated (stderr
// lines become warnings). Genuinely malformed input fails with "<name>:<line>: <what>".
//
//   auto parsed = parse_ibnetdiscover_file("fabric.out");       // or "-" for stdin
//   if (!parsed) { std::cerr << parsed.error().message(); return 1; }
//   auto tree = TreeBuilder::create()->build(parsed->graph);
#pragma once

#include <expected>
#include <filesystem>
#include <iosfwd>
#include <string>
#include <string_view>
#include <vector>

#include "errors/error.h"
#include "topology/fabric_graph.h"

namespace hypertopo::discoverers {

struct IbnetdiscoverCapture {
  topology::FabricGraph graph;
  std::vector<std::string> warnings;  // "<name>:<line>: ..." for each tolerated oddity
  std::size_t switches = 0;
  std::size_t cas = 0;
  std::size_t routers = 0;
};

// `name` is used in messages (the file name, or "<stdin>").
std::expected<IbnetdiscoverCapture, Error> parse_ibnetdiscover(std::string_view text, std::string_view name);
// "-" reads `stdin_stream` (std::cin when null).
std::expected<IbnetdiscoverCapture, Error> parse_ibnetdiscover_file(const std::filesystem::path& path,
                                                                    std::istream* stdin_stream = nullptr);

}  // namespace hypertopo::discoverers
