// The leader's Node view: what it keeps of a Node (labels, the two annotations it reads, name, uid,
// resourceVersion; nothing of status or managedFields), which changes call for a rebuild, that a
// NodeList page and a watch event read alike, that a relist drops what is gone, that the pool
// gives interned strings back, and the Node list the pipeline gets from it.
#include "agent/runtime/node_view.h"

#include <gtest/gtest.h>

#include "io/json_view.h"

namespace hypertopo::agent {
namespace {

using json = nlohmann::json;

const NodeLabelExportOptions kOn{.enabled = true, .labels = {}};

json node(const std::string& name, json labels, json annotations = json::object(),
          const std::string& rv = "1") {
  json n = {{"apiVersion", "v1"},
            {"kind", "Node"},
            {"metadata",
             {{"name", name},
              {"uid", "uid-" + name},
              {"resourceVersion", rv},
              {"labels", std::move(labels)},
              {"managedFields",
               json::array({{{"manager", "kubelet"}, {"fieldsV1", {{"f:status", json::object()}}}}})}}},
            {"status",
             {{"conditions", json::array({{{"type", "Ready"}, {"status", "True"}}})},
              {"images", json::array({{{"names", {"nvcr.io/nvidia/pytorch:24.01"}}, {"sizeBytes", 1}}})}}}};
  if (!annotations.empty()) n["metadata"]["annotations"] = std::move(annotations);
  return n;
}

bool put(NodeView& view, const json& object) { return view.apply(io::NlohmannView(object), kOn); }

TEST(NodeView, KeepsLabelsAndTheAnnotationsItReadsOnly) {
  NodeView view;
  EXPECT_TRUE(put(view, node("gpu-1", {{"rack", "r1"}, {"nvidia.com/gpu.present", "true"}},
                             {{"hypertopo.io/ib-port-guids", "0x11,0x12"},
                              {"hypertopo.io/exported-labels", "hypertopo.io/tier-1"},
                              {"nfd.node.kubernetes.io/feature-labels", "cpu-cpuid.AVX512F"}})));
  const NodeRecord* r = view.find("gpu-1");
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->uid, "uid-gpu-1");
  EXPECT_EQ(r->resource_version, "1");
  EXPECT_EQ(NodeView::labels_of(*r), (LabelMap{{"nvidia.com/gpu.present", "true"}, {"rack", "r1"}}));
  ASSERT_NE(r->guid_annotation, nullptr);
  EXPECT_EQ(*r->guid_annotation, "0x11,0x12");
  ASSERT_NE(r->exported_annotation, nullptr);
  EXPECT_EQ(*r->exported_annotation, "hypertopo.io/tier-1");
}

TEST(NodeView, OnlyChangesTheLeaderReadsAskForARebuild) {
  NodeView view;
  ASSERT_TRUE(put(view, node("gpu-1", {{"rack", "r1"}})));
  // The export's own patch coming back: our key, the ownership annotation, a new resourceVersion.
  EXPECT_FALSE(put(view, node("gpu-1", {{"rack", "r1"}, {"hypertopo.io/tier-1", "leaf-a"}},
                              {{"hypertopo.io/exported-labels", "hypertopo.io/tier-1"}}, "2")));
  EXPECT_EQ(view.find("gpu-1")->resource_version, "2");
  // A status heartbeat: nothing the leader reads.
  json heartbeat = node("gpu-1", {{"rack", "r1"}, {"hypertopo.io/tier-1", "leaf-a"}},
                        {{"hypertopo.io/exported-labels", "hypertopo.io/tier-1"}}, "3");
  heartbeat["status"]["conditions"][0]["status"] = "False";
  EXPECT_FALSE(put(view, heartbeat));
  // Another controller's label, and the GUID annotation: both may change the tree.
  EXPECT_TRUE(put(view, node("gpu-1", {{"rack", "r2"}, {"hypertopo.io/tier-1", "leaf-a"}},
                             {{"hypertopo.io/exported-labels", "hypertopo.io/tier-1"}}, "4")));
  EXPECT_TRUE(put(view, node("gpu-1", {{"rack", "r2"}, {"hypertopo.io/tier-1", "leaf-a"}},
                             {{"hypertopo.io/exported-labels", "hypertopo.io/tier-1"},
                              {"hypertopo.io/ib-port-guids", "0x21"}},
                             "5")));
  // The Node deleted and made again under the same name.
  json again = node(
      "gpu-1", {{"rack", "r2"}, {"hypertopo.io/tier-1", "leaf-a"}},
      {{"hypertopo.io/exported-labels", "hypertopo.io/tier-1"}, {"hypertopo.io/ib-port-guids", "0x21"}}, "6");
  again["metadata"]["uid"] = "uid-new";
  EXPECT_TRUE(put(view, again));
  EXPECT_TRUE(view.erase("gpu-1"));
  EXPECT_FALSE(view.erase("gpu-1"));
}

TEST(NodeView, APageAndAWatchEventReadAlikeAndARelistDropsWhatIsGone) {
  NodeView paged, watched;
  const json a = node("gpu-1", {{"rack", "r1"}, {"team", "a"}}, {{"hypertopo.io/ib-port-guids", "0x11"}});
  const json b = node("gpu-2", {{"rack", "r1"}});
  std::string page = json{{"kind", "NodeList"}, {"items", json::array({a, b})}}.dump();
  ASSERT_TRUE(put(watched, a));
  ASSERT_TRUE(put(watched, b));
  ASSERT_TRUE(put(paged, node("gone-1", {{"rack", "r9"}})));
  paged.begin_relist();
  auto read = paged.apply_page(page, kOn);
  ASSERT_TRUE(read) << read.error().message();
  EXPECT_EQ(*read, 2u);
  EXPECT_EQ(paged.end_relist(), 1u);
  ASSERT_EQ(paged.size(), 2u);
  for (const auto& name : {"gpu-1", "gpu-2"}) {
    EXPECT_EQ(NodeView::labels_of(*paged.find(name)), NodeView::labels_of(*watched.find(name))) << name;
    EXPECT_EQ(paged.find(name)->uid, watched.find(name)->uid);
  }
  EXPECT_EQ(*paged.find("gpu-1")->guid_annotation, "0x11");
  std::string bad = "{\"items\": 3}";
  EXPECT_FALSE(paged.apply_page(bad, kOn));
}

TEST(NodeView, InternedStringsAreSharedAndGivenBack) {
  NodeView view;
  for (int i = 0; i < 50; ++i)
    put(view, node("gpu-" + std::to_string(i),
                   {{"rack", "r1"}, {"kubernetes.io/hostname", "gpu-" + std::to_string(i)}}));
  // "rack", "r1", "kubernetes.io/hostname" and 50 host names.
  EXPECT_EQ(view.pooled_strings(), 53u);
  for (int i = 0; i < 50; ++i) view.erase("gpu-" + std::to_string(i));
  EXPECT_EQ(view.pooled_strings(), 0u);
}

TEST(NodeView, TheNodeListHoldsTheSelectedNodesAndTheLabelsAsked) {
  NodeView view;
  put(view, node("gpu-1", {{"nvidia.com/gpu.present", "true"}, {"rack", "r1"}, {"team", "a"}},
                 {{"hypertopo.io/ib-port-guids", "0x11"}}));
  put(view, node("cpu-1", {{"rack", "r1"}}));
  auto list = view.node_list({{"nvidia.com/gpu.present", "true"}}, std::set<std::string>{"rack"});
  ASSERT_EQ(list.items.size(), 1u);
  EXPECT_EQ(list.items[0].name, "gpu-1");
  EXPECT_EQ(list.items[0].labels, (LabelMap{{"rack", "r1"}}));
  EXPECT_EQ(list.items[0].annotations.at("hypertopo.io/ib-port-guids"), "0x11");
  auto all = view.node_list({}, std::nullopt);
  ASSERT_EQ(all.items.size(), 2u);
  EXPECT_EQ(all.items[1].labels.size(), 3u);  // gpu-1, every label
}

TEST(NodeView, TheLabelPlanReadsTheViewAsTheExportWouldTheObjects) {
  NodeView view;
  std::map<std::string, json> objects;
  const json a = node("gpu-1", {{"team", "a"}});
  const json b = node("gpu-2", {{"hypertopo.io/tier-1", "leaf-old"}, {"hypertopo.io/tier-2", "spine"}},
                      {{"hypertopo.io/exported-labels", "hypertopo.io/tier-1,hypertopo.io/tier-2"}});
  const json c = node("cpu-1", {{"hypertopo.io/tier-1", "leaf-x"}});
  for (const json& n : std::vector<json>{a, b, c}) {
    put(view, n);
    objects[n["metadata"]["name"]] = n;
  }
  const std::map<std::string, LabelMap> desired = {{"gpu-1", {{"hypertopo.io/tier-1", "leaf-a"}}},
                                                   {"gpu-2", {{"hypertopo.io/tier-1", "leaf-b"}}}};
  const auto from_view = plan_node_labels(view, &desired, kOn, true);
  // The same over whole objects: the JSON export planner, whose patches the unit tests pin.
  NodeLabelPlan from_objects;
  for (const auto& [name, object] : objects) {
    auto it = desired.find(name);
    auto patch = node_export_patch(object, it == desired.end() ? LabelMap{} : it->second, kOn, true);
    if (patch) from_objects.writes.push_back({name, *patch, ""});
  }
  ASSERT_EQ(from_view.writes.size(), from_objects.writes.size());
  for (std::size_t i = 0; i < from_view.writes.size(); ++i) {
    EXPECT_EQ(from_view.writes[i].node, from_objects.writes[i].node);
    EXPECT_EQ(from_view.writes[i].patch, from_objects.writes[i].patch) << from_view.writes[i].node;
  }
  EXPECT_EQ(from_view.writes.size(), 3u);
  // Taken away (desired null): every key of ours goes, the annotation with them.
  const auto off = plan_node_labels(view, nullptr, kOn, true);
  ASSERT_EQ(off.writes.size(), 2u);
  EXPECT_EQ(off.writes[1].patch["metadata"]["labels"]["hypertopo.io/tier-2"], nullptr);
}

}  // namespace
}  // namespace hypertopo::agent
