/* hsa-vectoradd: an HSA program (written against hsa/hsa.h only) that finds
 * the CPU kernel agent, loads vector_add from an Aquila fat binary, dispatches
 * it with an AQL kernel dispatch packet and waits on the completion signal.
 *
 * Usage: hsa-vectoradd FATBIN [N] */
#include <hsa/hsa.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aquila/cpu_abi.h"
#include "aquila/fatbin.h"

#define CHECK_HSA(call)                                                                           \
  do {                                                                                            \
    hsa_status_t st_ = (call);                                                                    \
    if (st_ != HSA_STATUS_SUCCESS) {                                                              \
      const char *msg_ = NULL;                                                                    \
      hsa_status_string(st_, &msg_);                                                              \
      fprintf(stderr, "hsa-vectoradd: %s: %s\n", #call, msg_ ? msg_ : "?");                       \
      exit(1);                                                                                    \
    }                                                                                             \
  } while (0)

static hsa_status_t find_cpu_agent(hsa_agent_t agent, void *data) {
  hsa_device_type_t type;
  hsa_agent_get_info(agent, HSA_AGENT_INFO_DEVICE, &type);
  if (type != HSA_DEVICE_TYPE_CPU) return HSA_STATUS_SUCCESS;
  *(hsa_agent_t *)data = agent;
  return HSA_STATUS_INFO_BREAK;
}

static hsa_status_t find_kernarg_region(hsa_region_t region, void *data) {
  uint32_t flags = 0;
  hsa_region_get_info(region, HSA_REGION_INFO_GLOBAL_FLAGS, &flags);
  if (flags & HSA_REGION_GLOBAL_FLAG_KERNARG) {
    *(hsa_region_t *)data = region;
    return HSA_STATUS_INFO_BREAK;
  }
  return HSA_STATUS_SUCCESS;
}

static void *read_file(const char *path, size_t *size) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  void *data = n > 0 ? malloc((size_t)n) : NULL;
  if (data && fread(data, 1, (size_t)n, f) != (size_t)n) {
    free(data);
    data = NULL;
  }
  fclose(f);
  *size = (size_t)n;
  return data;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s FATBIN [N]\n", argv[0]);
    return 2;
  }
  uint32_t n = argc > 2 ? (uint32_t)strtoul(argv[2], NULL, 0) : 1000000;

  /* The fat binary: the code object for this CPU (a native one if it was
   * built here, else the best x86-64 level) and the kernel's argument layout. */
  size_t size = 0;
  void *bytes = read_file(argv[1], &size);
  struct aquila_fatbin *fb = NULL;
  char why[256];
  if (!bytes || aquila_fatbin_read(bytes, size, &fb, why, sizeof why) != 0) {
    fprintf(stderr, "hsa-vectoradd: %s: %s\n", argv[1], bytes ? why : "cannot read");
    return 1;
  }
  const struct aquila_fatbin_code *code = aquila_fatbin_select_cpu_code(fb, "");
  const struct aquila_fatbin_kernel *meta = aquila_fatbin_find_kernel(fb, "vector_add");
  if (!code || !meta || meta->num_args != 4) {
    fprintf(stderr, "hsa-vectoradd: no CPU code object or no vector_add kernel in %s\n", argv[1]);
    return 1;
  }

  CHECK_HSA(hsa_init());
  hsa_agent_t agent = {0};
  hsa_iterate_agents(find_cpu_agent, &agent);
  if (!agent.handle) {
    fprintf(stderr, "hsa-vectoradd: no CPU agent\n");
    return 1;
  }
  char name[64] = "";
  hsa_agent_get_info(agent, HSA_AGENT_INFO_NAME, name);

  hsa_code_object_reader_t reader;
  hsa_executable_t executable;
  hsa_executable_symbol_t symbol;
  uint64_t kernel_object = 0;
  CHECK_HSA(hsa_code_object_reader_create_from_memory(code->data, code->size, &reader));
  CHECK_HSA(hsa_executable_create_alt(HSA_PROFILE_FULL, HSA_DEFAULT_FLOAT_ROUNDING_MODE_DEFAULT,
                                      NULL, &executable));
  CHECK_HSA(hsa_executable_load_agent_code_object(executable, agent, reader, NULL, NULL));
  CHECK_HSA(hsa_executable_freeze(executable, NULL));
  CHECK_HSA(hsa_executable_get_symbol_by_name(executable, "vector_add", &agent, &symbol));
  CHECK_HSA(hsa_executable_symbol_get_info(symbol, HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_OBJECT,
                                           &kernel_object));

  /* Buffers in fine-grained system memory: the CPU agent reads them in place. */
  float *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b), *c = calloc(n, sizeof *c);
  for (uint32_t i = 0; i < n; i++) {
    a[i] = (float)i;
    b[i] = 2.0f * (float)i;
  }

  /* The kernarg segment, laid out as the fat binary's metadata says. */
  hsa_region_t kernarg_region = {0};
  hsa_agent_iterate_regions(agent, find_kernarg_region, &kernarg_region);
  void *kernarg = NULL;
  CHECK_HSA(hsa_memory_allocate(kernarg_region, meta->kernarg_size, &kernarg));
  memset(kernarg, 0, meta->kernarg_size);
  void *pointers[3] = {a, b, c};
  for (int i = 0; i < 3; i++) memcpy((char *)kernarg + meta->args[i].offset, &pointers[i], 8);
  memcpy((char *)kernarg + meta->args[3].offset, &n, sizeof n);
  /* Hidden arguments (global offset 0) are already zero. */

  hsa_queue_t *queue;
  CHECK_HSA(hsa_queue_create(agent, 64, HSA_QUEUE_TYPE_SINGLE, NULL, NULL, UINT32_MAX, UINT32_MAX,
                             &queue));
  hsa_signal_t done;
  CHECK_HSA(hsa_signal_create(1, 0, NULL, &done));

  /* One AQL kernel dispatch packet: fill the body, publish the header last
   * with a release store, then ring the doorbell. */
  uint64_t index = hsa_queue_add_write_index_relaxed(queue, 1);
  hsa_kernel_dispatch_packet_t *p =
      (hsa_kernel_dispatch_packet_t *)queue->base_address + (index & (queue->size - 1));
  memset((char *)p + 4, 0, sizeof *p - 4);
  p->workgroup_size_x = 256;
  p->workgroup_size_y = p->workgroup_size_z = 1;
  p->grid_size_x = n;
  p->grid_size_y = p->grid_size_z = 1;
  p->kernel_object = kernel_object;
  p->kernarg_address = kernarg;
  p->completion_signal = done;
  uint16_t header = (HSA_PACKET_TYPE_KERNEL_DISPATCH << HSA_PACKET_HEADER_TYPE) |
                    (HSA_FENCE_SCOPE_SYSTEM << HSA_PACKET_HEADER_SCACQUIRE_FENCE_SCOPE) |
                    (HSA_FENCE_SCOPE_SYSTEM << HSA_PACKET_HEADER_SCRELEASE_FENCE_SCOPE);
  uint16_t setup = 1 << HSA_KERNEL_DISPATCH_PACKET_SETUP_DIMENSIONS;
  __atomic_store_n((uint32_t *)p, header | ((uint32_t)setup << 16), __ATOMIC_RELEASE);
  hsa_signal_store_screlease(queue->doorbell_signal, (hsa_signal_value_t)index);
  hsa_signal_wait_scacquire(done, HSA_SIGNAL_CONDITION_EQ, 0, UINT64_MAX, HSA_WAIT_STATE_BLOCKED);

  size_t wrong = 0;
  for (uint32_t i = 0; i < n; i++)
    if (c[i] != a[i] + b[i]) wrong++;
  printf("HSA VectorAdd: %u floats on %s, code object %s: %s\n", n, name, code->target,
         wrong ? "FAILED" : "verified");

  hsa_signal_destroy(done);
  hsa_queue_destroy(queue);
  hsa_memory_free(kernarg);
  hsa_executable_destroy(executable);
  hsa_code_object_reader_destroy(reader);
  hsa_shut_down();
  aquila_fatbin_destroy(fb);
  free(bytes);
  free(a);
  free(b);
  free(c);
  return wrong ? 1 : 0;
}
