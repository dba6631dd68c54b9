// volcano-scheduler.conf (binpack weights of the network-topology-aware plugin).
#include <string>

#include "scheduler/config/volcano_config.h"
#include "tests/fuzz/fuzz_target.h"

HT_FUZZ_TARGET(scheduler_config) {
  (void)hypertopo::scheduler::parse_scheduler_config(std::string(input), "fuzz.conf");
}
