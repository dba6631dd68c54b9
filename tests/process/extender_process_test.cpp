// `hypertopo extender` as a process, the way kube-scheduler reaches it: who may talk to it. It binds
// loopback by default; any other address needs TLS with client certificates verified against a CA
// (kube-scheduler's extender `tlsConfig` presents one), or the explicit --insecure-listen, which the
// log repeats. The cluster view comes from the loopback API server (no Kubernetes API server here).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "net/http_transport.h"
#include "tests/support/apiserver/loopback_apiserver.h"
#include "tests/support/apiserver/self_signed_cert.h"
#include "tests/support/fixtures.h"

extern char** environ;

namespace hypertopo::testing {
namespace {

using namespace std::chrono_literals;
namespace fs = std::filesystem;

std::string extender_binary() {
  const char* override_binary = std::getenv("HYPERTOPO_BINARY");
  return override_binary != nullptr ? override_binary : HT_HYPERTOPO_BINARY;
}

// The extender process with its stderr in a file; SIGKILLed if the test ends with it still running.
class ExtenderProcess {
 public:
  ExtenderProcess(const fs::path& dir, std::vector<std::string> args) : log_(dir / "extender.log") {
    args.insert(args.begin(), {extender_binary(), "extender"});
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, log_.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                     0600);
    if (posix_spawn(&pid_, argv[0], &actions, nullptr, argv.data(), environ) != 0) pid_ = -1;
    posix_spawn_file_actions_destroy(&actions);
  }
  ~ExtenderProcess() {
    if (pid_ > 0 && !exited_) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
  }
  bool spawned() const { return pid_ > 0; }
  std::string log() const { return fs::exists(log_) ? read_text(log_) : ""; }

  // The exit code once it exits within `limit`; -1 if it is still running.
  int wait_exit(std::chrono::milliseconds limit) {
    const auto end = std::chrono::steady_clock::now() + limit;
    int status = 0;
    while (std::chrono::steady_clock::now() < end) {
      if (waitpid(pid_, &status, WNOHANG) == pid_) {
        exited_ = true;
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      }
      std::this_thread::sleep_for(20ms);
    }
    return -1;
  }
  int stop() {
    kill(pid_, SIGTERM);
    return wait_exit(20s);
  }

  // The port from "serving ... on ADDR:PORT", once the log has it; 0 when it exits or never serves.
  std::uint16_t serving_port(std::chrono::milliseconds limit = 60s) {
    const auto end = std::chrono::steady_clock::now() + limit;
    while (std::chrono::steady_clock::now() < end) {
      const std::string text = log();
      const auto at = text.find(" serving ");
      if (at != std::string::npos) {
        const auto line_end = text.find('\n', at);
        if (line_end != std::string::npos) {
          const std::string line = text.substr(at, line_end - at);
          const auto space = line.find(' ', line.rfind(':'));
          return static_cast<std::uint16_t>(std::stoi(line.substr(line.rfind(':') + 1, space)));
        }
      }
      int status = 0;
      if (waitpid(pid_, &status, WNOHANG) == pid_) {
        exited_ = true;
        return 0;
      }
      std::this_thread::sleep_for(20ms);
    }
    return 0;
  }

 private:
  fs::path log_;
  pid_t pid_ = -1;
  bool exited_ = false;
};

class ExtenderProcessTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(api_.start().has_value());
    kubeconfig_ = dir_.path() / "kubeconfig";
    write_text(
        kubeconfig_,
        "apiVersion: v1\nkind: Config\nclusters:\n- name: loop\n  cluster:\n    server: " + api_.url() +
            "\nusers:\n- name: me\n  user:\n    token: t0ken\ncontexts:\n- name: loop\n"
            "  context:\n    cluster: loop\n    user: me\ncurrent-context: loop\n");
  }
  fs::path config(const std::string& extra) {
    const auto path = dir_.path() / "extender.yaml";
    write_text(path, "apiVersion: hypertopo.io/v1alpha1\nkind: ExtenderConfig\nstateFile: " +
                         (dir_.path() / "state.json").string() + "\n" + extra);
    return path;
  }
  std::vector<std::string> args(const fs::path& cfg, std::vector<std::string> more = {}) {
    std::vector<std::string> out{"--config", cfg.string(), "--kubeconfig", kubeconfig_.string()};
    out.insert(out.end(), more.begin(), more.end());
    return out;
  }
  // A PEM pair in files: <name>.crt and <name>.key.
  CertificatePair pem_files(const std::string& name) {
    auto made = make_self_signed_cert(name);
    EXPECT_TRUE(made.has_value());
    if (!made) return {};
    write_text(dir_.path() / (name + ".crt"), made->cert_pem);
    write_text(dir_.path() / (name + ".key"), made->key_pem);
    return *made;
  }

  TempDir dir_;
  LoopbackApiServer api_{{.bearer_token = "t0ken"}};
  fs::path kubeconfig_;
};

