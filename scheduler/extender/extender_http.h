// scheduler/extender/extender_http.h: the extender's HTTP routes on the shared HttpServer.
//
// POST <prefix>/filter and <prefix>/prioritize take ExtenderArgs JSON; a body that is not JSON or
// not ExtenderArgs answers 400 with the reason. GET /plans lists the gang plans with their rank
// hints, /healthz answers "ok", /metrics serves Prometheus text counters.
//
//   HttpServer server(options);
//   register_extender_routes(server, service, "/scheduler");
//   server.start();
#pragma once

#include <string>

#include "net/http_server.h"
#include "scheduler/extender/extender_service.h"

namespace hypertopo::scheduler {

void register_extender_routes(net::HttpServer& server, ExtenderService& service,
                              const std::string& prefix = "/scheduler");

// The /metrics text of the service's counters.
std::string extender_metrics_text(const ExtenderCounters& counters, std::size_t nodes);

}  // namespace hypertopo::scheduler
