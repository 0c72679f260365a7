/* The HIP ABI backend_hip.h writes out, checked against Debian's HIP headers, and the backend against the library
 * itself: built only where libamdhip64-dev is installed (tests/c/CMakeLists.txt), linked to libamdhip64. */
#define __HIP_PLATFORM_AMD__ 1
#include <hip/hip_runtime_api.h>
#include <stddef.h>
#include <string.h>

#include "backend.h"
#include "backend_hip.h"
#include "test_util.h"

_Static_assert((int)KILN_HIP_SUCCESS == (int)hipSuccess, "hipSuccess");
_Static_assert((int)KILN_HIP_ATTR_MAX_GRID_DIM_X == (int)hipDeviceAttributeMaxGridDimX, "MaxGridDimX");
_Static_assert((int)KILN_HIP_ATTR_MAX_GRID_DIM_Z == (int)hipDeviceAttributeMaxGridDimZ, "MaxGridDimZ");
_Static_assert((int)KILN_HIP_ATTR_MULTIPROCESSOR_COUNT == (int)hipDeviceAttributeMultiprocessorCount, "MPCount");
_Static_assert((int)KILN_HIP_ATTR_MAX_SHARED_MEMORY_PER_BLOCK == (int)hipDeviceAttributeMaxSharedMemoryPerBlock,
               "MaxSharedMemoryPerBlock");
#if HIP_VERSION_MAJOR < 6
/* HIP 5's hipDeviceProp_t is the layout the exported hipGetDeviceProperties keeps (hipDeviceProp_tR0000). */
_Static_assert(offsetof(hipDeviceProp_t, gcnArchName) == KILN_HIP_PROPS_GCN_ARCH_NAME, "gcnArchName offset");
_Static_assert(sizeof(((hipDeviceProp_t *)0)->gcnArchName) == KILN_HIP_PROPS_GCN_ARCH_NAME_LEN, "gcnArchName size");
_Static_assert(sizeof(hipDeviceProp_t) == KILN_HIP_PROPS_SIZE, "hipDeviceProp_t size");
#endif
_Static_assert(KILN_HIP_PROPS_BUFFER >= KILN_HIP_PROPS_SIZE, "room for the properties");

int main(void)
{
    CHECK(KILN_HIP_LAUNCH_PARAM_BUFFER_POINTER == HIP_LAUNCH_PARAM_BUFFER_POINTER, "BUFFER_POINTER");
    CHECK(KILN_HIP_LAUNCH_PARAM_BUFFER_SIZE == HIP_LAUNCH_PARAM_BUFFER_SIZE, "BUFFER_SIZE");
    CHECK(KILN_HIP_LAUNCH_PARAM_END == HIP_LAUNCH_PARAM_END, "END");

    /* The linked library and the backend's dlopen'ed one agree on whether there is a device. */
    int count = 0;
    hipError_t rc = hipInit(0);
    int linked_has_device = rc == hipSuccess && hipGetDeviceCount(&count) == hipSuccess && count > 0;
    void *dev = NULL;
    char arch[KILN_ARCH_LEN] = {0};
    kiln_device_limits limits = {0, 0, 0, 0};
    kiln_status st = kiln_backend_hip.open(&dev, arch, &limits);
    CHECK((st == KILN_STATUS_SUCCESS) == linked_has_device, "backend %s, linked library: %d devices (%s)",
          kiln_status_string(st), count, hipGetErrorString(rc));
    if (st == KILN_STATUS_SUCCESS) {
        hipDeviceProp_t props;
        int device = 0;
        CHECK(hipGetDevice(&device) == hipSuccess && hipGetDeviceProperties(&props, device) == hipSuccess, "props");
        CHECK(strncmp(props.gcnArchName, arch, strlen(arch)) == 0, "arch %s of %s", arch, props.gcnArchName);
        kiln_backend_hip.close(dev);
    }
    return test_summary("test_hip_abi");
}