TEST_F(ExtenderProcessTest, AnExposedAddressWithoutClientAuthenticationRefusesToStart) {
  ExtenderProcess plain(dir_.path(), args(config(""), {"--listen", "0.0.0.0:0"}));
  ASSERT_TRUE(plain.spawned()) << extender_binary();
  EXPECT_EQ(plain.wait_exit(30s), 2) << plain.log();
  EXPECT_NE(plain.log().find("refusing to listen on 0.0.0.0:0 without TLS"), std::string::npos)
      << plain.log();
  EXPECT_NE(plain.log().find("--insecure-listen"), std::string::npos) << plain.log();

  // TLS alone does not say who the client is: still refused.
  pem_files("server");
  const std::string tls = "listen: 0.0.0.0:0\ntls: {certFile: " + (dir_.path() / "server.crt").string() +
                          ", keyFile: " + (dir_.path() / "server.key").string() + "}\n";
  ExtenderProcess no_ca(dir_.path(), args(config(tls)));
  EXPECT_EQ(no_ca.wait_exit(30s), 2) << no_ca.log();
  EXPECT_NE(no_ca.log().find("without tls.clientCAFile"), std::string::npos) << no_ca.log();
}

TEST_F(ExtenderProcessTest, LoopbackIsTheDefaultAndInsecureListenIsLogged) {
  ExtenderProcess loopback(dir_.path(), args(config(""), {"--listen", ":0"}));
  ASSERT_NE(loopback.serving_port(), 0) << loopback.log();
  EXPECT_NE(loopback.log().find(" on 127.0.0.1:"), std::string::npos) << loopback.log();
  EXPECT_EQ(loopback.log().find("WARNING"), std::string::npos) << loopback.log();
  EXPECT_EQ(loopback.stop(), 0) << loopback.log();

  ExtenderProcess exposed(dir_.path(), args(config(""), {"--listen", "0.0.0.0:0", "--insecure-listen"}));
  const std::uint16_t port = exposed.serving_port();
  ASSERT_NE(port, 0) << exposed.log();
  EXPECT_NE(exposed.log().find("WARNING: --insecure-listen: 0.0.0.0:" + std::to_string(port)),
            std::string::npos)
      << exposed.log();
  EXPECT_EQ(exposed.stop(), 0) << exposed.log();
}

TEST_F(ExtenderProcessTest, TlsWithClientCertificatesServesOnlyTheSchedulersCertificate) {
  const CertificatePair server = pem_files("server");
  const CertificatePair scheduler = pem_files("scheduler");
  const CertificatePair stranger = pem_files("stranger");
  const std::string tls = "listen: 0.0.0.0:0\ntls:\n  certFile: " + (dir_.path() / "server.crt").string() +
                          "\n  keyFile: " + (dir_.path() / "server.key").string() +
                          "\n  clientCAFile: " + (dir_.path() / "scheduler.crt").string() + "\n";
  ExtenderProcess extender(dir_.path(), args(config(tls)));
  const std::uint16_t port = extender.serving_port();
  ASSERT_NE(port, 0) << extender.log();
  EXPECT_NE(extender.log().find("client certificates required"), std::string::npos) << extender.log();
  EXPECT_EQ(extender.log().find("WARNING"), std::string::npos) << extender.log();

  auto client = [&](const CertificatePair* identity) {
    net::TransportConfig c{.host = "127.0.0.1", .port = std::to_string(port), .tls = true};
    c.tls_config.ca_pem = server.cert_pem;
    if (identity) {
      c.tls_config.client_cert_pem = identity->cert_pem;
      c.tls_config.client_key_pem = identity->key_pem;
    }
    return net::HttpTransport::create(c);
  };
  // kube-scheduler's call, as it sends it: POST <urlPrefix>/filter with ExtenderArgs.
  const std::string filter_args = R"({"pod":{"metadata":{"name":"p","namespace":"default"}},"nodenames":[]})";
  auto post_filter = [&](net::HttpTransport& t) {
    return t.round_trip({"POST", "/scheduler/filter", {{"Content-Type", "application/json"}}, filter_args},
                        10s, false);
  };
  auto anonymous = client(nullptr);
  ASSERT_TRUE(anonymous.has_value());
  EXPECT_FALSE(post_filter(**anonymous).has_value()) << "a client without a certificate was served";
  auto wrong = client(&stranger);
  ASSERT_TRUE(wrong.has_value());
  EXPECT_FALSE(post_filter(**wrong).has_value()) << "a certificate the CA did not sign was served";

  auto trusted = client(&scheduler);
  ASSERT_TRUE(trusted.has_value());
  auto answer = post_filter(**trusted);
  ASSERT_TRUE(answer.has_value()) << answer.error().error.message();
  EXPECT_EQ(answer->status, 200) << answer->body;
  // Only the trusted call reached the service.
  auto metrics = (*trusted)->round_trip({"GET", "/metrics", {}, ""}, 10s, true);
  ASSERT_TRUE(metrics.has_value());
  EXPECT_NE(metrics->body.find("hypertopo_extender_filter_calls_total 1\n"), std::string::npos)
      << metrics->body;
  EXPECT_EQ(extender.stop(), 0) << extender.log();
}

}  // namespace
}  // namespace hypertopo::testing
