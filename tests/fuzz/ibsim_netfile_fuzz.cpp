// The ibsim net file writer: any fabric the parser accepts (descriptions with quotes, odd port
// numbers, self-loops) must become a net file or an error. ibsim's own net files are the seeds.
#include <sstream>

#include "discoverers/ib-fabric/ibsim_netfile.h"
#include "discoverers/ibnetdiscover/ibnetdiscover_parser.h"
#include "tests/fuzz/fuzz_target.h"

HT_FUZZ_TARGET(ibsim_netfile) {
  auto capture = hypertopo::discoverers::parse_ibnetdiscover(input, "fuzz.net");
  if (!capture) return;
  std::ostringstream out;
  (void)hypertopo::discoverers::ib_fabric::write_ibsim_netfile(capture->graph, out, {.min_switch_ports = 8});
}
