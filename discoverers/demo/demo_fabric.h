// discoverers/demo/demo_fabric.h: the built-in fabric, generated in code.
//
// A rail-optimised InfiniBand fabric as a DGX SuperPOD has it: scalable units (SUs) of hosts with
// one HCA per rail, one leaf per rail per SU, pods of SUs under pod spines, core switches above the
// spines, a storage leaf with storage servers that every host reaches through a storage HCA, and a
// SHARP aggregation node on every switch. Descriptions follow real captures ("MF0;<name>:<model>/U1"
// switches, rdma-ndd "%h %d" CAs, a few firmware-default CA descriptions).
//
//   DemoFabricSpec spec;                       // 4 SUs x 32 hosts x 8 rails, 2 pods, 8 cores
//   FabricGraph g = generate_demo_fabric(spec);
//   TreeBuilderOptions opts = demo_builder_options();  // excludes the storage HCAs and leaf
#pragma once

#include <string>

#include "discoverers/registry/discoverer.h"
#include "topology/fabric_graph.h"
#include "topology/tree_builder.h"

namespace hypertopo::discoverers {

struct DemoFabricSpec {
  int scalable_units = 4;
  int hosts_per_su = 32;
  int rails = 8;
  int sus_per_pod = 2;     // SUs under one set of pod spines
  int spines_per_pod = 8;  // every leaf of a pod links to every spine of the pod
  int cores = 8;           // every spine links to `core_links_per_spine` cores, round robin
  int core_links_per_spine = 4;
  bool storage = true;           // a storage HCA per host (mlx5_8) on a storage leaf, 4 storage servers
  bool sharp = true;             // an aggregation node on every switch
  int firmware_default_cas = 2;  // compute HCAs that keep the firmware-default description
  std::string prefix = "demo";
};

topology::FabricGraph generate_demo_fabric(const DemoFabricSpec& spec);

// Builder options that fit the demo: storage HCAs (mlx5_8) and the storage leaf are left out.
topology::TreeBuilderOptions demo_builder_options();

// Number of compute hosts, expected tier-1/2/3 domain counts of a spec (used by tests).
struct DemoShape {
  int hosts = 0;
  int tier1 = 0;  // SUs
  int tier2 = 0;  // pods
  int tier3 = 0;  // 1 when cores join the pods
};
DemoShape expected_demo_shape(const DemoFabricSpec& spec);

// The "demo" source.
struct DemoConfig : SourceSettings {
  bool live = true;  // walk the model on ibsim when installed; false: hand over the model itself
  std::string describe() const override { return live ? "live" : "model"; }
};
SourceEntry demo_source_entry();

std::expected<std::unique_ptr<Discoverer>, Error> make_demo_source(const SourceSpec& spec,
                                                                   const DiscoveryDeps& deps);

}  // namespace hypertopo::discoverers
