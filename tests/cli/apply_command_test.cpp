// `hypertopo apply` end to end through the binary's entry point, against the loopback API server
// (no real API server here; the loopback one keeps its semantics and counts every write).
#include <gtest/gtest.h>

#include <sstream>

#include "cli/commands.h"
#include "tests/support/apiserver/loopback_apiserver.h"
#include "tests/support/fixtures.h"

namespace hypertopo::cli {
namespace {

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

class ApplyCommand : public ::testing::Test {
 protected:
  void SetUp() override {
    server_ = std::make_unique<testing::LoopbackApiServer>(
        testing::LoopbackApiServerOptions{.bearer_token = "t0ken"});
    auto started = server_->start();
    ASSERT_TRUE(started) << started.error().message();
    kubeconfig_ = (dir_.path() / "kubeconfig").string();
    testing::write_text(kubeconfig_,
                        "apiVersion: v1\nkind: Config\n"
                        "clusters:\n- name: loop\n  cluster:\n    server: " +
                            server_->url() +
                            "\n"
                            "users:\n- name: me\n  user:\n    token: t0ken\n"
                            "contexts:\n- name: loop\n  context:\n    cluster: loop\n    user: me\n"
                            "current-context: loop\n");
  }

  testing::CapturedRun apply(std::vector<std::string> extra) {
    std::vector<std::string> args = {"apply", "--kubeconfig", kubeconfig_, "--source", "demo"};
    args.insert(args.end(), extra.begin(), extra.end());
    return testing::run_captured(run_cli, args);
  }

  testing::TempDir dir_;
  std::string kubeconfig_;
  std::unique_ptr<testing::LoopbackApiServer> server_;
};

TEST_F(ApplyCommand, DryRunThenApplyThenNothingToDo) {
  auto dry = apply({"--dry-run"});
  ASSERT_EQ(dry.code, 0) << dry.err;
  auto lines = lines_of(dry.out);
  ASSERT_EQ(lines.size(), 8u) << dry.out;  // the demo's 7 HyperNodes and the summary
  EXPECT_EQ(lines.back(), "created=7 updated=0 deleted=0 unchanged=0 held=0");
  EXPECT_EQ(lines[0].rfind("create hypernode ", 0), 0u) << lines[0];
  EXPECT_NE(lines[0].find("(dry run)"), std::string::npos);
  EXPECT_EQ(server_->writes(), 0);
  EXPECT_EQ(server_->count("list"), 2);  // Nodes, then our HyperNodes
  EXPECT_NE(dry.err.find("the cluster lists no Nodes"), std::string::npos) << dry.err;

  auto real = apply({});
  ASSERT_EQ(real.code, 0) << real.err;
  EXPECT_EQ(lines_of(real.out).back(), "created=7 updated=0 deleted=0 unchanged=0 held=0");
  EXPECT_EQ(server_->store().object_count("topology.volcano.sh/v1alpha1/hypernodes"), 7u);

  server_->reset_counts();
  auto again = apply({});
  ASSERT_EQ(again.code, 0) << again.err;
  lines = lines_of(again.out);
  EXPECT_EQ(lines.back(), "created=0 updated=0 deleted=0 unchanged=7 held=0");
  EXPECT_EQ(lines[0].rfind("unchanged hypernode ", 0), 0u) << lines[0];
  EXPECT_EQ(server_->writes(), 0);
}

TEST_F(ApplyCommand, ABadKubeconfigIsOneClearError) {
  testing::write_text(kubeconfig_, "apiVersion: v1\nkind: Config\ncurrent-context: nowhere\n");
  auto r = apply({});
  EXPECT_NE(r.code, 0);
  EXPECT_NE(r.err.find("--kubeconfig"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace hypertopo::cli
