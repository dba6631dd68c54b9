// Kubernetes quantities ("1500m", "64Gi", "1e3") as resource requests and capacities carry them.
#include "scheduler/index/quantity.h"
#include "tests/fuzz/fuzz_target.h"

HT_FUZZ_TARGET(quantity) {
  (void)hypertopo::scheduler::parse_quantity("cpu", input);
  (void)hypertopo::scheduler::parse_quantity("memory", input);
  (void)hypertopo::scheduler::parse_quantity("nvidia.com/gpu", input);
}
