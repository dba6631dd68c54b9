// scheduler/extender/extender_config.h: the `hypertopo extender --config` file.
//
// YAML or JSON; every key optional; unknown keys and wrong types are errors that name the key:
//   apiVersion: hypertopo.io/v1alpha1
//   kind: ExtenderConfig
//   schedulerConfig: /etc/hypertopo/volcano-scheduler.conf  # binpack weights (network-topology-aware)
//   planTTLSeconds: 600          # an idle gang plan is dropped after this
//   listen: 0.0.0.0:8888         # ADDR:PORT
//   urlPrefix: /scheduler        # filter and prioritize live under it
//   stateFile: /var/lib/hypertopo/extender-state.json
//   tls: {certFile: /tls/tls.crt, keyFile: /tls/tls.key}
//   gangLabelKeys: [scheduling.x-k8s.io/pod-group, hypertopo.io/gang]
//   gangAnnotationKeys: [scheduling.k8s.io/group-name, hypertopo.io/gang]
//
//   auto cfg = load_extender_config("extender.yaml");
//   ExtenderService service(cfg->service);
#pragma once

#include <cstdint>
#include <expected>
#include <filesystem>
#include <string>

#include "errors/error.h"
#include "scheduler/extender/extender_service.h"

namespace hypertopo::scheduler {

struct ExtenderConfig {
  ExtenderOptions service;
  std::string listen_address = "0.0.0.0";
  std::uint16_t listen_port = 8888;
  std::string url_prefix = "/scheduler";
  std::string tls_cert_file, tls_key_file;
};

// "ADDR:PORT" (or ":PORT") into the config; errors name `what`.
std::expected<void, Error> parse_listen(const std::string& text, const std::string& what,
                                        ExtenderConfig& cfg);
std::expected<ExtenderConfig, Error> load_extender_config(const std::filesystem::path& path);

}  // namespace hypertopo::scheduler
