/* discoverers/nvlink/nvml_abi.h: the small part of NVML's C ABI that the NVLink probe calls.
 *
 * NVML is loaded with dlopen (nodes without the driver have no libnvidia-ml), so its header is not a
 * build dependency; these declarations restate the facts of nvml.h that the probe relies on: return
 * codes, fabric states, the layouts of nvmlGpuFabricInfo_t (v1, no version field) and the versioned
 * nvmlGpuFabricInfo_v2_t / _v3_t with their version words (sizeof | version << 24). Plain C so that
 * the fake libnvidia-ml the tests build keeps exactly the same ABI.
 *
 *   ht_nvmlGpuFabricInfoV3 info;
 *   info.version = HT_NVML_GPU_FABRIC_INFO_V3;
 *   ht_nvmlReturn rc = get_fabric_info_v(device, &info);
 */
#ifndef HYPERTOPO_DISCOVERERS_NVLINK_NVML_ABI_H
#define HYPERTOPO_DISCOVERERS_NVLINK_NVML_ABI_H

#ifdef __cplusplus
extern "C" {
#endif

typedef int ht_nvmlReturn; /* nvmlReturn_t is a C enum: int-sized */
typedef struct ht_nvmlDevice_st* ht_nvmlDevice;

#define HT_NVML_SUCCESS 0
#define HT_NVML_ERROR_UNINITIALIZED 1
#define HT_NVML_ERROR_INVALID_ARGUMENT 2
#define HT_NVML_ERROR_NOT_SUPPORTED 3
#define HT_NVML_ERROR_NO_PERMISSION 4
#define HT_NVML_ERROR_NOT_FOUND 6
#define HT_NVML_ERROR_INSUFFICIENT_SIZE 7
#define HT_NVML_ERROR_DRIVER_NOT_LOADED 9
#define HT_NVML_ERROR_TIMEOUT 10
#define HT_NVML_ERROR_FUNCTION_NOT_FOUND 13
#define HT_NVML_ERROR_GPU_IS_LOST 15
#define HT_NVML_ERROR_INSUFFICIENT_RESOURCES 23
#define HT_NVML_ERROR_ARGUMENT_VERSION_MISMATCH 25
#define HT_NVML_ERROR_UNKNOWN 999

/* nvmlGpuFabricState_t (an unsigned char) */
#define HT_NVML_GPU_FABRIC_STATE_NOT_SUPPORTED 0
#define HT_NVML_GPU_FABRIC_STATE_NOT_STARTED 1
#define HT_NVML_GPU_FABRIC_STATE_IN_PROGRESS 2
#define HT_NVML_GPU_FABRIC_STATE_COMPLETED 3

/* healthSummary of the v3 struct */
#define HT_NVML_GPU_FABRIC_HEALTH_SUMMARY_NOT_SUPPORTED 0
#define HT_NVML_GPU_FABRIC_HEALTH_SUMMARY_HEALTHY 1
#define HT_NVML_GPU_FABRIC_HEALTH_SUMMARY_UNHEALTHY 2
#define HT_NVML_GPU_FABRIC_HEALTH_SUMMARY_LIMITED_CAPACITY 3

#define HT_NVML_GPU_FABRIC_UUID_LEN 16

/* nvmlGpuFabricInfo_t: nvmlDeviceGetGpuFabricInfo (drivers before the versioned call). */
typedef struct {
  unsigned char clusterUuid[HT_NVML_GPU_FABRIC_UUID_LEN];
  ht_nvmlReturn status;
  unsigned int cliqueId;
  unsigned char state;
} ht_nvmlGpuFabricInfoV1;

/* nvmlGpuFabricInfo_v2_t */
typedef struct {
  unsigned int version;
  unsigned char clusterUuid[HT_NVML_GPU_FABRIC_UUID_LEN];
  ht_nvmlReturn status;
  unsigned int cliqueId;
  unsigned char state;
  unsigned int healthMask;
} ht_nvmlGpuFabricInfoV2;

/* nvmlGpuFabricInfo_v3_t (nvmlGpuFabricInfoV_t in current nvml.h) */
typedef struct {
  unsigned int version;
  unsigned char clusterUuid[HT_NVML_GPU_FABRIC_UUID_LEN];
  ht_nvmlReturn status;
  unsigned int cliqueId;
  unsigned char state;
  unsigned int healthMask;
  unsigned char healthSummary;
} ht_nvmlGpuFabricInfoV3;

/* NVML_STRUCT_VERSION(GpuFabricInfo, n) = sizeof(nvmlGpuFabricInfo_vn_t) | (n << 24): 0x02000024, 0x03000028
 */
#define HT_NVML_GPU_FABRIC_INFO_V2 ((unsigned int)(sizeof(ht_nvmlGpuFabricInfoV2) | (2u << 24)))
#define HT_NVML_GPU_FABRIC_INFO_V3 ((unsigned int)(sizeof(ht_nvmlGpuFabricInfoV3) | (3u << 24)))

typedef ht_nvmlReturn (*ht_nvmlInit_v2_fn)(void);
typedef ht_nvmlReturn (*ht_nvmlShutdown_fn)(void);
typedef ht_nvmlReturn (*ht_nvmlDeviceGetCount_v2_fn)(unsigned int* count);
typedef ht_nvmlReturn (*ht_nvmlDeviceGetHandleByIndex_v2_fn)(unsigned int index, ht_nvmlDevice* device);
typedef ht_nvmlReturn (*ht_nvmlDeviceGetGpuFabricInfoV_fn)(ht_nvmlDevice device, void* info);
typedef ht_nvmlReturn (*ht_nvmlDeviceGetGpuFabricInfo_fn)(ht_nvmlDevice device, ht_nvmlGpuFabricInfoV1* info);

#ifdef __cplusplus
}
#endif

#endif /* HYPERTOPO_DISCOVERERS_NVLINK_NVML_ABI_H */
