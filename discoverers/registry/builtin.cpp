// The one place that lists the built-in sources; each adds itself by an explicit call here.
#include <stdexcept>

#include "discoverers/demo/demo_fabric.h"
#include "discoverers/ib-fabric/ib_fabric_source.h"
#include "discoverers/ibnetdiscover/ibnetdiscover_source.h"
#include "discoverers/labels/labels_source.h"
#include "discoverers/registry/discoverer.h"
#include "discoverers/reports/reports_source.h"
#include "discoverers/roce-lldp/roce_lldp.h"
#include "discoverers/ufm/ufm_source.h"

namespace hypertopo::discoverers {

void register_builtin_discoverers(DiscovererRegistry& registry) {
  auto add = [&](const char* kind, const char* summary, DiscovererFactory factory) {
    // Built-in names are distinct by construction; a clash is a programming error caught by tests.
    if (auto ok = registry.add(kind, summary, std::move(factory)); !ok)
      throw std::logic_error(ok.error().message());
  };
  add("demo", "the built-in rail-optimised fabric, walked live on ibsim when installed (demo[:live|:model])",
      make_demo_source);
  add("ibnetdiscover", "a saved ibnetdiscover capture: ibnetdiscover:PATH ('-' reads stdin)",
      make_ibnetdiscover_source);
  add("labels",
      "node labels as levels: labels:CONFIG (Volcano networkTopologyTypes or a Kueue Topology; needs "
      "--nodes)",
      make_labels_source);
  add("reports",
      "saved NodeReports, one *.yaml/*.json per node: reports:DIR (GUIDs, NVLink cliques, LLDP neighbours "
      "for "
      "the other sources)",
      make_reports_source);
  add("roce",
      "RoCE ToRs from the NodeReports' LLDP neighbours: roce[:HIERARCHY.yaml] (switches above the ToRs; "
      "needs "
      "NodeReports)",
      roce_lldp::make_roce_source);
  add("ufm",
      "UFM Enterprise REST: ufm:https://HOST[:PORT] (with --ufm-credentials DIR, --ufm-ca FILE, "
      "--ufm-insecure)",
      ufm::make_ufm_source);
  if (auto ok = register_ib_fabric_sources(registry); !ok) throw std::logic_error(ok.error().message());
}

}  // namespace hypertopo::discoverers
