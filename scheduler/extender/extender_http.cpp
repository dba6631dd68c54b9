#include "scheduler/extender/extender_http.h"

#include <sstream>

#include "io/json_writer.h"

namespace hypertopo::scheduler {
namespace {

agent::HttpServerResponse json_reply(int status, const nlohmann::json& body) {
  agent::HttpServerResponse r;
  r.status = status;
  r.content_type = "application/json";
  r.body = io::json_text(body);
  return r;
}

agent::HttpServerResponse bad_request(const std::string& message) {
  return json_reply(400, nlohmann::json{{"error", message}});
}

using BodyVerb = std::expected<std::string, Error> (ExtenderService::*)(std::string_view);

// kube-scheduler's filter and prioritize calls: the body is read and the answer written by the
// service's text path (extender_wire.cpp), without a JSON tree of the candidate list.
agent::HttpHandler verb_handler(ExtenderService& service, BodyVerb verb) {
  return [&service, verb](const agent::HttpServerRequest& req) {
    auto result = (service.*verb)(req.body);
    if (!result) return bad_request(result.error().message());
    agent::HttpServerResponse r;
    r.content_type = "application/json";
    r.body = std::move(*result);
    return r;
  };
}

}  // namespace

std::string extender_metrics_text(const ExtenderCounters& c, std::size_t nodes) {
  std::ostringstream out;
  auto counter = [&](const char* name, const char* help, std::int64_t v) {
    out << "# HELP " << name << " " << help << "\n# TYPE " << name << " counter\n"
        << name << " " << v << "\n";
  };
  counter("hypertopo_extender_filter_calls_total", "Filter requests answered.", c.filter_calls);
  counter("hypertopo_extender_prioritize_calls_total", "Prioritize requests answered.", c.prioritize_calls);
  counter("hypertopo_extender_plans_total", "Gang plans made.", c.plans_made);
  counter("hypertopo_extender_replans_total", "Gangs planned again after losing a node.", c.replans);
  counter("hypertopo_extender_swaps_total", "Planned slots moved to a replacement node.", c.swaps);
  counter("hypertopo_extender_plans_expired_total", "Plans dropped after their TTL.", c.plans_expired);
  counter("hypertopo_extender_errors_total", "Internal errors (index build, state file).", c.errors);
  counter("hypertopo_extender_index_rebuilds_total", "Topology index rebuilds.", c.index_rebuilds);
  counter("hypertopo_extender_text_path_calls_total",
          "Filter and prioritize bodies read in place (the others took the JSON tree path).",
          c.text_path_calls);
  out << "# HELP hypertopo_extender_nodes Nodes in the cluster view.\n# TYPE hypertopo_extender_nodes gauge\n"
      << "hypertopo_extender_nodes " << nodes << "\n";
  return out.str();
}

void register_extender_routes(agent::HttpServer& server, ExtenderService& service,
                              const std::string& prefix) {
  server.handle("POST", prefix + "/filter", verb_handler(service, &ExtenderService::filter_body));
  server.handle("POST", prefix + "/prioritize", verb_handler(service, &ExtenderService::prioritize_body));
  server.handle("GET", "/plans",
                [&service](const agent::HttpServerRequest&) { return json_reply(200, service.plans()); });
  server.handle("GET", "/healthz", [](const agent::HttpServerRequest&) {
    agent::HttpServerResponse r;
    r.body = "ok\n";
    return r;
  });
  server.handle("GET", "/metrics", [&service](const agent::HttpServerRequest&) {
    agent::HttpServerResponse r;
    r.content_type = "text/plain; version=0.0.4; charset=utf-8";
    r.body = extender_metrics_text(service.counters(), service.node_count());
    return r;
  });
}

}  // namespace hypertopo::scheduler
