// `hypertopo apply` end to end through the binary's entry point, against the loopback API server
// (no real API server here; the loopback one keeps its semantics and counts every write).
#include <gtest/gtest.h>
#include <re2/re2.h>

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>
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
  EXPECT_EQ(lines.back(), "created=7 updated=0 deleted=0 unchanged=0 held=0");
  // The demo's 7 HyperNodes, each with the fields it would be created with.
  EXPECT_EQ(
      std::ranges::count_if(lines, [](const std::string& l) { return l.starts_with("create HyperNode "); }),
      7);
  EXPECT_EQ(lines[0].rfind("create HyperNode ", 0), 0u) << lines[0];
  EXPECT_NE(dry.out.find("\n  spec.tier: absent -> 1\n"), std::string::npos) << dry.out;
  EXPECT_NE(dry.out.find("\n  status.nodeCount: absent -> "), std::string::npos) << dry.out;
  EXPECT_NE(dry.err.find("dry run: nothing was written"), std::string::npos) << dry.err;
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

// A copy of the real capture with one host renamed (same place in sort order, so one member changes).
std::filesystem::path renamed_capture(const std::filesystem::path& capture,
                                      const std::filesystem::path& dir) {
  std::string text = testing::read_text(capture);
  std::string::size_type at = 0;
  for (const std::string from = "a08-p1-dgx-04-c17 "; (at = text.find(from, at)) != std::string::npos;) {
    text.replace(at, from.size(), "a08-p1-dgx-04-c17b ");
    at += from.size();
  }
  const auto out = dir / "renamed.out";
  testing::write_text(out, text);
  return out;
}

std::vector<std::string> mutating_requests(const testing::LoopbackApiServer& server, std::size_t from) {
  std::vector<std::string> out;
  const auto log = server.request_log();
  for (std::size_t i = from; i < log.size(); ++i) {
    const auto& verb = log[i].verb;
    if (verb != "get" && verb != "list" && verb != "watch") out.push_back(verb + " " + log[i].path);
  }
  return out;
}

// A changed capture: the dry run names the member that changes, with its old and new value, and
// the HyperNode's nodeCount as numbers, and sends no write; -o json is the same as data.
TEST_F(ApplyCommand, DryRunOfAChangedCaptureShowsTheChangedFieldsAndWritesNothing) {
  HT_REQUIRE_FIXTURE(capture, "ibnetdiscover/topograph-example.out");
  auto first = testing::run_captured(
      run_cli, {"apply", "--kubeconfig", kubeconfig_, "--source", "ibnetdiscover:" + capture.string()});
  ASSERT_EQ(first.code, 0) << first.err;
  ASSERT_EQ(lines_of(first.out).back(), "created=9 updated=0 deleted=0 unchanged=0 held=0");

  const auto changed = "ibnetdiscover:" + renamed_capture(capture, dir_.path()).string();
  const std::size_t log_before = server_->request_log().size();
  server_->reset_counts();
  auto dry = testing::run_captured(run_cli,
                                   {"apply", "--kubeconfig", kubeconfig_, "--source", changed, "--dry-run"});
  ASSERT_EQ(dry.code, 0) << dry.err;
  const auto lines = lines_of(dry.out);
  ASSERT_GE(lines.size(), 3u) << dry.out;
  EXPECT_EQ(lines.back(), "created=0 updated=1 deleted=0 unchanged=8 held=0");
  EXPECT_EQ(lines[0].rfind("update HyperNode leaf-", 0), 0u) << dry.out;
  const RE2 member(
      R"(^  spec\.members\[\d+\]\.selector\.exactMatch\.name: "a08-p1-dgx-04-c17" -> "a08-p1-dgx-04-c17b"$)");
  EXPECT_EQ(std::ranges::count_if(lines, [&](const std::string& l) { return RE2::FullMatch(l, member); }), 1)
      << dry.out;
  EXPECT_EQ(lines.size(), 3u) << "one member renamed, nothing else changes:\n" << dry.out;
  EXPECT_EQ(dry.out.find(": -1 ->"), std::string::npos) << dry.out;
  EXPECT_EQ(server_->writes(), 0);
  EXPECT_EQ(mutating_requests(*server_, log_before), std::vector<std::string>{});

  auto json_run = testing::run_captured(
      run_cli, {"apply", "--kubeconfig", kubeconfig_, "--source", changed, "--dry-run", "-o", "json"});
  ASSERT_EQ(json_run.code, 0) << json_run.err;
  const auto plan = nlohmann::json::parse(json_run.out);
  ASSERT_TRUE(plan.is_array());
  ASSERT_EQ(plan.size(), 1u) << plan.dump(2);
  EXPECT_EQ(plan[0]["action"], "update");
  EXPECT_EQ(plan[0]["kind"], "HyperNode");
  EXPECT_EQ(plan[0]["name"], lines[0].substr(std::string("update HyperNode ").size()));
  ASSERT_EQ(plan[0]["changes"].size(), 1u);
  EXPECT_EQ(plan[0]["changes"][0]["old"], "a08-p1-dgx-04-c17");
  EXPECT_EQ(plan[0]["changes"][0]["new"], "a08-p1-dgx-04-c17b");
  EXPECT_EQ(server_->writes(), 0);
  EXPECT_EQ(mutating_requests(*server_, log_before), std::vector<std::string>{});

  // What the plan said is what a real apply does.
  auto real = testing::run_captured(run_cli, {"apply", "--kubeconfig", kubeconfig_, "--source", changed});
  ASSERT_EQ(real.code, 0) << real.err;
  EXPECT_EQ(lines_of(real.out).back(), "created=0 updated=1 deleted=0 unchanged=8 held=0");
  EXPECT_EQ(server_->count("update"), 1);
}

// The plan as data exists only for a dry run; a real apply is not started by a mistyped flag.
TEST_F(ApplyCommand, JsonPlanWithoutDryRunIsRefused) {
  auto r = apply({"-o", "json"});
  EXPECT_NE(r.code, 0);
  EXPECT_NE(r.err.find("--dry-run"), std::string::npos) << r.err;
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
