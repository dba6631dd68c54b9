// The tree builder's config (tier names, selectors, patterns).
#include <string>

#include "tests/fuzz/fuzz_target.h"
#include "topology/builder_config.h"

HT_FUZZ_TARGET(builder_config) {
  (void)hypertopo::topology::parse_builder_config(std::string(input), "fuzz.yaml");
}
