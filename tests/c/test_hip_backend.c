/* The HIP backend on a machine without an AMD GPU (CI, and this project's NVIDIA machine): opening it reports
 * NO_DEVICE with a reason that says what is missing, a handle bound to it has arch "none", and runs refuse with
 * NO_DEVICE. On a machine with an AMD GPU it binds instead; then the arch is the device's gfx target. */
#include <string.h>

#include "backend.h"
#include "kiln/kiln.h"
#include "test_util.h"

int main(void)
{
    void *dev = NULL;
    char arch[KILN_ARCH_LEN] = {0};
    kiln_device_limits limits = {0, 0, 0, 0};
    kiln_status st = kiln_backend_hip.open(&dev, arch, &limits);
    const char *why = kiln_hip_no_device_reason();
    if (st == KILN_STATUS_SUCCESS) {
        printf("test_hip_backend: AMD device %s (%d CUs, %lld bytes of LDS per workgroup)\n", arch, limits.sm_count,
               (long long)limits.max_lds_bytes);
        CHECK(strncmp(arch, "gfx", 3) == 0 && !strchr(arch, ':'), "arch '%s' is a bare gfx target", arch);
        CHECK(limits.max_lds_bytes >= 65536 && limits.sm_count > 0, "limits %lld, %d", (long long)limits.max_lds_bytes,
              limits.sm_count);
        CHECK(why[0] == '\0', "no reason after a successful open: '%s'", why);
        CHECK(kiln_backend_hip.last_error(dev)[0] == '\0', "no error yet");
        kiln_backend_hip.close(dev);
    } else {
        printf("test_hip_backend: no AMD device: %s\n", why);
        CHECK(st == KILN_STATUS_NO_DEVICE, "open: %s", kiln_status_string(st));
        CHECK(dev == NULL, "no device state without a device");
        CHECK(strstr(why, "libamdhip64") || strstr(why, "hipInit") || strstr(why, "hipGetDeviceCount"),
              "the reason names what is missing: '%s'", why);
        CHECK(strstr(why, "libamdhip64") || strstr(why, "no AMD GPU visible"), "'%s'", why);

        kiln_handle h = NULL;
        CHECK(kiln_create_with_backend(&h, &kiln_backend_hip) == KILN_STATUS_SUCCESS, "a handle without a device");
        const char *harch = NULL;
        CHECK(h && kiln_device_arch(h, &harch) == KILN_STATUS_SUCCESS && strcmp(harch, "none") == 0, "arch %s",
              harch ? harch : "(null)");
        /* The query has nothing to select for arch "none"; a run refuses before looking at the algo. */
        kiln_problem p;
        CHECK(kiln_problem_init(&p, KILN_DTYPE_F16, KILN_DTYPE_F16, KILN_DTYPE_F16, KILN_LAYOUT_TN, 64, 64, 64) ==
                  KILN_STATUS_SUCCESS, "problem");
        static _Alignas(256) unsigned char dummy[4][256];
        kiln_args args;
        memset(&args, 0, sizeof args);
        args.a = dummy[0], args.b = dummy[1], args.c = dummy[2], args.d = dummy[3];
        args.alpha = 1.0f;
        st = kiln_run(h, &p, NULL, &args, NULL, 0, NULL);
        CHECK(st == KILN_STATUS_NO_DEVICE, "run without a device: %s", kiln_status_string(st));
        if (h)
            kiln_destroy(h);
    }
    return test_summary("test_hip_backend");
}
