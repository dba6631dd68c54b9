// The extender's state file (plan_store.cpp) as a restart reads it: bounded before it is parsed, and
// holding of each pod only the annotations the gang and request readers read.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <mutex>
#include <string>

#include "scheduler/extender/cluster_view.h"
#include "scheduler/extender/gang_book.h"
#include "tests/scheduler/extender/extender_cluster.h"
#include "tests/support/fixtures.h"
#include "timing/clock.h"

namespace hypertopo::scheduler {
namespace {

using nlohmann::json;
using testing::pod_object;

std::string read_text(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

class StateFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    cluster_ = testing::make_cluster(1, 2, 4);  // leaf-00, leaf-01: n-00-0..3, n-01-0..3
    restart();
  }

  // A fresh cluster view, as a restarted extender builds it: no reservations of an earlier book.
  void restart() {
    view_ = std::make_unique<ClusterView>();
    ASSERT_TRUE(view_->set_hypernodes(cluster_.hypernodes).has_value());
    ASSERT_TRUE(view_->set_nodes(cluster_.nodes).has_value());
    ASSERT_TRUE(view_->set_pods({}).has_value());
    ASSERT_EQ(view_->ensure_index().value(), true);
  }

  std::unique_ptr<GangBook> book() {
    return std::make_unique<GangBook>(BookOptions{.state_file = state_, .clock = clock_}, *view_);
  }

  std::int64_t gpus_used_anywhere() {
    const TopologyIndex& index = view_->index();
    return index.domain_used(index.root(), "nvidia.com/gpu");
  }

  bool set_aside() const {
    for (const auto& e : std::filesystem::directory_iterator(dir_.path()))
      if (e.path().filename().string().starts_with("state.json.corrupt-")) return true;
    return false;
  }

  // Loads the state file into a fresh book; what it said on stderr.
  std::string load(GangBook& b) {
    ::testing::internal::CaptureStderr();
    EXPECT_TRUE(b.load_state().has_value());  // the plans are a cache: start without them
    return ::testing::internal::GetCapturedStderr();
  }

  json gang_pod(int rank, std::map<std::string, std::string> extra = {}) {
    std::map<std::string, std::string> annotations{
        {"hypertopo.io/gang", "g"},
        {"hypertopo.io/gang-size", "3"},
        {"hypertopo.io/network-topology-mode", "hard"},
        {"hypertopo.io/highest-tier-allowed", "1"},
        {"batch.kubernetes.io/job-completion-index", std::to_string(rank)}};
    annotations.merge(extra);
    return pod_object("g-" + std::to_string(rank), "u-" + std::to_string(rank), "8", annotations);
  }

