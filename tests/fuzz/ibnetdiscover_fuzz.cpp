// The ibnetdiscover text parser (the capture a `ibnetdiscover:FILE` source reads).
#include "discoverers/ibnetdiscover/ibnetdiscover_parser.h"
#include "tests/fuzz/fuzz_target.h"

HT_FUZZ_TARGET(ibnetdiscover) {
  auto capture = hypertopo::discoverers::parse_ibnetdiscover(input, "fuzz.out");
  if (capture) (void)capture->graph.switch_count();
}
