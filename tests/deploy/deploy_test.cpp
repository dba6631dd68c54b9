// Renders every kustomize overlay under deploy/overlays with `kubectl kustomize` and checks the
// objects: kinds present, the ConfigMap is deploy/base/config.yaml byte for byte, RBAC without
// wildcards and with the Secret limited by name, the DaemonSet's hardening, and one image reference.
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "tests/support/fixtures.h"

namespace {

namespace fs = std::filesystem;

const fs::path kDeploy = fs::path(HYPERTOPO_SOURCE_DIR) / "deploy";
const char* kKubectl = "/usr/bin/kubectl";

struct Rendered {
  int rc = -1;
  std::vector<YAML::Node> objects;
  std::string text;
};

Rendered render(const fs::path& overlay) {
  Rendered out;
  const std::string cmd = std::string(kKubectl) + " kustomize " + overlay.string() + " 2>&1";
  FILE* pipe = ::popen(cmd.c_str(), "r");
  if (!pipe) return out;
  std::array<char, 4096> buf{};
  std::size_t n = 0;
  while ((n = std::fread(buf.data(), 1, buf.size(), pipe)) > 0) out.text.append(buf.data(), n);
  out.rc = ::pclose(pipe);
  if (out.rc == 0) {
    for (auto& doc : YAML::LoadAll(out.text)) {
      if (doc.IsMap()) out.objects.push_back(doc);
    }
  }
  return out;
}

std::string read_text(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::vector<YAML::Node> of_kind(const Rendered& r, const std::string& kind) {
  std::vector<YAML::Node> out;
  for (const auto& o : r.objects) {
    if (o["kind"].as<std::string>() == kind) out.push_back(o);
  }
  return out;
}

const YAML::Node* named(const std::vector<YAML::Node>& objs, const std::string& name) {
  for (const auto& o : objs) {
    if (o["metadata"]["name"].as<std::string>() == name) return &o;
  }
  return nullptr;
}

bool has(const YAML::Node& seq, const std::string& value) {
  if (!seq || !seq.IsSequence()) return false;
  for (const auto& v : seq) {
    if (v.as<std::string>() == value) return true;
  }
  return false;
}

class DeployTest : public ::testing::Test {
 protected:
  void SetUp() override {
    HT_REQUIRE(fs::exists(kKubectl), "kubectl (/usr/bin/kubectl) to render the kustomize overlays");
  }
  Rendered overlay(const std::string& name) {
    Rendered r = render(kDeploy / "overlays" / name);
    EXPECT_EQ(r.rc, 0) << name << ":\n" << r.text;
    return r;
  }
};

TEST_F(DeployTest, EveryOverlayRendersWithoutRbacWildcards) {
  std::size_t overlays = 0;
  for (const auto& entry : fs::directory_iterator(kDeploy / "overlays")) {
    if (!fs::exists(entry.path() / "kustomization.yaml")) continue;
    ++overlays;
    Rendered r = overlay(entry.path().filename().string());
    EXPECT_FALSE(r.objects.empty()) << entry.path();
    for (const char* kind : {"ClusterRole", "Role"}) {
      for (const auto& role : of_kind(r, kind)) {
        for (const auto& rule : role["rules"]) {
          for (const char* field : {"verbs", "resources", "apiGroups"}) {
            EXPECT_FALSE(has(rule[field], "*"))
                << entry.path() << " " << role["metadata"]["name"] << " " << field;
          }
          // Secrets only ever by name.
          if (has(rule["resources"], "secrets")) {
            EXPECT_TRUE(rule["resourceNames"] && rule["resourceNames"].size() > 0) << entry.path();
            EXPECT_FALSE(has(rule["verbs"], "list") || has(rule["verbs"], "watch")) << entry.path();
          }
        }
      }
    }
  }
  EXPECT_GE(overlays, 3u);
}

// The one image reference (deploy/base/image): every overlay's workloads run it, the agent
// DaemonSet and the extender alike, and no other hypertopo image is named anywhere.
TEST_F(DeployTest, EveryOverlayRunsTheOneImageReference) {
  const YAML::Node component = YAML::LoadFile((kDeploy / "base" / "image" / "kustomization.yaml").string());
  ASSERT_EQ(component["kind"].as<std::string>(), "Component");
  ASSERT_EQ(component["images"].size(), 1u);
  const YAML::Node entry = component["images"][0];
  EXPECT_EQ(entry["name"].as<std::string>(), "hypertopo");
  const std::string reference = entry["newName"].as<std::string>() + ":" + entry["newTag"].as<std::string>();

  std::set<std::string> kinds_running_it;
  for (const auto& dir : fs::directory_iterator(kDeploy / "overlays")) {
    if (!fs::exists(dir.path() / "kustomization.yaml")) continue;
    Rendered r = overlay(dir.path().filename().string());
    std::size_t running_it = 0;
    for (const auto& o : r.objects) {
      const YAML::Node pod =
          o["spec"] && o["spec"]["template"] ? o["spec"]["template"]["spec"] : YAML::Node();
      if (!pod || !pod.IsMap()) continue;
      for (const char* list : {"initContainers", "containers"}) {
        for (const auto& c : pod[list]) {
          const std::string image = c["image"].as<std::string>();
          if (image == reference) {
            ++running_it;
            kinds_running_it.insert(o["kind"].as<std::string>());
          } else {
            EXPECT_EQ(image.find("hypertopo"), std::string::npos)
                << dir.path() << " " << o["metadata"]["name"] << ": " << image << " is not " << reference;
          }
        }
      }
    }
    EXPECT_GT(running_it, 0u) << dir.path() << " runs no container of " << reference;
  }
  EXPECT_TRUE(kinds_running_it.contains("DaemonSet"));
  EXPECT_TRUE(kinds_running_it.contains("Deployment")) << "the extender runs the agent's image";
}

TEST_F(DeployTest, DefaultOverlayHasEveryPieceAndTheExampleConfig) {
  Rendered r = overlay("default");
  std::set<std::string> kinds;
  for (const auto& o : r.objects) kinds.insert(o["kind"].as<std::string>());
  for (const char* k : {"Namespace", "ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role",
                        "RoleBinding", "CustomResourceDefinition", "DaemonSet", "ConfigMap"}) {
    EXPECT_TRUE(kinds.contains(k)) << k;
  }
  auto crds = of_kind(r, "CustomResourceDefinition");
  ASSERT_NE(named(crds, "nodereports.hypertopo.io"), nullptr);
  EXPECT_EQ((*named(crds, "nodereports.hypertopo.io"))["spec"]["scope"].as<std::string>(), "Namespaced");
  EXPECT_EQ(named(crds, "hypernodes.topology.volcano.sh"), nullptr) << "HyperNode CRD only in its overlay";

  auto maps = of_kind(r, "ConfigMap");
  ASSERT_EQ(maps.size(), 1u);
  EXPECT_EQ(maps[0]["data"]["config.yaml"].as<std::string>(), read_text(kDeploy / "base" / "config.yaml"));

  // Nodes are only read without the node-labels overlay.
  for (const auto& role : of_kind(r, "ClusterRole")) {
    for (const auto& rule : role["rules"]) {
      if (has(rule["resources"], "nodes")) {
        EXPECT_FALSE(has(rule["verbs"], "patch"));
      }
    }
  }
  auto roles = of_kind(r, "Role");
  ASSERT_EQ(roles.size(), 1u);
  EXPECT_EQ(roles[0]["metadata"]["namespace"].as<std::string>(), "hypertopo-system");

  auto ds = of_kind(r, "DaemonSet");
  ASSERT_EQ(ds.size(), 1u);
  const YAML::Node pod = ds[0]["spec"]["template"]["spec"];
  EXPECT_TRUE(pod["securityContext"]["runAsNonRoot"].as<bool>());
  const YAML::Node c = pod["containers"][0];
  EXPECT_TRUE(c["securityContext"]["readOnlyRootFilesystem"].as<bool>());
  EXPECT_FALSE(c["securityContext"]["allowPrivilegeEscalation"].as<bool>());
  EXPECT_TRUE(has(c["securityContext"]["capabilities"]["drop"], "ALL"));
  EXPECT_FALSE(c["securityContext"]["capabilities"]["add"]) << "the probes need no capability";
  EXPECT_FALSE(c["securityContext"]["privileged"] && c["securityContext"]["privileged"].as<bool>());
  EXPECT_EQ(c["args"][0].as<std::string>(), "agent");
  EXPECT_EQ(c["args"][2].as<std::string>(), "/etc/hypertopo/config.yaml");
  EXPECT_EQ(c["livenessProbe"]["httpGet"]["path"].as<std::string>(), "/healthz");
  EXPECT_EQ(c["readinessProbe"]["httpGet"]["path"].as<std::string>(), "/readyz");
  EXPECT_EQ(c["ports"][0]["containerPort"].as<int>(), 8080);
  EXPECT_TRUE(c["resources"]["requests"]["memory"] && c["resources"]["limits"]["memory"]);
  std::set<std::string> env;
  for (const auto& e : c["env"]) env.insert(e["name"].as<std::string>());
  EXPECT_TRUE(env.contains("NODE_NAME") && env.contains("POD_NAME"));
  // Host /sys read-only; the config volume names the generated (hash-suffixed) ConfigMap.
  bool sys_read_only = false;
  for (const auto& m : c["volumeMounts"]) {
    if (m["mountPath"].as<std::string>() == "/host/sys") sys_read_only = m["readOnly"].as<bool>();
  }
  EXPECT_TRUE(sys_read_only);
  bool config_matches = false;
  for (const auto& v : pod["volumes"]) {
    if (v["hostPath"]) {
      EXPECT_EQ(v["hostPath"]["path"].as<std::string>(), "/sys");
    }
    if (v["configMap"])
      config_matches =
          v["configMap"]["name"].as<std::string>() == maps[0]["metadata"]["name"].as<std::string>();
  }
  EXPECT_TRUE(config_matches);
  bool gpu_toleration = false;
  for (const auto& t : pod["tolerations"]) {
    if (t["key"] && t["key"].as<std::string>() == "nvidia.com/gpu") gpu_toleration = true;
  }
  EXPECT_TRUE(gpu_toleration);
}

TEST_F(DeployTest, HyperNodeCrdOverlayAddsAClusterScopedCrdWithStatus) {
  Rendered r = overlay("with-hypernode-crd");
  auto crds = of_kind(r, "CustomResourceDefinition");
  const YAML::Node* hn = named(crds, "hypernodes.topology.volcano.sh");
  ASSERT_NE(hn, nullptr);
  EXPECT_EQ((*hn)["spec"]["scope"].as<std::string>(), "Cluster");
  const YAML::Node v = (*hn)["spec"]["versions"][0];
  EXPECT_EQ(v["name"].as<std::string>(), "v1alpha1");
  EXPECT_TRUE(v["subresources"]["status"].IsDefined());
  const YAML::Node spec = v["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"];
  EXPECT_EQ(spec["tier"]["type"].as<std::string>(), "integer");
  EXPECT_TRUE(has(spec["members"]["items"]["properties"]["type"]["enum"], "HyperNode"));
}

TEST_F(DeployTest, NodeLabelsOverlayGrantsNodePatchAndEnablesExport) {
  Rendered r = overlay("node-labels");
  bool patch_nodes = false;
  for (const auto& role : of_kind(r, "ClusterRole")) {
    for (const auto& rule : role["rules"]) {
      if (has(rule["resources"], "nodes") && has(rule["verbs"], "patch")) patch_nodes = true;
    }
  }
  EXPECT_TRUE(patch_nodes);
  auto ds = of_kind(r, "DaemonSet");
  ASSERT_EQ(ds.size(), 1u);
  bool enabled = false;
  for (const auto& e : ds[0]["spec"]["template"]["spec"]["containers"][0]["env"]) {
    if (e["name"].as<std::string>() == "HYPERTOPO_EXPORT_NODE_LABELS")
      enabled = e["value"].as<std::string>() == "true";
  }
  EXPECT_TRUE(enabled);

  // What the leader does with Nodes, all bound to the agent's service account: list and watch them
  // (the tree's hosts), get and merge-patch their labels. Never update (a PUT would overwrite
  // fields others own) and never delete.
  std::set<std::string> bound_roles;
  for (const auto& b : of_kind(r, "ClusterRoleBinding")) {
    for (const auto& subject : b["subjects"]) {
      if (subject["kind"].as<std::string>() == "ServiceAccount" &&
          subject["name"].as<std::string>() == "hypertopo-agent" &&
          subject["namespace"].as<std::string>() == "hypertopo-system")
        bound_roles.insert(b["roleRef"]["name"].as<std::string>());
    }
  }
  std::set<std::string> node_verbs;
  for (const auto& role : of_kind(r, "ClusterRole")) {
    if (!bound_roles.contains(role["metadata"]["name"].as<std::string>())) continue;
    for (const auto& rule : role["rules"]) {
      if (!has(rule["resources"], "nodes") || !has(rule["apiGroups"], "")) continue;
      for (const auto& v : rule["verbs"]) node_verbs.insert(v.as<std::string>());
    }
  }
  EXPECT_EQ(node_verbs, (std::set<std::string>{"get", "list", "watch", "patch"}));
  // The overlay runs the example config: the environment turns the export on, nothing else changes.
  auto maps = of_kind(r, "ConfigMap");
  ASSERT_EQ(maps.size(), 1u);
  EXPECT_EQ(maps[0]["data"]["config.yaml"].as<std::string>(), read_text(kDeploy / "base" / "config.yaml"));
}

// credentials.secretRef: the agent reads the UFM Secret through the API, so every overlay lets its
// service account `get` exactly that Secret, in its own namespace, and nothing else about Secrets.
TEST_F(DeployTest, TheAgentMayGetOnlyTheUfmSecretAndOnlyInItsNamespace) {
  for (const char* name : {"default", "ufm", "node-labels"}) {
    Rendered r = overlay(name);
    for (const auto& role : of_kind(r, "ClusterRole")) {
      for (const auto& rule : role["rules"]) EXPECT_FALSE(has(rule["resources"], "secrets")) << name;
    }
    std::set<std::string> bound;
    for (const auto& b : of_kind(r, "RoleBinding")) {
      for (const auto& subject : b["subjects"]) {
        if (subject["name"].as<std::string>() == "hypertopo-agent")
          bound.insert(b["roleRef"]["name"].as<std::string>());
      }
    }
    int secret_rules = 0;
    for (const auto& role : of_kind(r, "Role")) {
      for (const auto& rule : role["rules"]) {
        if (!has(rule["resources"], "secrets")) continue;
        ++secret_rules;
        EXPECT_EQ(role["metadata"]["namespace"].as<std::string>(), "hypertopo-system") << name;
        EXPECT_TRUE(bound.contains(role["metadata"]["name"].as<std::string>())) << name;
        ASSERT_EQ(rule["resourceNames"].size(), 1u) << name;
        EXPECT_EQ(rule["resourceNames"][0].as<std::string>(), "hypertopo-ufm-credentials") << name;
        ASSERT_EQ(rule["verbs"].size(), 1u) << name;
        EXPECT_EQ(rule["verbs"][0].as<std::string>(), "get") << name;
      }
    }
    EXPECT_EQ(secret_rules, 1) << name;
  }
  // The ufm overlay's config names that Secret for the secretRef form.
  EXPECT_NE(read_text(kDeploy / "overlays" / "ufm" / "config-ufm.yaml")
                .find("credentials: {secretRef: {name: hypertopo-ufm-credentials}}"),
            std::string::npos);
}

// The extender is a sidecar of its kube-scheduler: both in one pod, the extender on loopback and the
// scheduler calling it there, so no other client can create gang plans.
TEST_F(DeployTest, ExtenderOverlayRunsTheExtenderBesideKubeSchedulerOnLoopback) {
  Rendered r = overlay("extender");
  auto deployments = of_kind(r, "Deployment");
  ASSERT_EQ(deployments.size(), 1u);
  const YAML::Node pod = deployments[0]["spec"]["template"]["spec"];
  std::set<std::string> containers;
  for (const auto& c : pod["containers"]) containers.insert(c["name"].as<std::string>());
  EXPECT_EQ(containers, (std::set<std::string>{"kube-scheduler", "extender"}));
  EXPECT_TRUE(of_kind(r, "Service").empty()) << "nothing outside the pod should reach the extender";
  auto maps = of_kind(r, "ConfigMap");
  const YAML::Node* extender = named(maps, "hypertopo-extender-config");
  const YAML::Node* scheduler = named(maps, "hypertopo-kube-scheduler-config");
  ASSERT_TRUE(extender != nullptr && scheduler != nullptr);
  const YAML::Node extender_config = YAML::Load((*extender)["data"]["extender.yaml"].as<std::string>());
  EXPECT_EQ(extender_config["listen"].as<std::string>(), "127.0.0.1:8888");
  const YAML::Node scheduler_config =
      YAML::Load((*scheduler)["data"]["kube-scheduler-config.yaml"].as<std::string>());
  EXPECT_EQ(scheduler_config["extenders"][0]["urlPrefix"].as<std::string>(),
            "http://127.0.0.1:8888/scheduler");
  // Single pods keep kube-scheduler's own sampling of feasible nodes (no global value); the gang
  // profile offers every feasible node to the extender, so a gang pod's planned node always is.
  EXPECT_FALSE(scheduler_config["percentageOfNodesToScore"].IsDefined());
  std::map<std::string, YAML::Node> profiles;
  for (const YAML::Node& p : scheduler_config["profiles"])
    profiles.emplace(p["schedulerName"].as<std::string>(), p);
  ASSERT_EQ(profiles.size(), 2u);
  ASSERT_TRUE(profiles.contains("hypertopo-scheduler") && profiles.contains("hypertopo-gang-scheduler"));
  EXPECT_FALSE(profiles["hypertopo-scheduler"]["percentageOfNodesToScore"].IsDefined());
  EXPECT_EQ(profiles["hypertopo-gang-scheduler"]["percentageOfNodesToScore"].as<int>(), 100);
}

// UFM from the agent's config alone: the Secret and the CA are mounted read-only where the config
// names them, the config loads as an agent config, and the Secret stays readable by its one name.
TEST_F(DeployTest, UfmOverlayMountsTheCredentialsAndCaReadOnly) {
  Rendered r = overlay("ufm");
  auto ds = of_kind(r, "DaemonSet");
  ASSERT_EQ(ds.size(), 1u);
  const auto pod = ds[0]["spec"]["template"]["spec"];
  std::map<std::string, std::string> secret_of, config_map_of;
  for (const auto& v : pod["volumes"]) {
    if (v["secret"]) secret_of[v["name"].as<std::string>()] = v["secret"]["secretName"].as<std::string>();
    if (v["configMap"]) config_map_of[v["name"].as<std::string>()] = v["configMap"]["name"].as<std::string>();
  }
  EXPECT_EQ(secret_of["ufm-credentials"], "hypertopo-ufm-credentials");
  EXPECT_EQ(config_map_of["ufm-ca"], "hypertopo-ufm-ca");
  std::map<std::string, bool> read_only;
  for (const auto& m : pod["containers"][0]["volumeMounts"]) {
    read_only[m["mountPath"].as<std::string>()] = m["readOnly"] && m["readOnly"].as<bool>();
  }
  EXPECT_TRUE(read_only["/etc/hypertopo/ufm"]);
  EXPECT_TRUE(read_only["/etc/hypertopo/ufm-ca"]);
  auto maps = of_kind(r, "ConfigMap");
  ASSERT_EQ(maps.size(), 1u);
  const std::string config = maps[0]["data"]["config.yaml"].as<std::string>();
  EXPECT_EQ(config, read_text(kDeploy / "overlays" / "ufm" / "config-ufm.yaml"));
  EXPECT_NE(config.find("credentialsDir: /etc/hypertopo/ufm\n"), std::string::npos);
  EXPECT_NE(config.find("caFile: /etc/hypertopo/ufm-ca/ca.crt\n"), std::string::npos);
  bool secret_by_name = false;
  for (const auto& role : of_kind(r, "Role")) {
    for (const auto& rule : role["rules"]) {
      if (has(rule["resources"], "secrets"))
        secret_by_name = has(rule["resourceNames"], "hypertopo-ufm-credentials") && has(rule["verbs"], "get");
    }
  }
  EXPECT_TRUE(secret_by_name);
}

// The live walk (ibnetdisc) goes through the host's umad devices: an overlay whose agent config
// enables it mounts /dev/infiniband and adds CAP_IPC_LOCK, and one that does not grants neither.
TEST_F(DeployTest, AnOverlayThatWalksTheFabricMountsTheUmadDevicesAndNoOtherDoes) {
  std::set<std::string> walking;
  for (const auto& dir : fs::directory_iterator(kDeploy / "overlays")) {
    if (!fs::exists(dir.path() / "kustomization.yaml")) continue;
    const std::string name = dir.path().filename().string();
    Rendered r = overlay(name);
    auto ds = of_kind(r, "DaemonSet");
    if (ds.empty()) continue;  // the extender
    std::string config_text;
    for (const auto& m : of_kind(r, "ConfigMap")) {
      if (m["metadata"]["name"].as<std::string>().starts_with("hypertopo-agent-config"))
        config_text = m["data"]["config.yaml"].as<std::string>();
    }
    ASSERT_FALSE(config_text.empty()) << name;
    const YAML::Node config = YAML::Load(config_text);
    bool walks = false;
    for (const auto& source : config["sources"]) {
      if (source["kind"].as<std::string>() == "ibnetdisc" &&
          (!source["enabled"] || source["enabled"].as<bool>()))
        walks = true;
    }
    const YAML::Node pod = ds[0]["spec"]["template"]["spec"];
    const YAML::Node c = pod["containers"][0];
    bool device_mounted = false;
    for (const auto& m : c["volumeMounts"]) {
      if (m["mountPath"].as<std::string>() != "/dev/infiniband") continue;
      for (const auto& v : pod["volumes"]) {
        if (v["name"].as<std::string>() == m["name"].as<std::string>() && v["hostPath"])
          device_mounted = v["hostPath"]["path"].as<std::string>() == "/dev/infiniband";
      }
    }
    const bool ipc_lock = has(c["securityContext"]["capabilities"]["add"], "IPC_LOCK");
    EXPECT_EQ(device_mounted, walks) << name
                                     << (walks ? " walks without the umad devices" : " mounts them unused");
    EXPECT_EQ(ipc_lock, walks) << name;
    EXPECT_TRUE(has(c["securityContext"]["capabilities"]["drop"], "ALL")) << name;
    EXPECT_TRUE(c["securityContext"]["readOnlyRootFilesystem"].as<bool>()) << name;
    if (walks) walking.insert(name);
  }
  EXPECT_EQ(walking, (std::set<std::string>{"ib-walk"}));
}

}  // namespace

// The README shows the one example config; it must be the file the ConfigMap is built from.
TEST(DeployReadme, ShowsTheExampleConfigVerbatim) {
  std::ifstream readme_in(fs::path(HYPERTOPO_SOURCE_DIR) / "README.md");
  std::ifstream config_in(kDeploy / "base" / "config.yaml");
  ASSERT_TRUE(readme_in && config_in);
  std::stringstream readme, config;
  readme << readme_in.rdbuf();
  config << config_in.rdbuf();
  ASSERT_FALSE(config.str().empty());
  EXPECT_NE(readme.str().find("```yaml\n" + config.str() + "```\n"), std::string::npos)
      << "README.md does not show deploy/base/config.yaml verbatim in a ```yaml block";
}
