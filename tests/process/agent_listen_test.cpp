// Who reaches the agent's /healthz, /readyz and /metrics, with the agent run as the DaemonSet runs it
// (its YAML, a kubeconfig for the loopback API server, flags): loopback by default; one named address
// (the pod's IP, as the manifests pass it with --http-address=$(POD_IP)) served as given; every
// address at once (0.0.0.0, ::) refused before anything connects, naming the key, unless http.tls
// requires client certificates, or --insecure-listen, which the log says in a WARNING whatever the
// log level. The same rule and words
// as the extender's listener (extender_process_test.cpp).
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <expected>
#include <optional>
#include <string>

#include "net/http_transport.h"
#include "tests/process/agent_harness.h"
#include "tests/support/apiserver/loopback_apiserver.h"
#include "tests/support/apiserver/self_signed_cert.h"
#include "tests/support/fixtures.h"

namespace hypertopo::testing {
namespace {

using namespace std::chrono_literals;
namespace fs = std::filesystem;

// An IPv4 address of this host that is not loopback (an interface that is up), as a pod's IP would
// be; none in a network namespace with loopback alone.
std::optional<std::string> non_loopback_ipv4() {
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) return std::nullopt;
  std::optional<std::string> found;
  for (ifaddrs* i = list; i != nullptr && !found; i = i->ifa_next) {
    if (i->ifa_addr == nullptr || i->ifa_addr->sa_family != AF_INET) continue;
    if ((i->ifa_flags & IFF_UP) == 0 || (i->ifa_flags & IFF_LOOPBACK) != 0) continue;
    char text[INET_ADDRSTRLEN] = {};
    const auto* a = reinterpret_cast<const sockaddr_in*>(i->ifa_addr);
    if (inet_ntop(AF_INET, &a->sin_addr, text, sizeof text) != nullptr) found = text;
  }
  freeifaddrs(list);
  return found;
}

// Whether a TCP connection to address:port is accepted.
bool accepts(const std::string& address, std::uint16_t port) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  if (inet_pton(AF_INET, address.c_str(), &addr.sin_addr) != 1) {
    close(fd);
    return false;
  }
  const bool ok = connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
  close(fd);
  return ok;
}

class AgentListenTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(server_.start());
    kubeconfig_ = write_agent_kubeconfig(dir_.path() / "kubeconfig", server_.url(), "t0ken");
  }
  // The demo fabric, with `extra` appended to the YAML.
  fs::path config(const std::string& extra) {
    const fs::path path = dir_.path() / "config.yaml";
    write_text(path, "sources:\n  - kind: demo\n    config: {mode: model}\n    interval: 1h\n" + extra);
    return path;
  }
  AgentProcessOptions options(const std::string& extra_yaml, std::vector<std::string> args,
                              const std::string& name) {
    return {.config = config(extra_yaml),
            .kubeconfig = kubeconfig_,
            .work = dir_.path() / ("work-" + name),
            .args = std::move(args),
            .log = dir_.path() / (name + ".log")};
  }

  TempDir dir_;
  LoopbackApiServer server_{{.bearer_token = "t0ken"}};
  fs::path kubeconfig_;
};

TEST_F(AgentListenTest, ByDefaultItServesLoopbackOnly) {
  AgentProcess agent(options("", {}, "default"));
  ASSERT_TRUE(agent.started());
  ASSERT_TRUE(eventually_here([&] { return agent.get("/readyz").find(" 200 ") != std::string::npos; }))
      << agent.log();
  EXPECT_NE(agent.get("/metrics").find("hypertopo_leader"), std::string::npos);
  const std::string where = "127.0.0.1:" + std::to_string(agent.port());
  EXPECT_NE(agent.log().find("serving /healthz, /readyz and /metrics on " + where + " (HTTP)"),
            std::string::npos)
      << agent.log();
  EXPECT_EQ(agent.log().find("WARNING"), std::string::npos) << agent.log();
  // Another address of this host does not answer.
  if (const auto other = non_loopback_ipv4()) {
    EXPECT_FALSE(accepts(*other, agent.port())) << *other << " answered";
  }
  EXPECT_TRUE(agent.terminate()) << agent.log();
}

// Refused as invalid input (exit 2, cli/command_errors.h), before anything connects.
TEST_F(AgentListenTest, EveryAddressWithoutTlsIsRefusedNamingTheKeyBeforeAnythingConnects) {
  AgentProcess from_yaml(options("http: {address: 0.0.0.0}\n", {}, "yaml"));
  ASSERT_TRUE(from_yaml.started());
  EXPECT_EQ(from_yaml.wait_exit(30s), 2) << from_yaml.log();
  const std::string port = std::to_string(from_yaml.port());
  EXPECT_NE(from_yaml.log().find("refusing to listen on 0.0.0.0:" + port + " without TLS (http.address)"),
            std::string::npos)
      << from_yaml.log();
  EXPECT_NE(from_yaml.log().find("--insecure-listen"), std::string::npos) << from_yaml.log();

  AgentProcess from_flag(options("", {"--http-address", "::"}, "flag"));
  ASSERT_TRUE(from_flag.started());
  EXPECT_EQ(from_flag.wait_exit(30s), 2) << from_flag.log();
  EXPECT_NE(from_flag.log().find("refusing to listen on [::]:" + std::to_string(from_flag.port()) +
                                 " without TLS (--http-address)"),
            std::string::npos)
      << from_flag.log();

  // TLS alone does not say who the client is: still refused.
  auto made = make_self_signed_cert("agent");
  ASSERT_TRUE(made.has_value());
  write_text(dir_.path() / "agent.crt", made->cert_pem);
  write_text(dir_.path() / "agent.key", made->key_pem);
  AgentProcess tls_only(
      options("http:\n  address: 0.0.0.0\n  tls: {certFile: " + (dir_.path() / "agent.crt").string() +
                  ", keyFile: " + (dir_.path() / "agent.key").string() + "}\n",
              {}, "tls"));
  ASSERT_TRUE(tls_only.started());
  EXPECT_EQ(tls_only.wait_exit(30s), 2) << tls_only.log();
  EXPECT_NE(tls_only.log().find("without http.tls.clientCAFile (http.address)"), std::string::npos)
      << tls_only.log();

  // Refused before it reached the API server or bound the port.
  EXPECT_TRUE(server_.request_log().empty()) << server_.request_log().size() << " requests";
  EXPECT_FALSE(accepts("127.0.0.1", from_yaml.port()));
}

