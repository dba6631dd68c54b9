// The one place that lists the built-in sources; each adds itself by an explicit call here.
#include <stdexcept>

#include "discoverers/demo/demo_fabric.h"
#include "discoverers/ib-fabric/ib_fabric_source.h"
#include "discoverers/ib-local/ib_local_probe.h"
#include "discoverers/ibnetdiscover/ibnetdiscover_source.h"
#include "discoverers/labels/labels_source.h"
#include "discoverers/netq/netq_source.h"
#include "discoverers/nvlink/nvlink_probe.h"
#include "discoverers/registry/discoverer.h"
#include "discoverers/reports/reports_source.h"
#include "discoverers/roce-lldp/roce_lldp.h"
#include "discoverers/ufm/ufm_source.h"

namespace hypertopo::discoverers {

void register_builtin_discoverers(DiscovererRegistry& registry) {
  auto add = [&](SourceEntry entry) {
    // Built-in names are distinct by construction; a clash is a programming error caught by tests.
    if (auto ok = registry.add(std::move(entry)); !ok) throw std::logic_error(ok.error().message());
  };
  // Node probes: every agent pod, and `hypertopo probe`.
  add(ib_local::ib_local_probe_entry());
  add(roce_lldp::lldp_probe_entry());
  add(nvlink::nvlink_probe_entry());
  // Leader sources: the elected agent, and `hypertopo discover` / `apply`.
  add(demo_source_entry());
  add(ibnetdiscover_source_entry());
  add(labels_source_entry());
  add(netq::netq_file_source_entry());
  add(netq::netq_source_entry());
  add(reports_source_entry());
  add(roce_lldp::roce_source_entry());
  add(ufm::ufm_source_entry());
  if (auto ok = register_ib_fabric_sources(registry); !ok) throw std::logic_error(ok.error().message());
}

}  // namespace hypertopo::discoverers
