#include "scheduler/extender/extender_http.h"

#include <algorithm>

#include "io/bounded_file.h"
#include "io/json_writer.h"
#include "net/http_transport.h"
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
// Before the view's first lists landed, prioritize and preempt (whose answers have no error field)
// answer 503: kube-scheduler v1.26 (pkg/scheduler/extender.go HTTPExtender.send) fails the call on
// any status but 200. Filter answers 200 with ExtenderFilterResult.error (extender_verbs.cpp).
net::HttpHandler verb_handler(ExtenderService& service, BodyVerb verb) {
  return [&service, verb](const net::HttpServerRequest& req) {
    auto result = (service.*verb)(req.body);
    if (!result && result.error().code() == ErrorCode::kUnavailable && !service.ready())
      return json_reply(503, nlohmann::json{{"error", result.error().message()}});
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
  counter("hypertopo_extender_filter_calls_total", "Filter requests answered.", c.verbs.filter_calls);
  counter("hypertopo_extender_prioritize_calls_total", "Prioritize requests answered.",
          c.verbs.prioritize_calls);
  counter("hypertopo_extender_plans_total", "Gang plans made.", c.book.plans_made);
  counter("hypertopo_extender_replans_total", "Gangs planned again after losing a node.", c.book.replans);
  counter("hypertopo_extender_swaps_total", "Planned slots moved to a replacement node.", c.book.swaps);
  counter("hypertopo_extender_plans_expired_total", "Plans dropped after their TTL.", c.book.plans_expired);
  counter("hypertopo_extender_errors_total", "Internal errors (index build, state file).", c.errors());
  counter("hypertopo_extender_index_rebuilds_total", "Topology index rebuilds.", c.view.index_rebuilds);
  counter("hypertopo_extender_text_path_calls_total",
          "Filter and prioritize bodies read in place (the others took the JSON tree path).",
          c.verbs.text_path_calls);
  counter("hypertopo_extender_prioritize_reused_filter_total",
          "Prioritize calls that reused the node ids of their pod's filter call.",
          c.verbs.prioritize_reused_filter);
  counter(
      "hypertopo_extender_index_pod_updates_total",
      "Pod events (bindings, deletions, request changes) applied to the index in place, without a rebuild.",
      c.view.index_pod_updates);
  counter("hypertopo_extender_slots_released_total",
          "Gang slots whose bound pod went away and that wait on their node for its replacement.",
          c.book.slots_released);
  counter("hypertopo_extender_slots_grown_total",
          "Gang slots added for pods beyond the gang's minimum (elastic gangs).", c.book.slots_grown);
  counter("hypertopo_extender_plans_adopted_total",
          "Gangs planned around pods already bound (a restart without state, another replica).",
          c.book.plans_adopted);
  counter("hypertopo_extender_preempt_calls_total", "Preempt requests answered.", c.verbs.preempt_calls);
  counter("hypertopo_extender_victim_plans_total",
          "Gang plans made with victims (the gang fitted nowhere without preemption).", c.book.victim_plans);
  counter("hypertopo_extender_victims_planned_total", "Pods named as victims by gang plans.",
          c.book.victims_planned);
  counter("hypertopo_extender_not_ready_calls_total",
          "Verb calls answered that the view is still filling (before the first lists landed).",
          c.verbs.not_ready_calls);
  counter("hypertopo_extender_slots_checked_total",
          "Gang slots examined by plan checks (a Node event examines the slots on that node only).",
          c.book.slots_checked);
  auto& watch_errors = m.counter(
      "hypertopo_extender_watch_errors_total",
      "Watch events and lists the view could not apply (an object that does not read), by kind.", {"kind"});
  for (const auto& [kind, n] : c.watch_errors) watch_errors.inc({kind}, static_cast<double>(n));
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
  // Readiness, apart from liveness: 503 naming the lists still awaited, then 200 for good (the gate
  // opens once). Read off the gate's own lock, so a list being read never holds up a probe.
  server.handle("GET", "/readyz", [&service](const net::HttpServerRequest&) {
    net::HttpServerResponse r;
    const std::string why = service.not_ready_reason();
    r.status = why.empty() ? 200 : 503;
    r.body = why.empty() ? "ok\n" : why + "\n";
    return r;
  });
  server.handle("GET", "/metrics", [&service](const net::HttpServerRequest&) {
    net::HttpServerResponse r;
    r.content_type = "text/plain; version=0.0.4; charset=utf-8";
    r.body = extender_metrics_text(service.counters(), service.node_count());
    return r;
  });
}

std::expected<ProbeTarget, Error> probe_target(const ExtenderConfig& cfg) {
  ProbeTarget t;
  // A wildcard listener answers on loopback too; a specific address only on itself.
  t.host = cfg.listen_address == "0.0.0.0" ? "127.0.0.1"
           : cfg.listen_address == "::"    ? "::1"
                                           : cfg.listen_address;
  t.port = cfg.listen_port;
  t.tls = !cfg.tls_cert_file.empty();
  if (!t.tls) return t;
  auto read = [](const std::string& path, const char* what) -> std::expected<std::string, Error> {
    auto text = io::read_bounded_file(path, io::kSecretFileLimit);
    if (!text)
      return fail(text.error().code(), std::string("the probe's ") + what + ": " + text.error().message());
    return std::move(*text);
  };
  // The probe dials its own pod's listener, so it does not check the server's certificate; when
  // clientCAFile is set it presents the extender's own certificate, which the listener accepts only
  // when that CA signed it (issue the extender's certificate from it, with clientAuth usage).
  t.tls_config.insecure_skip_verify = true;
  if (!cfg.tls_client_ca_file.empty()) {
    auto cert = read(cfg.tls_cert_file, "client certificate (tls.certFile)");
    if (!cert) return std::unexpected(cert.error());
    auto key = read(cfg.tls_key_file, "client key (tls.keyFile)");
    if (!key) return std::unexpected(key.error());
    t.tls_config.client_cert_pem = std::move(*cert);
    t.tls_config.client_key_pem = std::move(*key);
  }
  return t;
}

std::expected<void, Error> probe_extender(const ProbeTarget& target, const std::string& path,
                                          std::chrono::milliseconds timeout) {
  net::TransportConfig tc{.host = target.host,
                          .port = std::to_string(target.port),
                          .tls = target.tls,
                          .tls_config = target.tls_config,
                          .connect_timeout = timeout,
                          .body_limit = 64 * 1024};
  auto transport = net::HttpTransport::create(tc);
  if (!transport) return std::unexpected(transport.error());
  auto r = (*transport)->round_trip({"GET", path, {}, ""}, timeout, true);
  const std::string where =
      (target.tls ? "https://" : "http://") +
      (target.host.find(':') != std::string::npos ? "[" + target.host + "]" : target.host) + ":" +
      std::to_string(target.port) + path;
  if (!r) return fail(ErrorCode::kUnavailable, where + ": " + r.error().error.message());
  if (r->status != 200) {
    std::string body = r->body;
    while (!body.empty() && (body.back() == '\n' || body.back() == '\r')) body.pop_back();
    return fail(ErrorCode::kUnavailable, where + ": " + std::to_string(r->status) + " " + body);
  }
  return {};
}

std::expected<void, Error> wait_extender(const ProbeTarget& target, const std::string& path,
                                         std::chrono::milliseconds wait, std::chrono::milliseconds interval,
                                         const std::function<std::chrono::steady_clock::time_point()>& now,
                                         const std::function<void(std::chrono::milliseconds)>& pause) {
  const auto deadline = now() + wait;
  for (;;) {
    // The last probe before the deadline still gets half a second: a loopback answer needs a few
    // milliseconds, but a 1 ms bound fails on a busy node (or under a sanitizer) for no fault of the
    // extender. The wait may run over by that much.
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now());
    auto ok = probe_extender(target, path, std::clamp(left, kProbeTimeout / 4, kProbeTimeout));
    if (ok || now() + interval > deadline) return ok;
    pause(interval);
  }
}

}  // namespace hypertopo::scheduler
