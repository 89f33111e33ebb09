/* A code object whose kernel table has an ABI version the agent does not
 * know. */
#include <aquila/cpu_abi.h>

__attribute__((visibility("default"))) const struct aquila_kernel_table __aquila_kernel_table = {
    .abi_version = AQUILA_CPU_ABI_VERSION + 100,
    .kernel_count = 0,
    .kernels = 0,
};
