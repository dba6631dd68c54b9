// scheduler/extender/extender_http.h: the extender's HTTP routes on the shared HttpServer.
//
// POST <prefix>/filter and <prefix>/prioritize take ExtenderArgs JSON; a body that is not JSON or
// not ExtenderArgs answers 400 with the reason. GET /plans lists the gang plans with their rank
// hints, /healthz answers "ok" (liveness), /readyz answers 503 naming the lists the view still waits
// for and 200 "ok" once they landed (ExtenderService's ready gate), /metrics serves Prometheus text
// counters. Until ready, filter answers its `error` field and prioritize and preempt 503.
//
// The probe side: `hypertopo extender --check /readyz` runs probe_extender() against the listener
// the config names, for the pod's exec probes and its postStart hook (wait_extender(): the kubelet
// starts kube-scheduler only once the hook returns). The listener is loopback, which a kubelet
// httpGet probe (sent to the pod IP) cannot reach.
//
//   HttpServer server(options);
//   register_extender_routes(server, service, "/scheduler");
//   server.start();
//   auto target = probe_target(config);   // where the config's listener answers, with TLS if set
//   auto ok = probe_extender(*target, "/readyz", kProbeTimeout);
#pragma once

#include <chrono>
#include <expected>
#include <functional>
#include <string>

#include "errors/error.h"
#include "net/http_server.h"
#include "net/tls_config.h"
#include "scheduler/extender/extender_config.h"
#include "scheduler/extender/extender_service.h"

namespace hypertopo::scheduler {

void register_extender_routes(net::HttpServer& server, ExtenderService& service,
                              const std::string& prefix = "/scheduler");

// The /metrics text of the service's counters.
std::string extender_metrics_text(const ExtenderCounters& counters, std::size_t nodes);

// One probe's bound: the answer is a few bytes from a loopback listener.
inline constexpr std::chrono::milliseconds kProbeTimeout{2000};

struct ProbeTarget {
  std::string host;  // loopback for a wildcard listener
  std::uint16_t port = 0;
  bool tls = false;
  net::TlsConfig tls_config;
};
// Where the config's listener answers a probe from inside its pod; an error when the TLS files the
// probe presents cannot be read.
std::expected<ProbeTarget, Error> probe_target(const ExtenderConfig& cfg);
// One GET of `path`: success on 200; otherwise an error with the status and the answer's text
// ("503 extender view still filling: waiting for the first list of: nodes").
std::expected<void, Error> probe_extender(const ProbeTarget& target, const std::string& path,
                                          std::chrono::milliseconds timeout);
// probe_extender() every `interval` until it succeeds or `wait` has passed (the last answer's
// error); time and pauses injected.
std::expected<void, Error> wait_extender(const ProbeTarget& target, const std::string& path,
                                         std::chrono::milliseconds wait, std::chrono::milliseconds interval,
                                         const std::function<std::chrono::steady_clock::time_point()>& now,
                                         const std::function<void(std::chrono::milliseconds)>& pause);

}  // namespace hypertopo::scheduler
