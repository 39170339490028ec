/*
 * A stand-in for libcuda.so.1, built by the tests with `cc`: it exports the driver entry
 * points torchlower uses, returns results chosen by the test (fake_set_result), records
 * every call in order (fake_log) so tests can check call and release order, and keeps
 * "device memory" in host memory so copies round-trip. It runs no kernels.
 *
 * Build variants:
 *   -DFAKE_NO_ERROR_NAME   no cuGetErrorName/cuGetErrorString (names come from our table)
 *   -DFAKE_OLD_DRIVER      no cuMemAlloc_v2 (an entry point an old driver would lack)
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int CUresult;
typedef int CUdevice;
typedef void *CUcontext;
typedef void *CUmodule;
typedef void *CUfunction;
typedef void *CUstream;
typedef unsigned long long CUdeviceptr;

#define MAX_RESULTS 32
static struct { char call[64]; int code; } results[MAX_RESULTS];
static int result_count;
static char call_log[1 << 16];
static int param_count; /* how many kernel parameters cuLaunchKernel records */
static CUcontext context_stack[16];
static int context_depth;
static int primary_context_object;
static int module_objects[64];
static int module_count;
static int function_object;

static void record(const char *text) {
    size_t used = strlen(call_log);
    snprintf(call_log + used, sizeof call_log - used, "%s\n", text);
}

static CUresult outcome(const char *call) {
    record(call);
    for (int i = 0; i < result_count; i++)
        if (strcmp(results[i].call, call) == 0) return results[i].code;
    return 0;
}

/* ---- test controls ---- */
void fake_set_result(const char *call, int code) {
    for (int i = 0; i < result_count; i++)
        if (strcmp(results[i].call, call) == 0) { results[i].code = code; return; }
    if (result_count < MAX_RESULTS) {
        snprintf(results[result_count].call, sizeof results[0].call, "%s", call);
        results[result_count++].code = code;
    }
}
void fake_set_param_count(int n) { param_count = n; }
const char *fake_log(void) { return call_log; }
void fake_clear_log(void) { call_log[0] = 0; }

/* ---- driver entry points ---- */
CUresult cuInit(unsigned flags) { return flags ? 1 : outcome("cuInit"); }
CUresult cuDriverGetVersion(int *v) { *v = 12040; return outcome("cuDriverGetVersion"); }

#ifndef FAKE_NO_ERROR_NAME
CUresult cuGetErrorName(CUresult code, const char **name) {
    static char buffer[64];
    snprintf(buffer, sizeof buffer, "FAKE_ERROR_%d", code);
    *name = buffer;
    return 0;
}
CUresult cuGetErrorString(CUresult code, const char **text) {
    (void)code;
    *text = "described by the fake driver";
    return 0;
}
#endif

CUresult cuDeviceGetCount(int *n) { *n = 1; return outcome("cuDeviceGetCount"); }
CUresult cuDeviceGet(CUdevice *d, int ordinal) { *d = ordinal; return ordinal == 0 ? outcome("cuDeviceGet") : 101; }
CUresult cuDeviceGetName(char *name, int len, CUdevice d) { (void)d; snprintf(name, len, "Fake GPU"); return outcome("cuDeviceGetName"); }
CUresult cuDeviceGetAttribute(int *v, int attribute, CUdevice d) { (void)d; *v = attribute == 75 ? 8 : attribute == 76 ? 0 : 1; return outcome("cuDeviceGetAttribute"); }
CUresult cuDeviceTotalMem_v2(size_t *bytes, CUdevice d) { (void)d; *bytes = (size_t)1 << 30; return outcome("cuDeviceTotalMem_v2"); }
CUresult cuDevicePrimaryCtxRetain(CUcontext *c, CUdevice d) { (void)d; *c = &primary_context_object; return outcome("cuDevicePrimaryCtxRetain"); }
CUresult cuDevicePrimaryCtxRelease_v2(CUdevice d) { (void)d; return outcome("cuDevicePrimaryCtxRelease_v2"); }
CUresult cuCtxGetCurrent(CUcontext *c) { *c = context_depth ? context_stack[context_depth - 1] : NULL; return 0; }
CUresult cuCtxSetCurrent(CUcontext c) { if (!context_depth) context_depth = 1; context_stack[context_depth - 1] = c; return outcome("cuCtxSetCurrent"); }
CUresult cuCtxPushCurrent_v2(CUcontext c) { if (context_depth < 16) context_stack[context_depth++] = c; return outcome("cuCtxPushCurrent_v2"); }
CUresult cuCtxPopCurrent_v2(CUcontext *c) { *c = context_depth ? context_stack[--context_depth] : NULL; return outcome("cuCtxPopCurrent_v2"); }
CUresult cuCtxSynchronize(void) { return outcome("cuCtxSynchronize"); }
CUresult cuStreamCreate(CUstream *s, unsigned flags) { (void)flags; *s = malloc(1); return outcome("cuStreamCreate"); }
CUresult cuStreamDestroy_v2(CUstream s) { free(s); return outcome("cuStreamDestroy_v2"); }
CUresult cuStreamSynchronize(CUstream s) { (void)s; return outcome("cuStreamSynchronize"); }

