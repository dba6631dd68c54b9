#include "tests/support/netq/fake_netq_server.h"

#include <nlohmann/json.hpp>

#include "net/header_credentials.h"

namespace hypertopo::testing {
namespace {

using nlohmann::json;

constexpr const char* kLoginToken = "login-token-1";
std::string premises_token(int opid) { return "premises-token-" + std::to_string(opid); }

}  // namespace

FakeNetqServer::FakeNetqServer(bool tls) : server_({.tls = tls}) {
  server_.set_raw_handler([this](const RawHttpRequest& request) { return handle(request); });
}

std::expected<void, Error> FakeNetqServer::start() { return server_.start(); }

void FakeNetqServer::set_credentials(const std::string& user, const std::string& password) {
  std::lock_guard lock(mutex_);
  user_ = user;
  password_ = password;
}

void FakeNetqServer::add_premises(int opid, std::string topology_graph, bool config_key_viewed) {
  std::lock_guard lock(mutex_);
  premises_[opid] = {std::move(topology_graph), config_key_viewed};
}

void FakeNetqServer::set_compute_nodes(std::string body) {
  std::lock_guard lock(mutex_);
  compute_nodes_ = std::move(body);
}

void FakeNetqServer::script(RawHttpResponse response) {
  std::lock_guard lock(mutex_);
  scripted_.push_back(std::move(response));
}

std::vector<std::string> FakeNetqServer::targets() const {
  std::lock_guard lock(mutex_);
  return targets_;
}

std::vector<std::string> FakeNetqServer::authorizations() const {
  std::lock_guard lock(mutex_);
  return authorizations_;
}

std::optional<RawHttpResponse> FakeNetqServer::handle(const RawHttpRequest& request) {
  std::lock_guard lock(mutex_);
  targets_.push_back(request.method + " " + request.target);
  authorizations_.push_back(request.authorization);
  if (!scripted_.empty()) {
    RawHttpResponse next = std::move(scripted_.front());
    scripted_.erase(scripted_.begin());
    return next;
  }
  const RawHttpResponse unauthorized{.status = 401, .body = R"({"message": "Unauthorized"})"};
  const std::string& t = request.target;
  if (request.method == "POST" && t == "/api/netq/auth/v1/login") {
    const json body = json::parse(request.body, nullptr, false);
    if (!body.is_object() || body.value("username", "") != user_ || body.value("password", "") != password_)
      return unauthorized;
    json premises = json::array();
    for (const auto& [opid, p] : premises_)
      premises.push_back({{"opid", opid},
                          {"name", "premises-" + std::to_string(opid)},
                          {"namespace", "ns"},
                          {"config_key_viewed", p.second}});
    return RawHttpResponse{.status = 200,
                           .body = json{{"access_token", kLoginToken}, {"premises", premises}}.dump()};
  }
  if (request.method == "GET" && t.starts_with("/api/netq/auth/v1/select/opid/")) {
    if (request.authorization != std::string("Bearer ") + kLoginToken) return unauthorized;
    const int opid = std::atoi(t.substr(t.rfind('/') + 1).c_str());
    if (!premises_.contains(opid)) return RawHttpResponse{.status = 404, .body = "{}"};
    return RawHttpResponse{.status = 200, .body = json{{"access_token", premises_token(opid)}}.dump()};
  }
  if (request.method == "POST" &&
      t == "/api/netq/telemetry/v1/object/topologygraph/fetch-topology?timestamp=0") {
    for (const auto& [opid, p] : premises_)
      if (request.authorization == "Bearer " + premises_token(opid))
        return RawHttpResponse{.status = 200, .body = p.first};
    return unauthorized;
  }
  if (request.method == "GET" && t == "/nmx/v1/compute-nodes") {
    if (request.authorization != net::basic_authorization(user_, password_)) return unauthorized;
    if (compute_nodes_.empty()) return RawHttpResponse{.status = 404, .body = "{}"};
    return RawHttpResponse{.status = 200, .body = compute_nodes_};
  }
  return RawHttpResponse{.status = 404, .body = "{}"};
}

}  // namespace hypertopo::testing