TEST_F(AgentListenTest, InsecureListenServesEveryAddressAndWarnsWhateverTheLogLevel) {
  // logLevel error hides the "serving" line, never the warning.
  AgentProcess agent(
      options("logLevel: error\n", {"--http-address", "0.0.0.0", "--insecure-listen"}, "open"));
  ASSERT_TRUE(agent.started());
  ASSERT_TRUE(eventually_here([&] { return agent.get("/readyz").find(" 200 ") != std::string::npos; }))
      << agent.log();
  EXPECT_NE(
      agent.log().find("level=warn msg=\"WARNING: --insecure-listen: 0.0.0.0:" +
                       std::to_string(agent.port()) + " serves /healthz, /readyz and /metrics to any client"),
      std::string::npos)
      << agent.log();
  if (const auto other = non_loopback_ipv4()) {
    EXPECT_TRUE(accepts(*other, agent.port())) << *other << " did not answer";
  }
  EXPECT_TRUE(agent.terminate()) << agent.log();
}

// With http.tls and a client CA, every address may be served: only a client with a certificate that
// CA signed gets an answer.
TEST_F(AgentListenTest, TlsWithClientCertificatesServesEveryAddressToTheTrustedClientOnly) {
  auto pem = [&](const std::string& name) {
    auto made = make_self_signed_cert(name);
    EXPECT_TRUE(made.has_value());
    if (!made) return CertificatePair{};
    write_text(dir_.path() / (name + ".crt"), made->cert_pem);
    write_text(dir_.path() / (name + ".key"), made->key_pem);
    return *made;
  };
  const CertificatePair server = pem("agent");
  const CertificatePair prometheus = pem("prometheus");
  const CertificatePair stranger = pem("stranger");
  const fs::path d = dir_.path();
  AgentProcess agent(options("http:\n  address: 0.0.0.0\n  tls: {certFile: " + (d / "agent.crt").string() +
                                 ", keyFile: " + (d / "agent.key").string() +
                                 ", clientCAFile: " + (d / "prometheus.crt").string() + "}\n",
                             {}, "mtls"));
  ASSERT_TRUE(agent.started());
  const std::string serving =
      "serving /healthz, /readyz and /metrics on 0.0.0.0:" + std::to_string(agent.port()) +
      " (HTTPS, client certificates required)";
  ASSERT_TRUE(eventually_here([&] { return agent.log().find(serving) != std::string::npos; })) << agent.log();
  EXPECT_EQ(agent.log().find("WARNING"), std::string::npos) << agent.log();
  auto get_metrics =
      [&](const CertificatePair* identity) -> std::expected<net::HttpResponse, net::TransportError> {
    net::TransportConfig c{.host = "127.0.0.1", .port = std::to_string(agent.port()), .tls = true};
    c.tls_config.ca_pem = server.cert_pem;
    if (identity) {
      c.tls_config.client_cert_pem = identity->cert_pem;
      c.tls_config.client_key_pem = identity->key_pem;
    }
    auto transport = net::HttpTransport::create(c);
    if (!transport) return std::unexpected(net::TransportError{.error = transport.error()});
    return (*transport)->round_trip({"GET", "/metrics", {}, ""}, 10s, true);
  };
  EXPECT_FALSE(get_metrics(nullptr).has_value()) << "a client without a certificate was served";
  EXPECT_FALSE(get_metrics(&stranger).has_value()) << "a certificate the CA did not sign was served";
  auto trusted = get_metrics(&prometheus);
  ASSERT_TRUE(trusted.has_value()) << trusted.error().error.message();
  EXPECT_EQ(trusted->status, 200);
  EXPECT_NE(trusted->body.find("hypertopo_leader"), std::string::npos);
  EXPECT_TRUE(agent.terminate()) << agent.log();
}

// The manifests' form: the pod's IP, named. It is served without the opt-in and without a warning,
// and loopback is not.
TEST_F(AgentListenTest, ThePodsOwnAddressIsServedAsGivenAndNothingElse) {
  const auto pod_ip = non_loopback_ipv4();
  if (!pod_ip) GTEST_SKIP() << "this host has no address but loopback";
  AgentProcess agent(options("", {"--http-address=" + *pod_ip}, "pod-ip"));
  ASSERT_TRUE(agent.started());
  const std::string serving =
      "serving /healthz, /readyz and /metrics on " + *pod_ip + ":" + std::to_string(agent.port()) + " (HTTP)";
  ASSERT_TRUE(eventually_here([&] { return agent.log().find(serving) != std::string::npos; })) << agent.log();
  EXPECT_TRUE(accepts(*pod_ip, agent.port()));
  EXPECT_FALSE(accepts("127.0.0.1", agent.port()));
  EXPECT_EQ(agent.log().find("WARNING"), std::string::npos) << agent.log();
  EXPECT_TRUE(agent.terminate()) << agent.log();
}

}  // namespace
}  // namespace hypertopo::testing
