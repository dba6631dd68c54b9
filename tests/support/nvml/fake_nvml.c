/* tests/support/nvml/fake_nvml.c: a stand-in libnvidia-ml.so.1 for the NVLink probe tests.
 *
 * There is no NVIDIA driver (and so no real NVML) on the machines that run these tests. This library
 * exports the handful of NVML entry points the probe calls, with NVML's own names, calling
 * convention, return codes, struct layouts and version words, and answers like a driver would on
 * the node kind named by FAKE_NVML_SCENARIO (one build per scenario, each in its own folder as
 * libnvidia-ml.so.1, so no test changes the environment of another). The values come from real
 * nvidia-smi captures in shared/fixtures/nvidia-smi/.
 *
 * Beyond the NVML ABI it exports fake_nvml_open_sessions(): nvmlInit_v2 calls minus nvmlShutdown
 * calls, so a test can check that the probe always shuts NVML down.
 */
#include <stddef.h>
#include <string.h>

#include "discoverers/nvlink/nvml_abi.h"

#define EXPORT __attribute__((visibility("default")))

/* The layout facts of nvml.h, restated so that a wrong shared declaration cannot pass unnoticed. */
_Static_assert(offsetof(ht_nvmlGpuFabricInfoV3, clusterUuid) == 4, "clusterUuid offset");
_Static_assert(offsetof(ht_nvmlGpuFabricInfoV3, status) == 20, "status offset");
_Static_assert(offsetof(ht_nvmlGpuFabricInfoV3, cliqueId) == 24, "cliqueId offset");
_Static_assert(offsetof(ht_nvmlGpuFabricInfoV3, state) == 28, "state offset");
_Static_assert(offsetof(ht_nvmlGpuFabricInfoV3, healthMask) == 32, "healthMask offset");
_Static_assert(offsetof(ht_nvmlGpuFabricInfoV3, healthSummary) == 36, "healthSummary offset");
_Static_assert(offsetof(ht_nvmlGpuFabricInfoV1, status) == 16, "v1 status offset");
_Static_assert(offsetof(ht_nvmlGpuFabricInfoV1, state) == 24, "v1 state offset");

/* nvml.h: nvmlGpuFabricInfo_v2 = 0x02000024, nvmlGpuFabricInfo_v3 = 0x3000028. */
#define REAL_NVML_FABRIC_INFO_V2 0x02000024u
#define REAL_NVML_FABRIC_INFO_V3 0x03000028u

struct fake_gpu {
  int query_rc; /* what the fabric query returns */
  unsigned char uuid[16];
  int status;
  unsigned int clique;
  unsigned char state;
  unsigned int health_mask;
  unsigned char health_summary;
};

#define ZERO_UUID \
  { 0 }
/* dc6e40c4-d722-4357-9ba6-5291dd461278: nvidia-smi-q-fabric-gb200-completed.txt */
#define GB200_UUID \
  { 0xdc, 0x6e, 0x40, 0xc4, 0xd7, 0x22, 0x43, 0x57, 0x9b, 0xa6, 0x52, 0x91, 0xdd, 0x46, 0x12, 0x78 }
/* 50000000-0000-0000-0000-000000000004 / ...05: topograph-v0.5-pdsh-grep-clique.txt */
#define TOPOGRAPH_UUID_4 \
  { 0x50, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x04 }
#define TOPOGRAPH_UUID_5 \
  { 0x50, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x05 }

/* Health mask with "degraded bandwidth: false" (NVML encodes each flag as 2 bits, 2 = false). */
#define HEALTH_MASK_SAMPLE 0x2u

#define OK HT_NVML_SUCCESS
#define COMPLETED HT_NVML_GPU_FABRIC_STATE_COMPLETED
#define IN_PROGRESS HT_NVML_GPU_FABRIC_STATE_IN_PROGRESS
#define UNHEALTHY HT_NVML_GPU_FABRIC_HEALTH_SUMMARY_UNHEALTHY
#define HEALTHY HT_NVML_GPU_FABRIC_HEALTH_SUMMARY_HEALTHY

#define GB200_GPU \
  { OK, GB200_UUID, OK, 2, COMPLETED, HEALTH_MASK_SAMPLE, UNHEALTHY }

