// discoverers/ib-fabric/ib_fabric_source.h: the live-walk, cache-replay and simulator sources.
//
//   ibnetdisc[:CA[:PORT]]   walk the subnet from a local CA port (libibnetdisc, in process); when the
//                           deps give a work_dir the walk is also recorded there as ibnetdisc.ibnd
//   ibnetdisc[:exclude=RE,...]  no CA: walk from every local compute port (ib-local probe under
//                           deps.root: InfiniBand, ACTIVE, HCA name not matching RE) and merge by GUID
//   ibnetdisc-cache:PATH    replay a cache written by a walk or by `ibnetdiscover --cache`
//   ibsim:NETFILE           start ibsim on NETFILE and walk it live through the umad2sim preload
//                           (the walker child is this same binary's hidden `ib-walk` subcommand)
//
//   register_ib_fabric_sources(registry);
//   auto source = registry.create({"ibnetdisc", "mlx5_0:1"}, deps);
#pragma once

#include "discoverers/registry/discoverer.h"

namespace hypertopo::discoverers {

std::expected<std::unique_ptr<Discoverer>, Error> make_ibnetdisc_source(const SourceSpec& spec,
                                                                        const DiscoveryDeps& deps);
std::expected<std::unique_ptr<Discoverer>, Error> make_ibnetdisc_cache_source(const SourceSpec& spec,
                                                                              const DiscoveryDeps& deps);
std::expected<std::unique_ptr<Discoverer>, Error> make_ibsim_source(const SourceSpec& spec,
                                                                    const DiscoveryDeps& deps);

// Adds the three sources above.
std::expected<void, Error> register_ib_fabric_sources(DiscovererRegistry& registry);

}  // namespace hypertopo::discoverers
