#include "bench/agent/real_node.h"

#include <cstdio>

namespace hypertopo::bench {

using json = nlohmann::json;

std::string host_name(int i) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "demo-su%02d-node%03d", i / kHostsPerLeaf + 1, i % kHostsPerLeaf + 1);
  return buf;
}

int host_index(const std::string& name) {
  int su = 0, host = 0;
  std::sscanf(name.c_str(), "demo-su%d-node%d", &su, &host);
  return (su - 1) * kHostsPerLeaf + host - 1;
}

// One Node as `kubectl get node -o json` shows a GPU node of a kubeadm cluster running GPU feature
// discovery and node-feature-discovery. `extra` labels are added (the export's answer).
json make_node(int i, const std::map<std::string, std::string>& extra) {
  const std::string name = host_name(i);
  char uid[40];
  std::snprintf(uid, sizeof uid, "%08x-4b1c-4f5e-9a0d-%012llx", 0x1a2b0000u + static_cast<unsigned>(i),
                0xc0ffee000000ull + static_cast<unsigned long long>(i));
  nlohmann::json labels = {
      {"beta.kubernetes.io/arch", "amd64"},
      {"beta.kubernetes.io/os", "linux"},
      {"kubernetes.io/arch", "amd64"},
      {"kubernetes.io/hostname", name},
      {"kubernetes.io/os", "linux"},
      {"node.kubernetes.io/instance-type", "dgx-h100"},
      {"topology.kubernetes.io/region", "us-east-1"},
      {"topology.kubernetes.io/zone", "us-east-1b"},
      {"nvidia.com/cuda.driver.major", "550"},
      {"nvidia.com/cuda.driver.minor", "90"},
      {"nvidia.com/cuda.driver.rev", "07"},
      {"nvidia.com/cuda.runtime.major", "12"},
      {"nvidia.com/cuda.runtime.minor", "4"},
      {"nvidia.com/gfd.timestamp", std::to_string(1732000000 + i)},
      {"nvidia.com/gpu.compute.major", "9"},
      {"nvidia.com/gpu.compute.minor", "0"},
      {"nvidia.com/gpu.count", "8"},
      {"nvidia.com/gpu.deploy.container-toolkit", "true"},
      {"nvidia.com/gpu.deploy.dcgm", "true"},
      {"nvidia.com/gpu.deploy.dcgm-exporter", "true"},
      {"nvidia.com/gpu.deploy.device-plugin", "true"},
      {"nvidia.com/gpu.deploy.driver", "true"},
      {"nvidia.com/gpu.deploy.gpu-feature-discovery", "true"},
      {"nvidia.com/gpu.deploy.node-status-exporter", "true"},
      {"nvidia.com/gpu.deploy.operator-validator", "true"},
      {"nvidia.com/gpu.family", "hopper"},
      {"nvidia.com/gpu.machine", "DGXH100"},
      {"nvidia.com/gpu.memory", "81559"},
      {"nvidia.com/gpu.present", "true"},
      {"nvidia.com/gpu.product", "NVIDIA-H100-80GB-HBM3"},
      {"nvidia.com/gpu.replicas", "1"},
      {"nvidia.com/mig.capable", "true"},
      {"nvidia.com/mig.strategy", "single"},
      {"feature.node.kubernetes.io/cpu-cpuid.AVX512F", "true"},
      {"feature.node.kubernetes.io/cpu-cpuid.AVX512BW", "true"},
      {"feature.node.kubernetes.io/cpu-cpuid.AMXTILE", "true"},
      {"feature.node.kubernetes.io/cpu-hardware_multithreading", "true"},
      {"feature.node.kubernetes.io/cpu-model.family", "6"},
      {"feature.node.kubernetes.io/cpu-model.id", "143"},
      {"feature.node.kubernetes.io/cpu-model.vendor_id", "Intel"},
      {"feature.node.kubernetes.io/kernel-version.full", "5.15.0-1053-nvidia"},
      {"feature.node.kubernetes.io/kernel-version.major", "5"},
      {"feature.node.kubernetes.io/memory-numa", "true"},
      {"feature.node.kubernetes.io/network-sriov.capable", "true"},
      {"feature.node.kubernetes.io/pci-10de.present", "true"},
      {"feature.node.kubernetes.io/pci-15b3.present", "true"},
      {"feature.node.kubernetes.io/rdma.available", "true"},
      {"feature.node.kubernetes.io/storage-nonrotationaldisk", "true"},
      {"feature.node.kubernetes.io/system-os_release.ID", "ubuntu"},
      {"feature.node.kubernetes.io/system-os_release.VERSION_ID", "22.04"},
  };
  for (const auto& [k, v] : extra) labels[k] = v;
  char ip[32];
  std::snprintf(ip, sizeof ip, "10.%d.%d.%d", 20 + i / 65536, (i / 256) % 256, i % 256);
  nlohmann::json annotations = {
      {"csi.volume.kubernetes.io/nodeid", "{\"csi.tigera.io\":\"" + name + "\"}"},
      {"kubeadm.alpha.kubernetes.io/cri-socket", "unix:///run/containerd/containerd.sock"},
      {"nfd.node.kubernetes.io/feature-labels",
       "cpu-cpuid.AVX512F,cpu-cpuid.AVX512BW,cpu-cpuid.AMXTILE,cpu-hardware_multithreading,cpu-model.family,"
       "cpu-model.id,cpu-model.vendor_id,kernel-version.full,kernel-version.major,memory-numa,"
       "network-sriov.capable,pci-10de.present,pci-15b3.present,rdma.available,storage-nonrotationaldisk,"
       "system-os_release.ID,system-os_release.VERSION_ID"},
      {"nfd.node.kubernetes.io/worker.version", "v0.16.3"},
      {"node.alpha.kubernetes.io/ttl", "0"},
      {"nvidia.com/gpu-driver-upgrade-enabled", "true"},
      {"projectcalico.org/IPv4Address", std::string(ip) + "/16"},
      {"projectcalico.org/IPv4VXLANTunnelAddr", "192.168." + std::to_string(i % 256) + ".1"},
      {"volumes.kubernetes.io/controller-managed-attach-detach", "true"},
  };
  auto managed = [](const std::string& manager, const std::string& op, const std::string& sub,
                    nlohmann::json fields) {
    nlohmann::json entry = {
        {"apiVersion", "v1"}, {"fieldsType", "FieldsV1"}, {"fieldsV1", std::move(fields)},
        {"manager", manager}, {"operation", op},          {"time", "2026-11-20T08:14:03Z"}};
    if (!sub.empty()) entry["subresource"] = sub;
    return entry;
  };
  nlohmann::json label_fields = nlohmann::json::object();
  for (const auto& [k, v] : labels.items()) label_fields["f:" + k] = nlohmann::json::object();
  nlohmann::json managed_fields = nlohmann::json::array({
      managed(
          "kubeadm", "Update", "",
          {{"f:metadata",
            {{"f:annotations", {{"f:kubeadm.alpha.kubernetes.io/cri-socket", nlohmann::json::object()}}}}}}),
      managed("kubelet", "Update", "",
              {{"f:metadata",
                {{"f:annotations",
                  {{".", nlohmann::json::object()},
                   {"f:node.alpha.kubernetes.io/ttl", nlohmann::json::object()},
                   {"f:volumes.kubernetes.io/controller-managed-attach-detach", nlohmann::json::object()}}},
                 {"f:labels", label_fields}}}}),
      managed(
          "kube-controller-manager", "Update", "",
          {{"f:spec",
            {{"f:podCIDR", nlohmann::json::object()}, {"f:podCIDRs", {{".", nlohmann::json::object()}}}}}}),
      managed(
          "nfd-master", "Update", "",
          {{"f:metadata",
            {{"f:annotations", {{"f:nfd.node.kubernetes.io/feature-labels", nlohmann::json::object()}}}}}}),
      managed("kubelet", "Update", "status",
              {{"f:status",
                {{"f:allocatable",
                  {{"f:nvidia.com/gpu", nlohmann::json::object()}, {"f:rdma/ib", nlohmann::json::object()}}},
                 {"f:capacity",
                  {{"f:nvidia.com/gpu", nlohmann::json::object()}, {"f:rdma/ib", nlohmann::json::object()}}},
                 {"f:conditions",
                  {{"k:{\"type\":\"Ready\"}", {{"f:lastHeartbeatTime", nlohmann::json::object()}}}}},
                 {"f:images", nlohmann::json::object()},
                 {"f:nodeInfo", {{"f:bootID", nlohmann::json::object()}}}}}}),
  });
  auto condition = [](const std::string& type, const std::string& status, const std::string& reason,
                      const std::string& message) {
    return nlohmann::json{{"type", type},
                          {"status", status},
                          {"lastHeartbeatTime", "2026-11-27T04:30:11Z"},
                          {"lastTransitionTime", "2026-11-20T08:14:03Z"},
                          {"reason", reason},
                          {"message", message}};
  };
  nlohmann::json images = nlohmann::json::array();
  const char* repos[] = {"nvcr.io/nvidia/k8s/dcgm-exporter",
                         "nvcr.io/nvidia/k8s-device-plugin",
                         "nvcr.io/nvidia/gpu-feature-discovery",
                         "nvcr.io/nvidia/driver",
                         "nvcr.io/nvidia/cloud-native/gpu-operator-validator",
                         "nvcr.io/nvidia/k8s/container-toolkit",
                         "registry.k8s.io/kube-proxy",
                         "docker.io/calico/node",
                         "docker.io/calico/cni",
                         "registry.k8s.io/nfd/node-feature-discovery",
                         "nvcr.io/nvidia/pytorch",
                         "nvcr.io/nvidia/nemo",
                         "registry.k8s.io/pause",
                         "ghcr.io/hypertopo/hypertopo"};
  int n = 0;
  for (const char* repo : repos) {
    ++n;
    char digest[80];
    std::snprintf(digest, sizeof digest, "%016x%016x%016x%016x", n * 2654435761u, n * 40503u, n * 977u, n);
    images.push_back(
        {{"names", {std::string(repo) + "@sha256:" + digest, std::string(repo) + ":v1." + std::to_string(n)}},
         {"sizeBytes", 100000000 + n * 7919}});
  }
  return {
      {"apiVersion", "v1"},
      {"kind", "Node"},
      {"metadata",
       {{"name", name},
        {"uid", uid},
        {"resourceVersion", std::to_string(1000000 + i)},
        {"creationTimestamp", "2026-11-20T08:14:03Z"},
        {"labels", labels},
        {"annotations", annotations},
        {"managedFields", managed_fields}}},
      {"spec",
       {{"podCIDR", "10.244." + std::to_string(i % 256) + ".0/24"},
        {"podCIDRs", {"10.244." + std::to_string(i % 256) + ".0/24"}},
        {"providerID", "baremetal://" + name}}},
      {"status",
       {{"addresses", {{{"type", "InternalIP"}, {"address", ip}}, {{"type", "Hostname"}, {"address", name}}}},
        {"allocatable",
         {{"cpu", "223"},
          {"ephemeral-storage", "1699705765027"},
          {"hugepages-1Gi", "0"},
          {"hugepages-2Mi", "0"},
          {"memory", "2113297800Ki"},
          {"nvidia.com/gpu", "8"},
          {"pods", "110"},
          {"rdma/ib", "8"}}},
        {"capacity",
         {{"cpu", "224"},
          {"ephemeral-storage", "1844284324Ki"},
          {"hugepages-1Gi", "0"},
          {"hugepages-2Mi", "0"},
          {"memory", "2113400200Ki"},
          {"nvidia.com/gpu", "8"},
          {"pods", "110"},
          {"rdma/ib", "8"}}},
        {"conditions",
         {condition("MemoryPressure", "False", "KubeletHasSufficientMemory",
                    "kubelet has sufficient memory available"),
          condition("DiskPressure", "False", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
          condition("PIDPressure", "False", "KubeletHasSufficientPID",
                    "kubelet has sufficient PID available"),
          condition("Ready", "True", "KubeletReady", "kubelet is posting ready status. AppArmor enabled")}},
        {"daemonEndpoints", {{"kubeletEndpoint", {{"Port", 10250}}}}},
        {"images", images},
        {"nodeInfo",
         {{"architecture", "amd64"},
          {"bootID", std::string(uid) + "-boot"},
          {"containerRuntimeVersion", "containerd://1.7.22"},
          {"kernelVersion", "5.15.0-1053-nvidia"},
          {"kubeProxyVersion", "v1.30.5"},
          {"kubeletVersion", "v1.30.5"},
          {"machineID", std::string(uid).substr(0, 8) + "5c1e4f6a8b0d2e4f6a8b0d2e"},
          {"operatingSystem", "linux"},
          {"osImage", "Ubuntu 22.04.5 LTS"},
          {"systemUUID", uid}}}}}};
}

}  // namespace hypertopo::bench