#if FAKE_NVML_SCENARIO == 1 /* gb200_completed: a GB200 compute tray, 4 GPUs in clique 2 */
static const struct fake_gpu gpus[] = {GB200_GPU, GB200_GPU, GB200_GPU, GB200_GPU};
#elif FAKE_NVML_SCENARIO == 2 /* hgx_zero_uuid: HGX H100, fabric manager done, no multi-node UUID */
#define HGX_GPU \
  { OK, ZERO_UUID, OK, 0, COMPLETED, HEALTH_MASK_SAMPLE, HEALTHY }
static const struct fake_gpu gpus[] = {HGX_GPU, HGX_GPU, HGX_GPU, HGX_GPU,
                                       HGX_GPU, HGX_GPU, HGX_GPU, HGX_GPU};
#elif FAKE_NVML_SCENARIO == 3 /* in_progress: registration still running (UUID already known) */
#define PROGRESS_GPU \
  { OK, GB200_UUID, OK, 2, IN_PROGRESS, 0, 0 }
static const struct fake_gpu gpus[] = {PROGRESS_GPU, PROGRESS_GPU, PROGRESS_GPU, PROGRESS_GPU};
#elif FAKE_NVML_SCENARIO == 4 /* not_supported: PCIe GPUs, the fabric query is not supported */
#define PCIE_GPU \
  { HT_NVML_ERROR_NOT_SUPPORTED, ZERO_UUID, 0, 0, 0, 0, 0 }
static const struct fake_gpu gpus[] = {PCIE_GPU, PCIE_GPU};
#elif FAKE_NVML_SCENARIO == 5 /* two_cliques: GPUs 0-3 and 4-7 name different cliques */
#define CLIQUE_A \
  { OK, TOPOGRAPH_UUID_4, OK, 4000000005u, COMPLETED, HEALTH_MASK_SAMPLE, HEALTHY }
#define CLIQUE_B \
  { OK, TOPOGRAPH_UUID_5, OK, 4000000004u, COMPLETED, HEALTH_MASK_SAMPLE, HEALTHY }
static const struct fake_gpu gpus[] = {CLIQUE_A, CLIQUE_A, CLIQUE_A, CLIQUE_A,
                                       CLIQUE_B, CLIQUE_B, CLIQUE_B, CLIQUE_B};
#elif FAKE_NVML_SCENARIO == 6 /* old_driver: only nvmlDeviceGetGpuFabricInfo exists */
#define FAKE_NVML_NO_VERSIONED_CALL 1
static const struct fake_gpu gpus[] = {GB200_GPU, GB200_GPU, GB200_GPU, GB200_GPU};
#elif FAKE_NVML_SCENARIO == 7 /* insufficient_resources: nvidia-smi-q-fabric-insufficient-resources.txt */
#define FAILED_GPU \
  { OK, ZERO_UUID, HT_NVML_ERROR_INSUFFICIENT_RESOURCES, 0, COMPLETED, 0, 0 }
static const struct fake_gpu gpus[] = {FAILED_GPU, FAILED_GPU, FAILED_GPU, FAILED_GPU};
#elif FAKE_NVML_SCENARIO == 8 /* v2_driver: versioned call, but v3 (healthSummary) is unknown */
static const struct fake_gpu gpus[] = {GB200_GPU, GB200_GPU};
#define FAKE_NVML_V2_ONLY 1
#elif FAKE_NVML_SCENARIO == 9 /* init_fails: the kernel driver is not loaded */
static const struct fake_gpu gpus[] = {GB200_GPU};
#define FAKE_NVML_INIT_FAILS 1
#elif FAKE_NVML_SCENARIO == 10 /* one_gpu_lagging: 3 GPUs completed, GPU 3 still in progress */
static const struct fake_gpu gpus[] = {
    GB200_GPU, GB200_GPU, GB200_GPU, {OK, GB200_UUID, OK, 2, IN_PROGRESS, 0, 0}};
#else
#error "FAKE_NVML_SCENARIO must name a scenario (1-10)"
#endif

static int open_sessions = 0;

EXPORT int fake_nvml_open_sessions(void) { return open_sessions; }

