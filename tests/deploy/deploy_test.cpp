// Renders every kustomize overlay under deploy/overlays with `kubectl kustomize` and checks the
// objects: kinds present, the ConfigMap is deploy/base/config.yaml byte for byte, RBAC without
// wildcards and with the Secret limited by name, the node DaemonSet's hardening, the split into a
// node DaemonSet and a leader Deployment (only the leader holds credentials and devices; both serve
// their endpoints on the pod's IP, from the downward API), each
// namespace's Pod Security level against its pods, and one image reference. Every overlay's agent
// config is run through `hypertopo agent --role node|leader --check`.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "tests/support/fixtures.h"

namespace {

namespace fs = std::filesystem;
using hypertopo::testing::TempDir;
using hypertopo::testing::write_text;

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

// A pointer into `objs`, which must outlive it (the rvalue overload is deleted).
const YAML::Node* named(std::vector<YAML::Node>&& objs, const std::string& name) = delete;
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

// "agent --role node --config ..." : a container's args, space-separated.
std::string args_of(const YAML::Node& container) {
  std::string out;
  for (const auto& a : container["args"]) out += (out.empty() ? "" : " ") + a.as<std::string>();
  return out;
}

// Where the first container's $(POD_IP) comes from: the fieldPath of its POD_IP env entry, "" when
// none. Kubernetes expands $(POD_IP) in args only from an env entry defined before use. The pod must
// not use hostNetwork, or the pod's IP would be the node's; that is reported as "hostNetwork".
std::string pod_ip_source(const YAML::Node& pod) {
  if (pod["hostNetwork"] && pod["hostNetwork"].as<bool>()) return "hostNetwork";
  for (const auto& e : pod["containers"][0]["env"]) {
    if (e["name"].as<std::string>() == "POD_IP" && e["valueFrom"]["fieldRef"])
      return e["valueFrom"]["fieldRef"]["fieldPath"].as<std::string>();
  }
  return "";
}

// The volumes of a node DaemonSet beyond what its probes need (the config, the host's /sys, its
// scratch directory): "" when none, else their names. Credentials, CAs and devices are the leader's.
std::string volumes_beyond_the_node_probes(const YAML::Node& daemonset) {
  std::string extra;
  for (const auto& v : daemonset["spec"]["template"]["spec"]["volumes"]) {
    const bool probes_need =
        (v["configMap"] && v["configMap"]["name"].as<std::string>().starts_with("hypertopo-agent-config")) ||
        (v["hostPath"] && v["hostPath"]["path"].as<std::string>() == "/sys") || v["emptyDir"];
    if (!probes_need) extra += (extra.empty() ? "" : " ") + v["name"].as<std::string>();
  }
  return extra;
}

// The Pod Security Standards (https://kubernetes.io/docs/concepts/security/pod-security-standards/),
// the checks Kubernetes' admission makes (kubernetes/pod-security-admission, policy/check_*.go) that
// our pods could fail: "" when `pod` meets `level` (0 privileged, 1 baseline, 2 restricted), else
// the first failure.
std::string pod_security_violation(const YAML::Node& pod, int level) {
  if (level == 0) return "";  // privileged: no restriction
  for (const char* host : {"hostNetwork", "hostPID", "hostIPC"}) {
    if (pod[host] && pod[host].as<bool>()) return host;
  }
  static const std::set<std::string> kBaselineCaps = {
      "AUDIT_WRITE",      "CHOWN",   "DAC_OVERRIDE", "FOWNER",  "FSETID", "KILL",      "MKNOD",
      "NET_BIND_SERVICE", "SETFCAP", "SETGID",       "SETPCAP", "SETUID", "SYS_CHROOT"};
  for (const auto& v : pod["volumes"]) {
    if (v["hostPath"]) return "hostPath volume " + v["name"].as<std::string>();
    if (level >= 2) {
      bool allowed = false;
      for (const char* type : {"configMap", "csi", "downwardAPI", "emptyDir", "ephemeral",
                               "persistentVolumeClaim", "projected", "secret"})
        allowed = allowed || v[type].IsDefined();
      if (!allowed) return "volume type of " + v["name"].as<std::string>();
    }
  }
  const YAML::Node pod_sc = pod["securityContext"];
  for (const char* list : {"initContainers", "containers"}) {
    for (const auto& c : pod[list]) {
      const std::string who = c["name"].as<std::string>() + ": ";
      const YAML::Node sc = c["securityContext"];
      if (sc["privileged"] && sc["privileged"].as<bool>()) return who + "privileged";
      for (const auto& port : c["ports"]) {
        if (port["hostPort"] && port["hostPort"].as<int>() != 0) return who + "hostPort";
      }
      for (const auto& cap : sc["capabilities"]["add"]) {
        const std::string name = cap.as<std::string>();
        if (!kBaselineCaps.contains(name)) return who + "capability " + name;
        if (level >= 2 && name != "NET_BIND_SERVICE") return who + "capability " + name;
      }
      if (level < 2) continue;
      if (!sc["allowPrivilegeEscalation"] || sc["allowPrivilegeEscalation"].as<bool>())
        return who + "allowPrivilegeEscalation not false";
      if (!has(sc["capabilities"]["drop"], "ALL")) return who + "capabilities not dropping ALL";
      const YAML::Node non_root = sc["runAsNonRoot"] ? sc["runAsNonRoot"] : pod_sc["runAsNonRoot"];
      if (!non_root || !non_root.as<bool>()) return who + "runAsNonRoot not true";
      const YAML::Node user = sc["runAsUser"] ? sc["runAsUser"] : pod_sc["runAsUser"];
      if (user && user.as<long>() == 0) return who + "runAsUser 0";
      const YAML::Node seccomp = sc["seccompProfile"] ? sc["seccompProfile"] : pod_sc["seccompProfile"];
      const std::string type = seccomp ? seccomp["type"].as<std::string>("") : "";
      if (type != "RuntimeDefault" && type != "Localhost") return who + "seccompProfile not RuntimeDefault";
    }
  }
  return "";
}

// A command's combined output and exit status.
std::pair<std::string, int> run(const std::string& command) {
  std::string out;
  FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) return {"", -1};
  std::array<char, 4096> buf{};
  for (std::size_t n; (n = std::fread(buf.data(), 1, buf.size(), pipe)) > 0;) out.append(buf.data(), n);
  const int status = ::pclose(pipe);
  return {out, WIFEXITED(status) ? WEXITSTATUS(status) : -1};
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
  ASSERT_EQ(roles.size(), 2u);
  for (const auto& role : roles)
    EXPECT_EQ(role["metadata"]["namespace"].as<std::string>(), "hypertopo-system");

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
  EXPECT_EQ(args_of(c), "agent --role node --config /etc/hypertopo/config.yaml --http-address=$(POD_IP)");
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
  // The export is on in the leader, which alone writes Nodes; the node DaemonSet does not know of it.
  auto export_enabled = [](const YAML::Node& workload) {
    for (const auto& e : workload["spec"]["template"]["spec"]["containers"][0]["env"]) {
      if (e["name"].as<std::string>() == "HYPERTOPO_EXPORT_NODE_LABELS")
        return e["value"].as<std::string>() == "true";
    }
    return false;
  };
  const auto deployments = of_kind(r, "Deployment");
  const auto daemonsets = of_kind(r, "DaemonSet");
  ASSERT_NE(named(deployments, "hypertopo-leader"), nullptr);
  EXPECT_TRUE(export_enabled(*named(deployments, "hypertopo-leader")));
  ASSERT_NE(named(daemonsets, "hypertopo-node"), nullptr);
  EXPECT_FALSE(export_enabled(*named(daemonsets, "hypertopo-node")));

