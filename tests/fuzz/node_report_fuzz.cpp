// NodeReport objects: every node writes one, so the leader reads them as untrusted input.
#include "tests/fuzz/fuzz_target.h"
#include "topology/node_report.h"

HT_FUZZ_TARGET(node_report) { (void)hypertopo::topology::parse_node_report_text(input); }
