// scheduler/extender/extender_config.h: the `hypertopo extender --config` file.
//
// YAML or JSON; every key optional; unknown keys, wrong types and bad values are errors that name
// the file and the key ("extender.yaml: tls.keyFlie: unknown key (known: ...)", io/config_reader.h):
//   apiVersion: hypertopo.io/v1alpha1
//   kind: ExtenderConfig
//   schedulerConfig: /etc/hypertopo/volcano-scheduler.conf  # binpack weights (network-topology-aware)
//   fabricHealth: prefer-healthy # or exclude / ignore: gangs and FabricDegraded HyperNodes
//                                # (default: the schedulerConfig's hypertopo.fabricHealth)
//   planTTLSeconds: 600          # an idle gang plan is dropped after this
//   listen: 127.0.0.1:8888       # ADDR:PORT (the default: kube-scheduler calls its sidecar)
//   urlPrefix: /scheduler        # filter and prioritize live under it
//   stateFile: /var/lib/hypertopo/extender-state.json
//   tls: {certFile: /tls/tls.crt, keyFile: /tls/tls.key, clientCAFile: /tls/ca.crt}
//   gangLabelKeys: [scheduling.x-k8s.io/pod-group, hypertopo.io/gang]
//   gangAnnotationKeys: [scheduling.k8s.io/group-name, hypertopo.io/gang]
//
// A filter request creates gang plans (capacity reservations kept in the state file), so whoever
// reaches the port can steer the cluster. Only loopback is served as plain HTTP; any other address
// needs TLS with client certificates verified against clientCAFile (kube-scheduler's extender
// `tlsConfig` with certFile/keyFile), unless the admin passes --insecure-listen.
//
//   auto cfg = load_extender_config("extender.yaml");
//   if (auto ok = check_listen_exposure(*cfg, insecure); !ok) ...;   // refuse to start
//   ExtenderService service(cfg->service);
#pragma once

#include <cstdint>
#include <expected>
#include <filesystem>
#include <string>
#include <vector>

#include "errors/error.h"
#include "scheduler/extender/extender_service.h"

namespace hypertopo::scheduler {

struct ExtenderConfig {
  ExtenderOptions service;
  std::string listen_address = "127.0.0.1";
  std::uint16_t listen_port = 8888;
  std::string url_prefix = "/scheduler";
  std::string tls_cert_file, tls_key_file;
  std::string tls_client_ca_file;  // clients must present a certificate this CA signed
  // What the scheduler ConfigMap holds that Volcano ignores or reads otherwise (the key named), for
  // the command to print as `place` does.
  std::vector<std::string> warnings;
};

// "ADDR:PORT" (or ":PORT") into the config; errors name `what`.
std::expected<void, Error> parse_listen(const std::string& text, const std::string& what,
                                        ExtenderConfig& cfg);
std::expected<ExtenderConfig, Error> load_extender_config(const std::filesystem::path& path);

// 127.0.0.0/8, ::1 and ::ffff:127.x.y.z.
bool is_loopback_address(const std::string& address);
// True when the listener authenticates its clients (TLS with a client CA) or sits on loopback.
bool listen_is_protected(const ExtenderConfig& cfg);
// An error naming the address and the ways out when the listener is exposed to unauthenticated
// clients and `insecure` (--insecure-listen) was not given.
std::expected<void, Error> check_listen_exposure(const ExtenderConfig& cfg, bool insecure);

}  // namespace hypertopo::scheduler
