// The extender's HTTP request bodies: ExtenderArgs as kube-scheduler POSTs them to filter and
// prioritize, through the same route handlers the server runs, against a small cluster.
#include "scheduler/extender/extender_http.h"
#include "tests/fuzz/fuzz_target.h"
#include "tests/scheduler/extender/extender_cluster.h"

HT_FUZZ_TARGET(extender_request) {
  using namespace hypertopo;
  static const hypertopo::testing::ExtenderCluster cluster = hypertopo::testing::make_cluster(1, 2, 4);
  // A fresh service per input: plans made by one input must not change what the next one sees.
  scheduler::ExtenderService service(scheduler::ExtenderOptions{});
  (void)service.set_hypernodes(cluster.hypernodes);
  (void)service.set_nodes(cluster.nodes);
  net::HttpServer server(net::HttpServerOptions{.address = "127.0.0.1", .port = 0});
  scheduler::register_extender_routes(server, service, "/scheduler");
  for (const char* verb : {"/scheduler/filter", "/scheduler/prioritize"}) {
    net::HttpServerRequest request{
        .method = "POST", .target = verb, .path = verb, .body = std::string(input)};
    (void)server.dispatch(request);
  }
}
