// discoverers/ib-fabric/ib_fabric_source.h: the live-walk, cache-replay and simulator sources.
//
//   ibnetdisc[:CA[:PORT]]   walk the subnet from a local CA port (libibnetdisc, in process); when the
//                           deps give a work_dir the walk is also recorded there as ibnetdisc.ibnd
//   ibnetdisc[:exclude=RE,...]  no CA: walk from every local compute port (the CAs libibumad lists,
//                           or sysfs under a deps.root other than "/": InfiniBand, up (INIT, ARMED
//                           or ACTIVE), HCA name not matching RE) and merge by GUID
//   ibnetdisc-cache:PATH    replay a cache written by a walk or by `ibnetdiscover --cache`
//   ibsim:NETFILE           start ibsim on NETFILE and walk it live through the umad2sim preload
//                           (the walker child is this same binary's hidden `ib-walk` subcommand)
//
// Agent config (`config:` of a source entry): ibnetdisc {ca, port, exclude}, ibnetdisc-cache {file},
// ibsim {netFile}. The three are fabric sources: the agent runs them at most once per interval.
//
//   register_ib_fabric_sources(registry);
//   auto source = registry.create(*SourceSpec::parse("ibnetdisc:mlx5_0:1"), deps);
#pragma once

#include <string>
#include <vector>

#include "discoverers/registry/discoverer.h"

namespace hypertopo::discoverers {

struct IbnetdiscConfig : SourceSettings {
  std::string ca;                    // "" : every local compute port
  int port = 0;                      // 0: the CA's first ACTIVE port
  std::vector<std::string> exclude;  // with no CA: HCA names (regexes) not to walk from
  std::string describe() const override;
};

struct IbnetdiscCacheConfig : SourceSettings {
  std::string file;
  std::string describe() const override { return file; }
};

struct IbsimConfig : SourceSettings {
  std::string net_file;
  std::string describe() const override { return net_file; }
};

std::expected<std::unique_ptr<Discoverer>, Error> make_ibnetdisc_source(const SourceSpec& spec,
                                                                        const DiscoveryDeps& deps);
std::expected<std::unique_ptr<Discoverer>, Error> make_ibnetdisc_cache_source(const SourceSpec& spec,
                                                                              const DiscoveryDeps& deps);
std::expected<std::unique_ptr<Discoverer>, Error> make_ibsim_source(const SourceSpec& spec,
                                                                    const DiscoveryDeps& deps);

// Adds the three sources above.
std::expected<void, Error> register_ib_fabric_sources(DiscovererRegistry& registry);

}  // namespace hypertopo::discoverers
