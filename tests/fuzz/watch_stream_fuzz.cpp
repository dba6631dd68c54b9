// A watch stream as the API server sends it (JSON lines of {type, object}): the input is served as
// the body of a watch on a loopback server and read by KubeClient::watch, which must end with a
// value or an error (never a crash), hand on only objects, and never buffer more than its line bound.
#include <cstdlib>
#include <mutex>
#include <string>

#include "k8s/client/kube_client.h"
#include "net/http_server.h"
#include "tests/fuzz/fuzz_target.h"

namespace {

using namespace hypertopo;

std::mutex body_mutex;
std::string body;  // what the next watch answers

// One server for the whole run, held by a static pointer (reachable at exit, as the client is).
std::uint16_t server_port() {
  static net::HttpServer* const server = [] {
    auto* s = new net::HttpServer({.address = "127.0.0.1", .port = 0});
    s->handle("GET", "/apis/hypertopo.io/v1alpha1/things", [](const net::HttpServerRequest&) {
      std::lock_guard lock(body_mutex);
      return net::HttpServerResponse{.content_type = "application/json", .body = body};
    });
    if (!s->start()) std::abort();
    return s;
  }();
  return server->port();
}

}  // namespace

HT_FUZZ_TARGET(watch_stream) {
  static k8s::KubeClient* client = [] {
    k8s::ClusterConfig config;
    config.server = "http://127.0.0.1:" + std::to_string(server_port());
    auto made = k8s::KubeClient::create(config, k8s::ClientOptions{.qps = 0});
    if (!made) std::abort();
    return made->release();
  }();
  {
    std::lock_guard lock(body_mutex);
    body.assign(input.data(), input.size());
  }
  const k8s::Resource things{"hypertopo.io", "v1alpha1", "things", /*namespaced=*/false};
  (void)client->watch(things, "", {}, [](const k8s::WatchEvent& event) {
    if (!event.object.is_object()) std::abort();
    return true;
  });
}
