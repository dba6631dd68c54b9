// `hypertopo extender --config` (YAML or JSON, read from a file).
#include "scheduler/extender/extender_config.h"
#include "tests/fuzz/fuzz_target.h"

HT_FUZZ_TARGET(extender_config) {
  (void)hypertopo::scheduler::load_extender_config(hypertopo::fuzzing::scratch_file("extender.yaml", input));
}
