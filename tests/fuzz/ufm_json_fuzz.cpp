// UFM's resources/ports and resources/links answers (plain lists and paged objects), then the graph.
#include <string>
#include <vector>

#include "discoverers/ufm/ufm_fabric.h"
#include "tests/fuzz/fuzz_target.h"

HT_FUZZ_TARGET(ufm_json) {
  using namespace hypertopo::discoverers::ufm;
  UfmResponseParser parser;
  std::vector<UfmPort> ports;
  std::vector<UfmLink> links;
  std::string body(input);
  (void)parser.ports(body, ports);
  body.assign(input);
  (void)parser.links(body, links);
  std::vector<std::string> notes;
  (void)build_ufm_graph(ports, links, &notes);
}
