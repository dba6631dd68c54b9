// UFM's resources/ports and resources/links answers (plain lists and paged objects), then the graph:
// through the arrays the fetch fills and through the self-contained records.
#include <string>
#include <vector>

#include "discoverers/ufm/ufm_fabric.h"
#include "tests/fuzz/fuzz_target.h"

HT_FUZZ_TARGET(ufm_json) {
  using namespace hypertopo::discoverers::ufm;
  UfmResponseParser parser;
  UfmFabric fabric;
  std::string body(input);
  (void)parser.ports(body, fabric);
  body.assign(input);
  (void)parser.links(body, fabric);
  std::vector<std::string> notes;
  (void)build_ufm_graph(fabric, &notes);
  std::vector<UfmPort> ports;
  std::vector<UfmLink> links;
  body.assign(input);
  (void)parser.ports(body, ports);
  body.assign(input);
  (void)parser.links(body, links);
  (void)build_ufm_graph(ports, links, &notes);
}
