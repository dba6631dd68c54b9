// `lldpcli show neighbors -f json` / `-f json0` (its shape changes with the neighbour count).
#include <nlohmann/json.hpp>

#include "discoverers/roce-lldp/roce_lldp.h"
#include "tests/fuzz/fuzz_target.h"

HT_FUZZ_TARGET(lldpcli) {
  const auto doc = nlohmann::json::parse(input, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) return;
  (void)hypertopo::discoverers::roce_lldp::parse_lldpcli_json(doc, "fuzz.json");
}
