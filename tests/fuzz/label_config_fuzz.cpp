// The labels source's config (Volcano's networkTopologyTypes shape).
#include <string>

#include "discoverers/labels/label_config.h"
#include "tests/fuzz/fuzz_target.h"

HT_FUZZ_TARGET(label_config) {
  (void)hypertopo::discoverers::labels::parse_label_config(std::string(input), "fuzz.yaml");
}