CUresult cuModuleLoadDataEx(CUmodule *m, const void *image, unsigned n, int *options, void **values) {
    char line[160];
    const char *entry = strstr((const char *)image, ".entry ");
    int length = 0;
    if (entry) { entry += 7; while (entry[length] && entry[length] != '(') length++; }
    snprintf(line, sizeof line, "cuModuleLoadDataEx %.*s", length, entry ? entry : "?");
    CUresult code = outcome(line);
    if (code == 0) code = outcome("cuModuleLoadDataEx");
    if (code != 0) {
        /* Fill the error log buffer like the real JIT does. */
        for (unsigned i = 0; i + 1 < n; i++)
            if (options[i] == 5) snprintf((char *)values[i], (size_t)(uintptr_t)values[i + 1], "ptxas fake: rejected");
        return code;
    }
    *m = &module_objects[module_count++ % 64];
    return 0;
}
CUresult cuModuleUnload(CUmodule m) { (void)m; return outcome("cuModuleUnload"); }
CUresult cuModuleGetFunction(CUfunction *f, CUmodule m, const char *name) {
    char line[128];
    (void)m;
    snprintf(line, sizeof line, "cuModuleGetFunction %s", name);
    *f = &function_object;
    return outcome(line);
}

#ifndef FAKE_OLD_DRIVER
CUresult cuMemAlloc_v2(CUdeviceptr *p, size_t bytes) {
    CUresult code = outcome("cuMemAlloc_v2");
    if (code == 0) *p = (CUdeviceptr)(uintptr_t)calloc(1, bytes);
    return code;
}
#endif
CUresult cuMemFree_v2(CUdeviceptr p) {
    CUresult code = outcome("cuMemFree_v2");
    if (code == 0) free((void *)(uintptr_t)p);
    return code;
}
CUresult cuMemcpyHtoD_v2(CUdeviceptr dst, const void *src, size_t n) { memcpy((void *)(uintptr_t)dst, src, n); return outcome("cuMemcpyHtoD_v2"); }
CUresult cuMemcpyDtoH_v2(void *dst, CUdeviceptr src, size_t n) { memcpy(dst, (const void *)(uintptr_t)src, n); return outcome("cuMemcpyDtoH_v2"); }

CUresult cuLaunchKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                        unsigned shared, CUstream stream, void **params, void **extra) {
    char line[1024];
    int used = snprintf(line, sizeof line, "cuLaunchKernel grid=%u,%u,%u block=%u,%u,%u shared=%u stream=%p params=",
                        gx, gy, gz, bx, by, bz, shared, stream);
    (void)f; (void)extra;
    /* Each parameter is read as 8 bytes here; tests choose values whose low bytes show. */
    for (int i = 0; i < param_count && used < (int)sizeof line - 32; i++) {
        unsigned long long value = 0;
        memcpy(&value, params[i], 4);
        used += snprintf(line + used, sizeof line - used, "%s%llu", i ? "," : "", value);
    }
    return outcome(line) ? 1 : outcome("cuLaunchKernel");
}

typedef void *CUevent;
static float fake_clock_ms;
CUresult cuEventCreate(CUevent *e, unsigned flags) { (void)flags; *e = malloc(sizeof(float)); return outcome("cuEventCreate"); }
CUresult cuEventDestroy_v2(CUevent e) { free(e); return outcome("cuEventDestroy_v2"); }
CUresult cuEventRecord(CUevent e, CUstream s) { (void)s; fake_clock_ms += 0.5f; *(float *)e = fake_clock_ms; return outcome("cuEventRecord"); }
CUresult cuEventSynchronize(CUevent e) { (void)e; return outcome("cuEventSynchronize"); }
CUresult cuEventElapsedTime(float *ms, CUevent start, CUevent end) { *ms = *(float *)end - *(float *)start; return outcome("cuEventElapsedTime"); }
