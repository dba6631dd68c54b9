#include "scheduler/extender/extender_http.h"

#include "io/json_writer.h"
#include "telemetry/metrics.h"

namespace hypertopo::scheduler {
namespace {

net::HttpServerResponse json_reply(int status, const nlohmann::json& body) {
  net::HttpServerResponse r;
  r.status = status;
  r.content_type = "application/json";
  r.body = io::json_text(body);
  return r;
}

net::HttpServerResponse bad_request(const std::string& message) {
  return json_reply(400, nlohmann::json{{"error", message}});
}

using BodyVerb = std::expected<std::string, Error> (ExtenderService::*)(std::string_view);

// kube-scheduler's filter and prioritize calls: the body is read and the answer written by the
// service's text path (extender_wire.cpp), without a JSON tree of the candidate list.
net::HttpHandler verb_handler(ExtenderService& service, BodyVerb verb) {
  return [&service, verb](const net::HttpServerRequest& req) {
    auto result = (service.*verb)(req.body);
    if (!result) return bad_request(result.error().message());
    net::HttpServerResponse r;
    r.content_type = "application/json";
    r.body = std::move(*result);
    return r;
  };
}

}  // namespace

std::string extender_metrics_text(const ExtenderCounters& c, std::size_t nodes) {
  // The service keeps plain counters (its hot path takes no registry lock); each scrape renders them
  // through the one Prometheus text renderer.
  telemetry::MetricsRegistry m;
  auto counter = [&](const char* name, const char* help, std::int64_t v) {
    m.counter(name, help, {}).inc({}, static_cast<double>(v));
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
  counter("hypertopo_extender_prioritize_reused_filter_total",
          "Prioritize calls that reused the node ids of their pod's filter call.",
          c.prioritize_reused_filter);
  counter(
      "hypertopo_extender_index_pod_updates_total",
      "Pod events (bindings, deletions, request changes) applied to the index in place, without a rebuild.",
      c.index_pod_updates);
  counter("hypertopo_extender_slots_released_total",
          "Gang slots whose bound pod went away and that wait on their node for its replacement.",
          c.slots_released);
  counter("hypertopo_extender_slots_grown_total",
          "Gang slots added for pods beyond the gang's minimum (elastic gangs).", c.slots_grown);
  counter("hypertopo_extender_plans_adopted_total",
          "Gangs planned around pods already bound (a restart without state, another replica).",
          c.plans_adopted);
  counter("hypertopo_extender_preempt_calls_total", "Preempt requests answered.", c.preempt_calls);
  counter("hypertopo_extender_victim_plans_total",
          "Gang plans made with victims (the gang fitted nowhere without preemption).", c.victim_plans);
  counter("hypertopo_extender_victims_planned_total", "Pods named as victims by gang plans.",
          c.victims_planned);
  m.gauge("hypertopo_extender_nodes", "Nodes in the cluster view.", {}).set({}, static_cast<double>(nodes));
  return m.render();
}

void register_extender_routes(net::HttpServer& server, ExtenderService& service, const std::string& prefix) {
  server.handle("POST", prefix + "/filter", verb_handler(service, &ExtenderService::filter_body));
  server.handle("POST", prefix + "/prioritize", verb_handler(service, &ExtenderService::prioritize_body));
  server.handle("POST", prefix + "/preempt", verb_handler(service, &ExtenderService::preempt_body));
  server.handle("GET", "/plans",
                [&service](const net::HttpServerRequest&) { return json_reply(200, service.plans()); });
  server.handle("GET", "/healthz", [](const net::HttpServerRequest&) {
    net::HttpServerResponse r;
    r.body = "ok\n";
    return r;
  });
  server.handle("GET", "/metrics", [&service](const net::HttpServerRequest&) {
    net::HttpServerResponse r;
    r.content_type = "text/plain; version=0.0.4; charset=utf-8";
    r.body = extender_metrics_text(service.counters(), service.node_count());
    return r;
  });
}

}  // namespace hypertopo::scheduler
