// tests/support/ufm/fake_ufm_server.h: a UFM Enterprise REST stand-in for tests.
//
// Test code only; there is no UFM server here, so the tests talk to this one over real HTTPS. It
// rides on the loopback API server's raw-handler hook (one Beast listener for the whole test tree):
// basic auth on /ufmRest or token auth on /ufmRestV3, `resources/ports` and `resources/links` as a
// plain list or, when the request has `rpp`, as UFM's paged object; scripted answers (5xx, delays,
// truncated or oversized bodies) jump the queue in order. Every request's target and Authorization
// header are kept so tests can count requests and check what was sent.
//
//   FakeUfmServer ufm;
//   ufm.set_basic_auth("admin", "pw");
//   ufm.set_records("ports", generated.ports);
//   ASSERT_TRUE(ufm.start().has_value());
//   ufm.script({.status = 503});                // the next request answers 503
//   // point a client at ufm.url() with ufm.ca_pem() as its CA ...
//   EXPECT_EQ(ufm.requests(), 3);
#pragma once

#include <expected>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "errors/error.h"
#include "tests/support/apiserver/loopback_apiserver.h"

namespace hypertopo::testing {

class FakeUfmServer {
 public:
  explicit FakeUfmServer(bool tls = true);
  std::expected<void, Error> start();

  // Exactly one mode answers; the other is refused with 401.
  void set_basic_auth(const std::string& user, const std::string& password);
  void set_token(const std::string& token);
  // Records of "ports" or "links" (each one JSON object).
  void set_records(const std::string& resource, std::vector<std::string> records);
  // The next requests are answered with these, in order, before the normal handling.
  void script(RawHttpResponse response);

  std::string url() const { return server_.url(); }
  const std::string& ca_pem() const { return server_.certificate().cert_pem; }
  int requests() const;
  std::vector<std::string> targets() const;
  std::vector<std::string> authorizations() const;

 private:
  std::optional<RawHttpResponse> handle(const RawHttpRequest& request);

  LoopbackApiServer server_;
  mutable std::mutex mutex_;
  std::string expected_basic_;  // the whole header value
  std::string token_;
  std::map<std::string, std::vector<std::string>> records_;
  std::vector<RawHttpResponse> scripted_;
  std::vector<std::string> targets_;
  std::vector<std::string> authorizations_;
};

}  // namespace hypertopo::testing
