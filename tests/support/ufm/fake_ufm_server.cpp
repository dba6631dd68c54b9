#include "tests/support/ufm/fake_ufm_server.h"

#include <charconv>

#include "net/header_credentials.h"
#include "tests/support/ufm/ufm_generator.h"

namespace hypertopo::testing {
namespace {

std::size_t query_number(std::string_view query, std::string_view key) {
  std::string needle = std::string(key) + "=";
  for (std::size_t at = 0; (at = query.find(needle, at)) != std::string_view::npos; ++at) {
    if (at != 0 && query[at - 1] != '&') continue;
    std::size_t value = 0;
    auto begin = query.data() + at + needle.size();
    std::from_chars(begin, query.data() + query.size(), value);
    return value;
  }
  return 0;
}

}  // namespace

FakeUfmServer::FakeUfmServer(bool tls) : server_({.tls = tls}) {
  server_.set_raw_handler([this](const RawHttpRequest& request) { return handle(request); });
}

std::expected<void, Error> FakeUfmServer::start() { return server_.start(); }

void FakeUfmServer::set_basic_auth(const std::string& user, const std::string& password) {
  std::lock_guard lock(mutex_);
  expected_basic_ = net::basic_authorization(user, password);
  token_.clear();
}

void FakeUfmServer::set_token(const std::string& token) {
  std::lock_guard lock(mutex_);
  token_ = token;
  expected_basic_.clear();
}

void FakeUfmServer::set_records(const std::string& resource, std::vector<std::string> records) {
  std::lock_guard lock(mutex_);
  records_[resource] = std::move(records);
}

void FakeUfmServer::script(RawHttpResponse response) {
  std::lock_guard lock(mutex_);
  scripted_.push_back(std::move(response));
}

int FakeUfmServer::requests() const {
  std::lock_guard lock(mutex_);
  return static_cast<int>(targets_.size());
}

std::vector<std::string> FakeUfmServer::targets() const {
  std::lock_guard lock(mutex_);
  return targets_;
}

std::vector<std::string> FakeUfmServer::authorizations() const {
  std::lock_guard lock(mutex_);
  return authorizations_;
}

std::optional<RawHttpResponse> FakeUfmServer::handle(const RawHttpRequest& request) {
  std::lock_guard lock(mutex_);
  targets_.push_back(request.target);
  authorizations_.push_back(request.authorization);
  if (!scripted_.empty()) {
    RawHttpResponse next = std::move(scripted_.front());
    scripted_.erase(scripted_.begin());
    return next;
  }
  std::string_view target = request.target;
  std::string_view query;
  if (auto q = target.find('?'); q != std::string_view::npos) {
    query = target.substr(q + 1);
    target = target.substr(0, q);
  }
  std::string_view base = token_.empty() ? "/ufmRest/" : "/ufmRestV3/";
  std::string expected = token_.empty() ? expected_basic_ : "Basic " + token_;
  if (request.authorization != expected || !target.starts_with(base)) {
    return RawHttpResponse{.status = 401, .body = "{\"error\": \"Unauthorized\"}"};
  }
  std::string_view path = target.substr(base.size());
  if (!path.starts_with("resources/")) return RawHttpResponse{.status = 404, .body = "{}"};
  auto found = records_.find(std::string(path.substr(10)));
  if (found == records_.end()) return RawHttpResponse{.status = 404, .body = "{}"};
  std::size_t rpp = query_number(query, "rpp");
  if (rpp == 0) return RawHttpResponse{.status = 200, .body = json_list(found->second)};
  std::size_t page = std::max<std::size_t>(1, query_number(query, "page_number"));
  return RawHttpResponse{.status = 200, .body = json_page(found->second, page, rpp)};
}

}  // namespace hypertopo::testing
