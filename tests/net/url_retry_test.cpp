// The one URL reader and the one retry rule that the API server client and UFM share.
#include <gtest/gtest.h>

#include "net/retry.h"
#include "net/url.h"

namespace hypertopo::net {
namespace {

using namespace std::chrono_literals;

TEST(HttpUrl, ReadsSchemeHostPortAndPath) {
  auto u = parse_http_url("https://ufm.example:8443/ufmRest//");
  ASSERT_TRUE(u) << u.error().message();
  EXPECT_TRUE(u->tls);
  EXPECT_EQ(u->host, "ufm.example");
  EXPECT_EQ(u->port, "8443");
  EXPECT_EQ(u->path, "/ufmRest");
  EXPECT_EQ(u->origin(), "https://ufm.example:8443/ufmRest");

  auto plain = parse_http_url("http://10.0.0.1?x=1");
  ASSERT_TRUE(plain) << plain.error().message();
  EXPECT_FALSE(plain->tls);
  EXPECT_EQ(plain->port, "80");
  EXPECT_EQ(plain->path, "");

  auto v6 = parse_http_url("https://[fd00::1]/api");
  ASSERT_TRUE(v6) << v6.error().message();
  EXPECT_EQ(v6->host, "fd00::1");
  EXPECT_EQ(v6->port, "443");
  EXPECT_EQ(v6->server(), "https://[fd00::1]:443");
}

TEST(HttpUrl, RefusesWhatWouldBeMisreadAndNeverPrintsAPassword) {
  const std::pair<const char*, const char*> cases[] = {
      {"ftp://host", "must start with https:// or http://"},
      {"https://", "has no host"},
      {"https://host:0", "'0' is not a port number"},
      {"https://host:65536", "is not a port number"},
      {"https://host:80x", "is not a port number"},
      {"https://[fd00::1", "unclosed '['"},
      {"https://[fd00::1]x", "after the IPv6 address"},
      {"https://fd00::1", "needs brackets"},
      {"https://admin:s3cret@host", "must not carry credentials"},
  };
  for (const auto& [url, what] : cases) {
    auto u = parse_http_url(url, {.what = "UFM URL"});
    ASSERT_FALSE(u) << url;
    EXPECT_NE(u.error().message().find(what), std::string::npos) << u.error().message();
    EXPECT_TRUE(u.error().message().starts_with("UFM URL '")) << u.error().message();
    EXPECT_EQ(u.error().message().find("s3cret"), std::string::npos) << u.error().message();
  }
  EXPECT_EQ(redact_url_password("a https://u:pw@h/x and http://v:pw2@k"),
            "a https://u:REDACTED@h/x and http://v:REDACTED@k");
}

TEST(Retry, BackoffDoublesToItsCapAndRetryAfterOnlyLengthensIt) {
  EXPECT_EQ(backoff_delay(500ms, 4s, 0), 500ms);
  EXPECT_EQ(backoff_delay(500ms, 4s, 2), 2000ms);
  EXPECT_EQ(backoff_delay(500ms, 4s, 40), 4s);
  EXPECT_EQ(retry_wait(1s, "", 30s), 1s);
  EXPECT_EQ(retry_wait(1s, "5", 30s), 5s);
  EXPECT_EQ(retry_wait(1s, "600", 30s), 30s);  // a server cannot park us for ten minutes
  EXPECT_EQ(retry_wait(4s, "1", 30s), 4s);     // nor make us hammer it
  EXPECT_EQ(retry_wait(1s, "Wed, 21 Oct 2026 07:28:00 GMT", 30s), 1s);
  EXPECT_EQ(parse_retry_after("-3"), 0s);
  EXPECT_TRUE(retryable_status(429, false));
  EXPECT_TRUE(retryable_status(503, true));
  EXPECT_FALSE(retryable_status(503, false));
  EXPECT_FALSE(retryable_status(404, true));
}

}  // namespace
}  // namespace hypertopo::net