EXPORT ht_nvmlReturn nvmlInit_v2(void) {
#ifdef FAKE_NVML_INIT_FAILS
  return HT_NVML_ERROR_DRIVER_NOT_LOADED;
#else
  ++open_sessions;
  return OK;
#endif
}

EXPORT ht_nvmlReturn nvmlShutdown(void) {
  if (open_sessions == 0) return HT_NVML_ERROR_UNINITIALIZED;
  --open_sessions;
  return OK;
}

EXPORT ht_nvmlReturn nvmlDeviceGetCount_v2(unsigned int* count) {
  if (open_sessions == 0) return HT_NVML_ERROR_UNINITIALIZED;
  if (count == NULL) return HT_NVML_ERROR_INVALID_ARGUMENT;
  *count = (unsigned int)(sizeof gpus / sizeof gpus[0]);
  return OK;
}

/* Handles are pointers to the GPU's table entry, as opaque to the caller as NVML's. */
EXPORT ht_nvmlReturn nvmlDeviceGetHandleByIndex_v2(unsigned int index, ht_nvmlDevice* device) {
  if (open_sessions == 0) return HT_NVML_ERROR_UNINITIALIZED;
  if (device == NULL || index >= sizeof gpus / sizeof gpus[0]) return HT_NVML_ERROR_INVALID_ARGUMENT;
  *device = (ht_nvmlDevice)(void*)&gpus[index];
  return OK;
}

static const struct fake_gpu* lookup(ht_nvmlDevice device) {
  const struct fake_gpu* gpu = (const struct fake_gpu*)(const void*)device;
  for (size_t i = 0; i < sizeof gpus / sizeof gpus[0]; ++i) {
    if (gpu == &gpus[i]) return gpu;
  }
  return NULL;
}

#ifndef FAKE_NVML_NO_VERSIONED_CALL
EXPORT ht_nvmlReturn nvmlDeviceGetGpuFabricInfoV(ht_nvmlDevice device, void* info) {
  if (open_sessions == 0) return HT_NVML_ERROR_UNINITIALIZED;
  const struct fake_gpu* gpu = lookup(device);
  if (gpu == NULL || info == NULL) return HT_NVML_ERROR_INVALID_ARGUMENT;
  unsigned int version;
  memcpy(&version, info, sizeof version);
#ifdef FAKE_NVML_V2_ONLY
  const int knows_v3 = 0; /* a driver with the versioned call but without healthSummary */
#else
  const int knows_v3 = 1;
#endif
  if (version == REAL_NVML_FABRIC_INFO_V3 && knows_v3) {
    if (gpu->query_rc != OK) return gpu->query_rc;
    ht_nvmlGpuFabricInfoV3* v3 = (ht_nvmlGpuFabricInfoV3*)info;
    memcpy(v3->clusterUuid, gpu->uuid, sizeof gpu->uuid);
    v3->status = gpu->status;
    v3->cliqueId = gpu->clique;
    v3->state = gpu->state;
    v3->healthMask = gpu->health_mask;
    v3->healthSummary = gpu->health_summary;
    return OK;
  }
  if (version == REAL_NVML_FABRIC_INFO_V2) {
    if (gpu->query_rc != OK) return gpu->query_rc;
    ht_nvmlGpuFabricInfoV2* v2 = (ht_nvmlGpuFabricInfoV2*)info;
    memcpy(v2->clusterUuid, gpu->uuid, sizeof gpu->uuid);
    v2->status = gpu->status;
    v2->cliqueId = gpu->clique;
    v2->state = gpu->state;
    v2->healthMask = gpu->health_mask;
    return OK;
  }
  return HT_NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
}
#endif

EXPORT ht_nvmlReturn nvmlDeviceGetGpuFabricInfo(ht_nvmlDevice device, ht_nvmlGpuFabricInfoV1* info) {
  if (open_sessions == 0) return HT_NVML_ERROR_UNINITIALIZED;
  const struct fake_gpu* gpu = lookup(device);
  if (gpu == NULL || info == NULL) return HT_NVML_ERROR_INVALID_ARGUMENT;
  if (gpu->query_rc != OK) return gpu->query_rc;
  memcpy(info->clusterUuid, gpu->uuid, sizeof gpu->uuid);
  info->status = gpu->status;
  info->cliqueId = gpu->clique;
  info->state = gpu->state;
  return OK;
}
