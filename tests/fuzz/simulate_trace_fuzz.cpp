// `simulate --trace`: one JSON job per line.
#include <sstream>
#include <string>
#include <vector>

#include "scheduler/simulate/job_trace.h"
#include "tests/fuzz/fuzz_target.h"

HT_FUZZ_TARGET(simulate_trace) {
  std::istringstream in{std::string(input)};
  static const std::vector<hypertopo::scheduler::NodeSpec> no_nodes;
  (void)hypertopo::scheduler::parse_trace(in, "fuzz.jsonl", no_nodes);
}