  testing::ExtenderCluster cluster_;
  std::unique_ptr<ClusterView> view_;
  testing::TempDir dir_;
  std::filesystem::path state_ = dir_.path() / "state.json";
  std::shared_ptr<timing::ManualClock> clock_ = std::make_shared<timing::ManualClock>();
};

// A file past the size bound is refused from its size alone (a sparse file: nothing is read), named
// with the bound, set aside as a corrupt one is, and nothing is reserved.
TEST_F(StateFileTest, AnOversizeFileIsRefusedFromItsSizeNamedAndSetAside) {
  { std::ofstream touch(state_); }
  std::filesystem::resize_file(state_, (std::uintmax_t{64} << 20) + 1);
  auto b = book();
  const std::string err = load(*b);
  EXPECT_NE(err.find("state file " + state_.string() + " is 67108865 bytes, over the bound of 64 MiB"),
            std::string::npos)
      << err;
  EXPECT_TRUE(b->plans().empty());
  EXPECT_EQ(b->counters().errors, 1);
  EXPECT_FALSE(std::filesystem::exists(state_));
  EXPECT_TRUE(set_aside());
  ASSERT_TRUE(b->ensure_index().has_value());
  EXPECT_EQ(gpus_used_anywhere(), 0);
}

// Within the bytes, entries of a few bytes each: the slots (then the plans) are counted before any
// of them is built.
TEST_F(StateFileTest, TooManySlotsOrPlansAreRefusedBeforeTheFileIsBuilt) {
  const std::vector<std::pair<std::string, std::string>> files = {
      {[] {
         std::string slots = R"({"key":"ml/g","count":1,"slots":[{})";
         for (int i = 0; i < 250'000; ++i) slots += ",{}";
         return R"({"kind":"ExtenderState","plans":[)" + slots + "]}]}";
       }(),
       "holds more than 250000 slots, over its bound"},
      {[] {
         std::string plans = R"({"kind":"ExtenderState","plans":[{})";
         for (int i = 0; i < 100'000; ++i) plans += ",{}";
         return plans + "]}";
       }(),
       "holds more than 100000 plans, over its bound"},
  };
  for (const auto& [text, message] : files) {
    for (const auto& e : std::filesystem::directory_iterator(dir_.path())) std::filesystem::remove(e.path());
    {
      std::ofstream out(state_);
      out << text;
    }
    auto b = book();
    const std::string err = load(*b);
    EXPECT_NE(err.find("state file " + state_.string() + " " + message), std::string::npos) << err;
    EXPECT_TRUE(b->plans().empty());
    EXPECT_EQ(b->counters().errors, 1);
    EXPECT_TRUE(set_aside());
  }
}

// kubectl apply leaves the whole manifest in last-applied-configuration (env values in clear); other
// tools leave tokens in annotations of their own. The file keeps what the readers read, and the plan
// still comes back whole after a restart.
TEST_F(StateFileTest, OnlyTheAnnotationsTheReadersReadAreWrittenAndThePlanRoundTrips) {
  const std::string applied =
      R"({"apiVersion":"v1","kind":"Pod","spec":{"containers":[{"env":[{"name":"DB_PASSWORD","value":"hunter2-in-clear"}]}]}})";
  const json pod = gang_pod(0, {{"kubectl.kubernetes.io/last-applied-configuration", applied},
                                {"vault.example.com/token", "s.SECRETSECRETSECRET"}});
  std::map<std::string, std::string> planned;
  {
    auto b = book();
    auto plan = b->plan_for(pod, "ml/g");
    ASSERT_TRUE(plan.has_value()) << plan.error().message();
    for (const auto& s : (*plan)->slots) planned[std::to_string(s.rank)] = s.node;
    b->flush_state();
  }
  const std::string text = read_text(state_);
  ASSERT_FALSE(text.empty());
  EXPECT_EQ(text.find("last-applied-configuration"), std::string::npos) << text;
  EXPECT_EQ(text.find("hunter2"), std::string::npos) << text;
  EXPECT_EQ(text.find("SECRETSECRET"), std::string::npos) << text;
  EXPECT_NE(text.find("hypertopo.io/highest-tier-allowed"), std::string::npos) << text;
  EXPECT_NE(text.find("batch.kubernetes.io/job-completion-index"), std::string::npos) << text;

  // A restart: the same plan, on the same nodes, reserved again.
  restart();
  auto b = book();
  EXPECT_EQ(load(*b), "");
  const GangPlan* plan = b->find("ml/g");
  ASSERT_NE(plan, nullptr);
  std::map<std::string, std::string> loaded;
  for (const auto& s : plan->slots) loaded[std::to_string(s.rank)] = s.node;
  EXPECT_EQ(loaded, planned);
  EXPECT_EQ(plan->request.count, 3);
  ASSERT_TRUE(b->ensure_index().has_value());
  EXPECT_EQ(gpus_used_anywhere(), 24);
}

// A file written before the state kept only those annotations still loads, and is written again
// without the others.
TEST_F(StateFileTest, AnOlderFileWithEveryAnnotationLoadsAndIsRewrittenWithoutThem) {
  {
    auto b = book();
    ASSERT_TRUE(b->plan_for(gang_pod(0), "ml/g").has_value());
    b->flush_state();
  }
  restart();
  json doc = json::parse(read_text(state_));
  doc["plans"][0]["pod"]["metadata"]["annotations"]["kubectl.kubernetes.io/last-applied-configuration"] =
      R"({"env":"hunter2-in-clear"})";
  {
    std::ofstream out(state_);
    out << doc.dump();
  }
  auto b = book();
  EXPECT_EQ(load(*b), "");
  ASSERT_NE(b->find("ml/g"), nullptr);
  EXPECT_EQ(b->find("ml/g")->slots.size(), 3u);
  EXPECT_EQ(b->counters().errors, 0);
  b->flush_state();
  const std::string text = read_text(state_);
  EXPECT_EQ(text.find("hunter2"), std::string::npos) << text;
  EXPECT_NE(text.find("\"key\":\"ml/g\""), std::string::npos) << text;
}

}  // namespace
}  // namespace hypertopo::scheduler