  // What the leader does with Nodes, all bound to the leader's service account: list and watch them
  // (the tree's hosts), get and merge-patch their labels. Never update (a PUT would overwrite
  // fields others own) and never delete.
  std::set<std::string> bound_roles;
  for (const auto& b : of_kind(r, "ClusterRoleBinding")) {
    for (const auto& subject : b["subjects"]) {
      if (subject["kind"].as<std::string>() == "ServiceAccount" &&
          subject["name"].as<std::string>() == "hypertopo-leader" &&
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

// credentials.secretRef: the leader reads the UFM Secret through the API, so every overlay lets the
// leader's service account `get` exactly that Secret, in its own namespace, and nothing else about
// Secrets; the node DaemonSet's account is bound to no rule about Secrets at all.
TEST_F(DeployTest, OnlyTheLeaderMayGetOnlyTheUfmSecretAndOnlyInItsNamespace) {
  for (const char* name : {"default", "ufm", "node-labels", "labels", "ib-walk"}) {
    Rendered r = overlay(name);
    for (const auto& role : of_kind(r, "ClusterRole")) {
      for (const auto& rule : role["rules"]) EXPECT_FALSE(has(rule["resources"], "secrets")) << name;
    }
    std::set<std::string> bound, node_bound;
    for (const auto& b : of_kind(r, "RoleBinding")) {
      for (const auto& subject : b["subjects"]) {
        if (subject["name"].as<std::string>() == "hypertopo-leader")
          bound.insert(b["roleRef"]["name"].as<std::string>());
        if (subject["name"].as<std::string>() == "hypertopo-node")
          node_bound.insert(b["roleRef"]["name"].as<std::string>());
      }
    }
    int secret_rules = 0;
    for (const auto& role : of_kind(r, "Role")) {
      for (const auto& rule : role["rules"]) {
        if (!has(rule["resources"], "secrets")) continue;
        ++secret_rules;
        EXPECT_EQ(role["metadata"]["namespace"].as<std::string>(), "hypertopo-system") << name;
        EXPECT_TRUE(bound.contains(role["metadata"]["name"].as<std::string>())) << name;
        EXPECT_FALSE(node_bound.contains(role["metadata"]["name"].as<std::string>())) << name;
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

// Two replicas of kube-scheduler with its extender, on two nodes, one scheduling at a time through
// kube-scheduler's leader election on a Lease of its own, with just the RBAC that election needs:
// get and update on that one Lease (system:kube-scheduler grants them on kube-system/kube-scheduler
// only) and create, in the extender's namespace alone.
TEST_F(DeployTest, ExtenderOverlayRunsTwoReplicasOnTwoNodesThatFailOverThroughALease) {
  Rendered r = overlay("extender");
  auto deployments = of_kind(r, "Deployment");
  ASSERT_EQ(deployments.size(), 1u);
  const YAML::Node d = deployments[0];
  const std::string ns = d["metadata"]["namespace"].as<std::string>();
  EXPECT_EQ(d["spec"]["replicas"].as<int>(), 2);
  EXPECT_EQ(d["spec"]["strategy"]["type"].as<std::string>(), "RollingUpdate");
  EXPECT_EQ(d["spec"]["strategy"]["rollingUpdate"]["maxSurge"].as<int>(), 0);
  EXPECT_EQ(d["spec"]["strategy"]["rollingUpdate"]["maxUnavailable"].as<int>(), 1);
  const YAML::Node labels = d["spec"]["template"]["metadata"]["labels"];
  auto selects_the_pods = [&](const YAML::Node& match) {
    if (!match.IsMap() || match.size() == 0) return false;
    for (const auto& kv : match) {
      const YAML::Node v = labels[kv.first.as<std::string>()];
      if (!v.IsDefined() || v.as<std::string>() != kv.second.as<std::string>()) return false;
    }
    return true;
  };
  const YAML::Node pod = d["spec"]["template"]["spec"];
  const YAML::Node anti =
      pod["affinity"]["podAntiAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"];
  ASSERT_TRUE(anti.IsSequence() && anti.size() == 1) << "the two replicas must land on different nodes";
  EXPECT_EQ(anti[0]["topologyKey"].as<std::string>(), "kubernetes.io/hostname");
  EXPECT_TRUE(selects_the_pods(anti[0]["labelSelector"]["matchLabels"]));
  auto budgets = of_kind(r, "PodDisruptionBudget");
  ASSERT_EQ(budgets.size(), 1u);
  EXPECT_EQ(budgets[0]["spec"]["minAvailable"].as<int>(), 1);
  EXPECT_TRUE(selects_the_pods(budgets[0]["spec"]["selector"]["matchLabels"]));

  const auto maps = of_kind(r, "ConfigMap");
  const YAML::Node* scheduler = named(maps, "hypertopo-kube-scheduler-config");
  ASSERT_NE(scheduler, nullptr);
  const YAML::Node election =
      YAML::Load((*scheduler)["data"]["kube-scheduler-config.yaml"].as<std::string>())["leaderElection"];
  EXPECT_TRUE(election["leaderElect"].as<bool>());
  EXPECT_EQ(election["resourceLock"].as<std::string>(), "leases");
  EXPECT_EQ(election["resourceNamespace"].as<std::string>(), ns);
  const std::string lease = election["resourceName"].as<std::string>();
  EXPECT_EQ(lease, "hypertopo-scheduler");

  // The Roles bound to the pods' service account in that namespace: get and update on that Lease
  // by name, create on Leases (which no name can limit), nothing else about Leases.
  const std::string account = pod["serviceAccountName"].as<std::string>();
  std::set<std::string> bound_roles;
  for (const auto& b : of_kind(r, "RoleBinding")) {
    if (b["metadata"]["namespace"].as<std::string>() != ns) continue;
    for (const auto& subject : b["subjects"]) {
      if (subject["kind"].as<std::string>() == "ServiceAccount" &&
          subject["name"].as<std::string>() == account && subject["namespace"].as<std::string>() == ns &&
          b["roleRef"]["kind"].as<std::string>() == "Role")
        bound_roles.insert(b["roleRef"]["name"].as<std::string>());
    }
  }
  std::set<std::string> named_verbs, unnamed_verbs;
  for (const auto& role : of_kind(r, "Role")) {
    if (role["metadata"]["namespace"].as<std::string>() != ns ||
        !bound_roles.contains(role["metadata"]["name"].as<std::string>()))
      continue;
    for (const auto& rule : role["rules"]) {
      bool leases = false;
      for (const auto& g : rule["apiGroups"]) leases = leases || g.as<std::string>() == "coordination.k8s.io";
      if (!leases) continue;
      ASSERT_EQ(rule["resources"].size(), 1u);
      EXPECT_EQ(rule["resources"][0].as<std::string>(), "leases");
      std::set<std::string>& verbs = rule["resourceNames"].IsDefined() ? named_verbs : unnamed_verbs;
      if (rule["resourceNames"].IsDefined()) {
        ASSERT_EQ(rule["resourceNames"].size(), 1u);
        EXPECT_EQ(rule["resourceNames"][0].as<std::string>(), lease);
      }
      for (const auto& v : rule["verbs"]) verbs.insert(v.as<std::string>());
    }
  }
  EXPECT_EQ(named_verbs, (std::set<std::string>{"get", "update"}));
  EXPECT_EQ(unnamed_verbs, (std::set<std::string>{"create"}));
  // No ClusterRole of the overlay grants Leases: the election stays in its namespace.
  for (const auto& role : of_kind(r, "ClusterRole")) {
    for (const auto& rule : role["rules"]) {
      for (const auto& g : rule["apiGroups"])
        EXPECT_NE(g.as<std::string>(), "coordination.k8s.io") << role["metadata"]["name"].as<std::string>();
    }
  }
}

// kube-scheduler starts only once the extender's view is filled: the kubelet starts containers in
// order and holds the next one until the previous one's postStart hook returns, so the extender comes
// first with a hook that waits (bounded) for its /readyz. Its probes are exec probes (--check): the
// loopback listener is out of reach of a kubelet httpGet probe, which goes to the pod IP.
TEST_F(DeployTest, ExtenderOverlayStartsKubeSchedulerOnlyOnceTheExtenderIsReady) {
  Rendered r = overlay("extender");
  auto deployments = of_kind(r, "Deployment");
  ASSERT_EQ(deployments.size(), 1u);
  const YAML::Node containers = deployments[0]["spec"]["template"]["spec"]["containers"];
  ASSERT_EQ(containers.size(), 2u);
  EXPECT_EQ(containers[0]["name"].as<std::string>(), "extender");
  EXPECT_EQ(containers[1]["name"].as<std::string>(), "kube-scheduler");
  const YAML::Node extender = containers[0];
  auto command = [](const YAML::Node& exec) {
    std::vector<std::string> out;
    for (const auto& a : exec["command"]) out.push_back(a.as<std::string>());
    return out;
  };
  const std::vector<std::string> check = {"hypertopo", "extender", "--config", "/etc/hypertopo/extender.yaml",
                                          "--check"};
  auto checks = [&](const std::vector<std::string>& cmd, const std::string& path) {
    return cmd.size() >= check.size() + 1 && std::equal(check.begin(), check.end(), cmd.begin()) &&
           cmd[check.size()] == path;
  };
  const std::vector<std::string> hook = command(extender["lifecycle"]["postStart"]["exec"]);
  EXPECT_TRUE(checks(hook, "/readyz")) << ::testing::PrintToString(hook);
  auto wait = std::find(hook.begin(), hook.end(), "--wait");
  ASSERT_TRUE(wait != hook.end() && wait + 1 != hook.end()) << "the hook must wait, not probe once";
  const int seconds = std::stoi(*(wait + 1));
  EXPECT_GE(seconds, 15) << "the first lists take up to 15 s at 20,000 Nodes";
  EXPECT_LE(seconds, 120) << "a hook that never returns holds the pod forever";
  EXPECT_TRUE(checks(command(extender["readinessProbe"]["exec"]), "/readyz"));
  EXPECT_TRUE(checks(command(extender["livenessProbe"]["exec"]), "/healthz"));
  EXPECT_FALSE(extender["readinessProbe"]["httpGet"].IsDefined());
  EXPECT_FALSE(extender["livenessProbe"]["httpGet"].IsDefined());
  // The probes read the listener from the config the extender runs with.
  std::vector<std::string> args;
  for (const auto& a : extender["args"]) args.push_back(a.as<std::string>());
  EXPECT_EQ(args, (std::vector<std::string>{"extender", "--config", "/etc/hypertopo/extender.yaml"}));
}

// UFM from the agent's config alone: the Secret and the CA are mounted read-only in the leader
// Deployment where the config names them, never in the node DaemonSet; the config loads as an agent
// config, and the Secret stays readable by its one name.
TEST_F(DeployTest, UfmOverlayMountsTheCredentialsAndCaReadOnlyInTheLeaderOnly) {
  Rendered r = overlay("ufm");
  const auto deployments = of_kind(r, "Deployment");
  const YAML::Node* leader = named(deployments, "hypertopo-leader");
  ASSERT_NE(leader, nullptr);
  const auto pod = (*leader)["spec"]["template"]["spec"];
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
  auto ds = of_kind(r, "DaemonSet");
  ASSERT_EQ(ds.size(), 1u);
  EXPECT_EQ(volumes_beyond_the_node_probes(ds[0]), "");
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

// node-feature-discovery's split (nfd-worker DaemonSet, nfd-master Deployment), in every overlay
// that deploys the agent: the DaemonSet runs `--role node` with the node probes' mounts and nothing
// more; the leader Deployment runs `--role leader` in two replicas, under its own service account.
// The node account may read and write NodeReports and nothing else; the Lease, HyperNodes, Nodes,
// Events and Secrets are the leader's.
TEST_F(DeployTest, EveryAgentOverlaySplitsANodeDaemonSetFromATwoReplicaLeader) {
  std::set<std::string> agent_overlays;
  for (const auto& dir : fs::directory_iterator(kDeploy / "overlays")) {
    if (!fs::exists(dir.path() / "kustomization.yaml")) continue;
    const std::string name = dir.path().filename().string();
    Rendered r = overlay(name);
    auto daemonsets = of_kind(r, "DaemonSet");
    auto deployments = of_kind(r, "Deployment");
    const YAML::Node* leader = named(deployments, "hypertopo-leader");
    if (daemonsets.empty() && leader == nullptr) continue;  // the extender
    agent_overlays.insert(name);
    ASSERT_EQ(daemonsets.size(), 1u) << name;
    ASSERT_NE(leader, nullptr) << name;
    const YAML::Node node_pod = daemonsets[0]["spec"]["template"]["spec"];
    const YAML::Node leader_pod = (*leader)["spec"]["template"]["spec"];
    EXPECT_EQ(args_of(node_pod["containers"][0]),
              "agent --role node --config /etc/hypertopo/config.yaml --http-address=$(POD_IP)")
        << name;
    EXPECT_EQ(args_of(leader_pod["containers"][0]),
              "agent --role leader --config /etc/hypertopo/config.yaml --http-address=$(POD_IP)")
        << name;
    EXPECT_EQ(pod_ip_source(node_pod), "status.podIP") << name;
    EXPECT_EQ(pod_ip_source(leader_pod), "status.podIP") << name;
    EXPECT_EQ((*leader)["spec"]["replicas"].as<int>(), 2) << name;
    EXPECT_EQ(volumes_beyond_the_node_probes(daemonsets[0]), "") << name;
    // Both read the one generated config.
    std::string node_config, leader_config;
    for (const auto& v : node_pod["volumes"])
      if (v["configMap"]) node_config = v["configMap"]["name"].as<std::string>();
    for (const auto& v : leader_pod["volumes"])
      if (v["name"].as<std::string>() == "config") leader_config = v["configMap"]["name"].as<std::string>();
    EXPECT_TRUE(node_config.starts_with("hypertopo-agent-config")) << name;
    EXPECT_EQ(node_config, leader_config) << name;
    // The leader mounts nothing of the host but the umad devices where it walks.
    for (const auto& v : leader_pod["volumes"]) {
      if (v["hostPath"]) {
        EXPECT_EQ(v["hostPath"]["path"].as<std::string>(), "/dev/infiniband") << name;
      }
    }

    const std::string node_sa = node_pod["serviceAccountName"].as<std::string>();
    const std::string leader_sa = leader_pod["serviceAccountName"].as<std::string>();
    EXPECT_NE(node_sa, leader_sa) << name;
    // Every resource the node account may touch, by every binding that names it.
    std::set<std::string> bound;
    for (const char* kind : {"RoleBinding", "ClusterRoleBinding"}) {
      for (const auto& b : of_kind(r, kind)) {
        for (const auto& subject : b["subjects"]) {
          if (subject["name"].as<std::string>() == node_sa)
            bound.insert(b["roleRef"]["kind"].as<std::string>() + "/" +
                         b["roleRef"]["name"].as<std::string>());
        }
      }
    }
    std::set<std::string> node_resources, node_verbs;
    for (const char* kind : {"Role", "ClusterRole"}) {
      for (const auto& role : of_kind(r, kind)) {
        if (!bound.contains(std::string(kind) + "/" + role["metadata"]["name"].as<std::string>())) continue;
        for (const auto& rule : role["rules"]) {
          for (const auto& res : rule["resources"]) node_resources.insert(res.as<std::string>());
          for (const auto& verb : rule["verbs"]) node_verbs.insert(verb.as<std::string>());
        }
      }
    }
    EXPECT_EQ(node_resources, (std::set<std::string>{"nodereports"})) << name;
    EXPECT_EQ(node_verbs, (std::set<std::string>{"get", "create", "update"})) << name;
  }
  EXPECT_EQ(agent_overlays, (std::set<std::string>{"default", "ib-walk", "labels", "monitoring",
                                                   "node-labels", "ufm", "with-hypernode-crd"}));
}

// The live walk (ibnetdisc) goes through the host's umad devices: an overlay whose agent config
// enables it mounts /dev/infiniband and adds CAP_IPC_LOCK to the leader, and schedules the leader
// only on nodes with an HCA, tolerating the GPU taint and no other; one that does not grants neither.
// The node DaemonSet never gets the devices.
TEST_F(DeployTest, OnlyAWalkingLeaderMountsTheUmadDevicesAndOnlyOnInfinibandNodes) {
  std::set<std::string> walking;
  for (const auto& dir : fs::directory_iterator(kDeploy / "overlays")) {
    if (!fs::exists(dir.path() / "kustomization.yaml")) continue;
    const std::string name = dir.path().filename().string();
    Rendered r = overlay(name);
    const auto deployments = of_kind(r, "Deployment");
    const YAML::Node* leader = named(deployments, "hypertopo-leader");
    if (leader == nullptr) continue;  // the extender
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
    const YAML::Node pod = (*leader)["spec"]["template"]["spec"];
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
    if (walks) {
      walking.insert(name);
      EXPECT_EQ(pod["nodeSelector"]["feature.node.kubernetes.io/rdma.available"].as<std::string>(""), "true")
          << name << ": the walking leader must land on a node with an HCA";
    }
    // No catch-all toleration: a leader never lands on a node it was not meant for.
    for (const auto& t : pod["tolerations"]) {
      EXPECT_TRUE(t["key"].IsDefined()) << name << ": a toleration of every taint";
    }
    auto ds = of_kind(r, "DaemonSet");
    ASSERT_EQ(ds.size(), 1u) << name;
    for (const auto& m : ds[0]["spec"]["template"]["spec"]["containers"][0]["volumeMounts"])
      EXPECT_NE(m["mountPath"].as<std::string>(), "/dev/infiniband") << name;
  }
  EXPECT_EQ(walking, (std::set<std::string>{"ib-walk"}));
}

// Pod Security admission: every namespace an overlay creates names an enforced level; each pod meets
// its namespace's level, and the level is the strictest that all of them meet, so `restricted` is
// enforced wherever the pods allow it.
TEST_F(DeployTest, EachNamespaceEnforcesTheStrictestPodSecurityLevelItsPodsMeet) {
  std::map<std::string, std::string> level_seen;  // namespace -> level, across overlays
  for (const auto& dir : fs::directory_iterator(kDeploy / "overlays")) {
    if (!fs::exists(dir.path() / "kustomization.yaml")) continue;
    const std::string name = dir.path().filename().string();
    Rendered r = overlay(name);
    std::map<std::string, std::string> enforced;
    for (const auto& ns : of_kind(r, "Namespace")) {
      const std::string level =
          ns["metadata"]["labels"]["pod-security.kubernetes.io/enforce"].as<std::string>("");
      enforced[ns["metadata"]["name"].as<std::string>()] = level;
      EXPECT_TRUE(level == "privileged" || level == "baseline" || level == "restricted")
          << name << ": namespace " << ns["metadata"]["name"] << " enforces '" << level << "'";
    }
    std::map<std::string, int> strictest;  // namespace -> 0 privileged, 1 baseline, 2 restricted
    for (const auto& o : r.objects) {
      if (!o["spec"] || !o["spec"]["template"]) continue;
      const std::string ns = o["metadata"]["namespace"].as<std::string>("");
      ASSERT_TRUE(enforced.contains(ns)) << name << ": " << o["metadata"]["name"] << " in " << ns;
      const YAML::Node pod = o["spec"]["template"]["spec"];
      const std::string workload = name + " " + o["metadata"]["name"].as<std::string>();
      const int meets = pod_security_violation(pod, 2).empty()   ? 2
                        : pod_security_violation(pod, 1).empty() ? 1
                                                                 : 0;
      strictest[ns] = strictest.contains(ns) ? std::min(strictest[ns], meets) : meets;
      const int level = enforced[ns] == "restricted" ? 2 : enforced[ns] == "baseline" ? 1 : 0;
      EXPECT_EQ(pod_security_violation(pod, level), "")
          << workload << " in " << ns << " (" << enforced[ns] << ")";
    }
    for (const auto& [ns, meets] : strictest) {
      const char* names[] = {"privileged", "baseline", "restricted"};
      EXPECT_EQ(enforced[ns], names[meets])
          << name << ": namespace " << ns << "'s pods all meet " << names[meets];
    }
    // One namespace, one level: two overlays that label it differently would undo each other.
    for (const auto& [ns, level] : enforced) {
      if (level_seen.contains(ns)) {
        EXPECT_EQ(level_seen[ns], level) << ns << " in " << name;
      }
      level_seen[ns] = level;
    }
    // The node pods mount the host's /sys wherever the agent runs: its namespace is privileged.
    if (enforced.contains("hypertopo-system")) {
      EXPECT_EQ(enforced["hypertopo-system"], "privileged") << name;
    }
  }
  // The leader, in the overlays where it holds no device, is built to the restricted level itself.
  Rendered r = overlay("ufm");
  const auto deployments = of_kind(r, "Deployment");
  const YAML::Node* leader = named(deployments, "hypertopo-leader");
  ASSERT_NE(leader, nullptr);
  EXPECT_EQ(pod_security_violation((*leader)["spec"]["template"]["spec"], 2), "");
}

// Prometheus Operator scraping: the ServiceMonitor selects Services that select the pods of both
// workloads, on the port their containers name `http` (the agent's /metrics); the dashboard is a
// ConfigMap Grafana's sidecar loads, holding the JSON of deploy/components/monitoring.
TEST_F(DeployTest, MonitoringOverlayScrapesBothWorkloadsAndShipsTheDashboard) {
  Rendered r = overlay("monitoring");
  auto monitors = of_kind(r, "ServiceMonitor");
  ASSERT_EQ(monitors.size(), 1u);
  const YAML::Node wanted = monitors[0]["spec"]["selector"]["matchLabels"];
  ASSERT_TRUE(wanted.IsMap());
  const std::string port = monitors[0]["spec"]["endpoints"][0]["port"].as<std::string>();
  EXPECT_EQ(monitors[0]["spec"]["endpoints"][0]["path"].as<std::string>(), "/metrics");
  auto matches = [](const YAML::Node& selector, const YAML::Node& labels) {
    for (const auto& kv : selector) {
      if (!labels[kv.first.as<std::string>()] ||
          labels[kv.first.as<std::string>()].as<std::string>() != kv.second.as<std::string>())
        return false;
    }
    return true;
  };
  std::set<std::string> scraped;
  for (const auto& service : of_kind(r, "Service")) {
    if (!matches(wanted, service["metadata"]["labels"])) continue;
    bool has_port = false;
    for (const auto& p : service["spec"]["ports"]) has_port = has_port || p["name"].as<std::string>() == port;
    EXPECT_TRUE(has_port) << service["metadata"]["name"];
    for (const char* kind : {"DaemonSet", "Deployment"}) {
      for (const auto& workload : of_kind(r, kind)) {
        const YAML::Node pod = workload["spec"]["template"];
        if (!matches(service["spec"]["selector"], pod["metadata"]["labels"])) continue;
        bool named_port = false;
        for (const auto& p : pod["spec"]["containers"][0]["ports"])
          named_port =
              named_port || (p["name"].as<std::string>() == "http" && p["containerPort"].as<int>() == 8080);
        EXPECT_TRUE(named_port) << workload["metadata"]["name"];
        scraped.insert(workload["metadata"]["name"].as<std::string>());
      }
    }
  }
  EXPECT_EQ(scraped, (std::set<std::string>{"hypertopo-node", "hypertopo-leader"}));
  bool dashboard = false;
  for (const auto& map : of_kind(r, "ConfigMap")) {
    if (!map["metadata"]["name"].as<std::string>().starts_with("hypertopo-grafana-dashboard")) continue;
    dashboard = true;
    EXPECT_EQ(map["metadata"]["labels"]["grafana_dashboard"].as<std::string>(), "1");
    EXPECT_EQ(map["data"]["hypertopo.json"].as<std::string>(),
              read_text(kDeploy / "components" / "monitoring" / "grafana-dashboard.json"));
    const YAML::Node json = YAML::Load(map["data"]["hypertopo.json"].as<std::string>());
    EXPECT_GE(json["panels"].size(), 10u);
  }
  EXPECT_TRUE(dashboard);
}

// kube-scheduler must not be newer than the API server (Kubernetes' version skew policy): its version
// is one setting, in one place, and its start needs the extension-apiserver-authentication reader.
TEST_F(DeployTest, ExtenderOverlaySetsTheKubeSchedulerVersionOnceAndLetsItReadItsAuthConfig) {
  Rendered r = overlay("extender");
  // The version is one setting: the kustomization's images entry; deployment.yaml names no tag.
  const YAML::Node k = YAML::LoadFile((kDeploy / "overlays" / "extender" / "kustomization.yaml").string());
  std::string tag;
  for (const auto& image : k["images"]) {
    if (image["name"].as<std::string>() == "registry.k8s.io/kube-scheduler")
      tag = image["newTag"].as<std::string>();
  }
  ASSERT_FALSE(tag.empty());
  EXPECT_EQ(read_text(kDeploy / "overlays" / "extender" / "deployment.yaml").find("kube-scheduler:v"),
            std::string::npos);
  auto deployments = of_kind(r, "Deployment");
  ASSERT_EQ(deployments.size(), 1u);
  std::string scheduler_image;
  for (const auto& c : deployments[0]["spec"]["template"]["spec"]["containers"]) {
    if (c["name"].as<std::string>() == "kube-scheduler") scheduler_image = c["image"].as<std::string>();
  }
  EXPECT_EQ(scheduler_image, "registry.k8s.io/kube-scheduler:" + tag);
  // kube-scheduler reads extension-apiserver-authentication in kube-system: Kubernetes' own Role.
  bool reader = false;
  const std::string ns = deployments[0]["metadata"]["namespace"].as<std::string>();
  const std::string sa = deployments[0]["spec"]["template"]["spec"]["serviceAccountName"].as<std::string>();
  for (const auto& b : of_kind(r, "RoleBinding")) {
    if (b["metadata"]["namespace"].as<std::string>() != "kube-system") continue;
    if (b["roleRef"]["kind"].as<std::string>() != "Role" ||
        b["roleRef"]["name"].as<std::string>() != "extension-apiserver-authentication-reader")
      continue;
    for (const auto& subject : b["subjects"]) {
      reader =
          reader || (subject["kind"].as<std::string>() == "ServiceAccount" &&
                     subject["name"].as<std::string>() == sa && subject["namespace"].as<std::string>() == ns);
    }
  }
  EXPECT_TRUE(reader);
  // Everything else of the overlay is in its own namespace.
  for (const auto& o : r.objects) {
    if (o["kind"].as<std::string>() == "RoleBinding" || !o["metadata"]["namespace"]) continue;
    EXPECT_EQ(o["metadata"]["namespace"].as<std::string>(), ns) << o["kind"] << " " << o["metadata"]["name"];
  }
}

// Every overlay's agent config, as rendered, loads in the binary, and each role runs its half: the
// node role the node probes only, the leader the overlay's fabric source and no probe.
TEST_F(DeployTest, EveryOverlaysConfigLoadsAndEachRoleRunsItsHalf) {
  const std::map<std::string, std::string> leader_sources = {
      {"default", "none"}, {"node-labels", "none"},  {"with-hypernode-crd", "none"},
      {"ufm", "ufm"},      {"ib-walk", "ibnetdisc"}, {"labels", "labels"}};
  TempDir dir;
  for (const auto& [name, fabric] : leader_sources) {
    Rendered r = overlay(name);
    std::string config_text;
    for (const auto& m : of_kind(r, "ConfigMap")) {
      if (m["metadata"]["name"].as<std::string>().starts_with("hypertopo-agent-config"))
        config_text = m["data"]["config.yaml"].as<std::string>();
    }
    ASSERT_FALSE(config_text.empty()) << name;
    const fs::path file = dir.path() / (name + ".yaml");
    write_text(file, config_text);
    const auto [node_out, node_rc] = run(std::string(HT_HYPERTOPO_BINARY) + " agent --role node --config " +
                                         file.string() + " --check 2>&1");
    EXPECT_EQ(node_rc, 0) << name << ": " << node_out;
    EXPECT_NE(node_out.find("role node: node probes: ib-local, nvlink; leader sources: none\n"),
              std::string::npos)
        << name << ": " << node_out;
    const auto [leader_out, leader_rc] =
        run(std::string(HT_HYPERTOPO_BINARY) + " agent --role leader --config " + file.string() +
            " --check 2>&1");
    EXPECT_EQ(leader_rc, 0) << name << ": " << leader_out;
    EXPECT_NE(leader_out.find("role leader: node probes: none; leader sources: " + fabric + "\n"),
              std::string::npos)
        << name << ": " << leader_out;
  }
}

}  // namespace

// docs/agent.md shows the one example config; it must be the file the ConfigMap is built from.
TEST(DeployReadme, ShowsTheExampleConfigVerbatim) {
  std::ifstream readme_in(fs::path(HYPERTOPO_SOURCE_DIR) / "docs" / "agent.md");
  std::ifstream config_in(kDeploy / "base" / "config.yaml");
  ASSERT_TRUE(readme_in && config_in);
  std::stringstream readme, config;
  readme << readme_in.rdbuf();
  config << config_in.rdbuf();
  ASSERT_FALSE(config.str().empty());
  EXPECT_NE(readme.str().find("```yaml\n" + config.str() + "```\n"), std::string::npos)
      << "docs/agent.md does not show deploy/base/config.yaml verbatim in a ```yaml block";
}

// docs/install.md names every overlay, and every deploy/ path it names exists.
TEST(DeployDocs, InstallDocNamesEveryOverlayAndOnlyPathsThatExist) {
  const fs::path root(HYPERTOPO_SOURCE_DIR);
  std::ifstream in(root / "docs" / "install.md");
  ASSERT_TRUE(in);
  std::stringstream text;
  text << in.rdbuf();
  const std::string doc = text.str();
  for (const auto& dir : fs::directory_iterator(kDeploy / "overlays")) {
    const std::string path = "`deploy/overlays/" + dir.path().filename().string() + "`";
    EXPECT_NE(doc.find(path), std::string::npos) << path << " is not in docs/install.md";
  }
  std::size_t named = 0;
  for (std::size_t at = doc.find("deploy/"); at != std::string::npos; at = doc.find("deploy/", at + 1)) {
    if (at > 0 && doc[at - 1] != '`' && doc[at - 1] != ' ' && doc[at - 1] != '(') continue;
    std::size_t end = at;
    while (end < doc.size() && (std::isalnum(static_cast<unsigned char>(doc[end])) ||
                                std::string_view("/-_.").find(doc[end]) != std::string_view::npos))
      ++end;
    std::string path = doc.substr(at, end - at);
    while (!path.empty() && (path.back() == '.' || path.back() == '/')) path.pop_back();
    ++named;
    EXPECT_TRUE(fs::exists(root / path)) << path << " (docs/install.md) does not exist";
  }
  EXPECT_GT(named, 10u);
}
