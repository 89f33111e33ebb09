/* Code object readers, executables, symbols and their error paths. */
#include "check.h"
#include "hsa_test_util.h"

#include <fcntl.h>
#include <time.h>
#include <unistd.h>

static hsa_agent_t agent;

static hsa_status_t load_bytes(const void *bytes, size_t size, hsa_executable_t *exec) {
  hsa_code_object_reader_t reader;
  hsa_status_t status = hsa_code_object_reader_create_from_memory(bytes, size, &reader);
  if (status != HSA_STATUS_SUCCESS) return status;
  hsa_executable_create_alt(HSA_PROFILE_FULL, HSA_DEFAULT_FLOAT_ROUNDING_MODE_DEFAULT, NULL, exec);
  status = hsa_executable_load_agent_code_object(*exec, agent, reader, NULL, NULL);
  hsa_code_object_reader_destroy(reader);
  return status;
}

static void test_bad_code_objects(void) {
  hsa_executable_t exec;
  char garbage[4096];
  for (size_t i = 0; i < sizeof(garbage); i++)
    garbage[i] = (char)(i * 131 + 7);
  CHECK_EQ_INT(load_bytes(garbage, sizeof(garbage), &exec), HSA_STATUS_ERROR_INVALID_CODE_OBJECT);
  hsa_executable_destroy(exec);
  memcpy(garbage, "\177ELF\2\1\1", 7); /* ELF magic, then nonsense */
  CHECK_EQ_INT(load_bytes(garbage, sizeof(garbage), &exec), HSA_STATUS_ERROR_INVALID_CODE_OBJECT);
  hsa_executable_destroy(exec);
  CHECK_EQ_INT(load_bytes(garbage, 10, &exec), HSA_STATUS_ERROR_INVALID_CODE_OBJECT);
  hsa_executable_destroy(exec);
  const char *names[] = {HSA_TEST_KERNEL_DIR "/no_table.so", HSA_TEST_KERNEL_DIR "/bad_version.so"};
  for (int i = 0; i < 2; i++) {
    size_t size;
    void *bytes = util_read_file(names[i], &size);
    REQUIRE(bytes);
    CHECK_EQ_INT(load_bytes(bytes, size, &exec), HSA_STATUS_ERROR_INVALID_CODE_OBJECT);
    hsa_executable_destroy(exec);
    /* A truncated shared object is rejected too. */
    CHECK_EQ_INT(load_bytes(bytes, size / 3, &exec), HSA_STATUS_ERROR_INVALID_CODE_OBJECT);
    hsa_executable_destroy(exec);
    free(bytes);
  }
  hsa_code_object_reader_t reader;
  CHECK_EQ_INT(hsa_code_object_reader_create_from_memory(NULL, 10, &reader),
               HSA_STATUS_ERROR_INVALID_ARGUMENT);
  CHECK_EQ_INT(hsa_code_object_reader_create_from_file(-1, &reader), HSA_STATUS_ERROR_INVALID_FILE);
  hsa_code_object_reader_t stale = {0};
  CHECK_EQ_INT(hsa_code_object_reader_destroy(stale), HSA_STATUS_ERROR_INVALID_CODE_OBJECT_READER);
}

static hsa_status_t count_symbol(hsa_executable_t exec, hsa_agent_t a, hsa_executable_symbol_t s,
                                 void *data) {
  ++*(int *)data;
  return HSA_STATUS_SUCCESS;
}

static void test_load_and_symbols(void) {
  int fd = open(HSA_TEST_KERNEL_DIR "/test_kernels.so", O_RDONLY);
  REQUIRE(fd >= 0);
  hsa_code_object_reader_t reader;
  REQUIRE(hsa_code_object_reader_create_from_file(fd, &reader) == HSA_STATUS_SUCCESS);
  close(fd);
  hsa_executable_t exec;
  REQUIRE(hsa_executable_create_alt(HSA_PROFILE_FULL, HSA_DEFAULT_FLOAT_ROUNDING_MODE_DEFAULT, NULL,
                                    &exec) == HSA_STATUS_SUCCESS);
  hsa_loaded_code_object_t loaded;
  CHECK_EQ_INT(hsa_executable_load_agent_code_object(exec, agent, reader, NULL, &loaded),
               HSA_STATUS_SUCCESS);
  /* Loading the same kernels twice into one executable clashes. */
  CHECK_EQ_INT(hsa_executable_load_agent_code_object(exec, agent, reader, NULL, NULL),
               HSA_STATUS_ERROR_VARIABLE_ALREADY_DEFINED);
  CHECK_EQ_INT(hsa_executable_freeze(exec, NULL), HSA_STATUS_SUCCESS);
  CHECK_EQ_INT(hsa_executable_freeze(exec, NULL), HSA_STATUS_ERROR_FROZEN_EXECUTABLE);
  CHECK_EQ_INT(hsa_executable_load_agent_code_object(exec, agent, reader, NULL, NULL),
               HSA_STATUS_ERROR_FROZEN_EXECUTABLE);
  hsa_executable_state_t state;
  hsa_executable_get_info(exec, HSA_EXECUTABLE_INFO_STATE, &state);
  CHECK_EQ_INT(state, HSA_EXECUTABLE_STATE_FROZEN);
  uint32_t invalid = 1;
  CHECK_EQ_INT(hsa_executable_validate(exec, &invalid), HSA_STATUS_SUCCESS);
  CHECK_EQ_INT(invalid, 0);

  hsa_executable_symbol_t symbol, kd_symbol;
  CHECK_EQ_INT(hsa_executable_get_symbol_by_name(exec, "vector_add", &agent, &symbol),
               HSA_STATUS_SUCCESS);
  CHECK_EQ_INT(hsa_executable_get_symbol_by_name(exec, "vector_add.kd", &agent, &kd_symbol),
               HSA_STATUS_SUCCESS);
  CHECK(symbol.handle == kd_symbol.handle);
  CHECK_EQ_INT(hsa_executable_get_symbol_by_name(exec, "missing", &agent, &symbol),
               HSA_STATUS_ERROR_INVALID_SYMBOL_NAME);
  hsa_executable_get_symbol_by_name(exec, "vector_add", &agent, &symbol);
  hsa_symbol_kind_t kind;
  hsa_executable_symbol_get_info(symbol, HSA_EXECUTABLE_SYMBOL_INFO_TYPE, &kind);
  CHECK_EQ_INT(kind, HSA_SYMBOL_KIND_KERNEL);
  uint32_t length = 0, kernarg_size = 0, kernarg_align = 0, priv = 0, group = 99;
  char name[64];
  hsa_executable_symbol_get_info(symbol, HSA_EXECUTABLE_SYMBOL_INFO_NAME_LENGTH, &length);
  CHECK_EQ_INT(length, 10);
  /* hsa.h: the length excludes the NUL and the name is that many bytes,
   * no NUL written after them (ROCr alike). */
  memset(name, 'x', sizeof(name));
  hsa_executable_symbol_get_info(symbol, HSA_EXECUTABLE_SYMBOL_INFO_NAME, name);
  CHECK(memcmp(name, "vector_add", 10) == 0 && name[10] == 'x');
  hsa_executable_symbol_get_info(symbol, HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_KERNARG_SEGMENT_SIZE,
                                 &kernarg_size);
  CHECK_EQ_INT(kernarg_size, 64);
  hsa_executable_symbol_get_info(
      symbol, HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_KERNARG_SEGMENT_ALIGNMENT, &kernarg_align);
  CHECK(kernarg_align >= 8);
  hsa_executable_symbol_get_info(symbol, HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_PRIVATE_SEGMENT_SIZE,
                                 &priv);
  CHECK_EQ_INT(priv, 64);
  hsa_executable_symbol_get_info(symbol, HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_GROUP_SEGMENT_SIZE,
                                 &group);
  CHECK_EQ_INT(group, 0);
  uint64_t object = 0;
  hsa_executable_symbol_get_info(symbol, HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_OBJECT, &object);
  CHECK(object != 0);
  hsa_agent_t owner = {0};
  hsa_executable_symbol_get_info(symbol, HSA_EXECUTABLE_SYMBOL_INFO_AGENT, &owner);
  CHECK(owner.handle == agent.handle);
  bool dynamic = true;
  hsa_executable_symbol_get_info(symbol, HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_DYNAMIC_CALLSTACK,
                                 &dynamic);
  CHECK(!dynamic);
  hsa_symbol_linkage_t linkage;
  hsa_executable_symbol_get_info(symbol, HSA_EXECUTABLE_SYMBOL_INFO_LINKAGE, &linkage);
  CHECK_EQ_INT(linkage, HSA_SYMBOL_LINKAGE_MODULE);
  uint64_t address;
  CHECK_EQ_INT(
      hsa_executable_symbol_get_info(symbol, HSA_EXECUTABLE_SYMBOL_INFO_VARIABLE_ADDRESS, &address),
      HSA_STATUS_ERROR_INVALID_ARGUMENT);
  hsa_executable_symbol_t bad = {16};
  CHECK_EQ_INT(hsa_executable_symbol_get_info(bad, HSA_EXECUTABLE_SYMBOL_INFO_TYPE, &kind),
               HSA_STATUS_ERROR_INVALID_EXECUTABLE_SYMBOL);

  int count = 0;
  CHECK_EQ_INT(hsa_executable_iterate_agent_symbols(exec, agent, count_symbol, &count),
               HSA_STATUS_SUCCESS);
  CHECK_EQ_INT(count, 10); /* the kernels of test/hsa/kernels/test_kernels.c */
  hsa_code_object_reader_destroy(reader);
  CHECK_EQ_INT(hsa_executable_destroy(exec), HSA_STATUS_SUCCESS);
  CHECK_EQ_INT(hsa_executable_destroy(exec), HSA_STATUS_ERROR_INVALID_EXECUTABLE);
}

static hsa_status_t count_program_symbol(hsa_executable_t exec, hsa_executable_symbol_t s,
                                         void *data) {
  ++*(int *)data;
  return HSA_STATUS_SUCCESS;
}

static void test_variables_and_unsupported(void) {
  hsa_executable_t exec;
  REQUIRE(hsa_executable_create(HSA_PROFILE_FULL, HSA_EXECUTABLE_STATE_UNFROZEN, NULL, &exec) ==
          HSA_STATUS_SUCCESS);
  static int global_value;
  CHECK_EQ_INT(hsa_executable_global_variable_define(exec, "g", &global_value), HSA_STATUS_SUCCESS);
  CHECK_EQ_INT(hsa_executable_global_variable_define(exec, "g", &global_value),
               HSA_STATUS_ERROR_VARIABLE_ALREADY_DEFINED);
  int count = 0;
  hsa_executable_iterate_program_symbols(exec, count_program_symbol, &count);
  CHECK_EQ_INT(count, 1);
  hsa_executable_symbol_t symbol;
  CHECK_EQ_INT(hsa_executable_get_symbol_by_name(exec, "g", NULL, &symbol), HSA_STATUS_SUCCESS);
  uint64_t address = 0;
  hsa_executable_symbol_get_info(symbol, HSA_EXECUTABLE_SYMBOL_INFO_VARIABLE_ADDRESS, &address);
  CHECK(address == (uint64_t)(uintptr_t)&global_value);
  hsa_code_object_t v1 = {0};
  CHECK_EQ_INT(hsa_code_object_destroy(v1), HSA_STATUS_ERROR_INVALID_CODE_OBJECT);
  CHECK_EQ_INT(hsa_executable_create_alt(HSA_PROFILE_FULL, (hsa_default_float_rounding_mode_t)9,
                                         NULL, &exec),
               HSA_STATUS_ERROR_INVALID_ARGUMENT);
  hsa_executable_destroy(exec);
}

/* Destroyed objects' handles are refused without reading their freed
 * memory (AddressSanitizer checks that under make check-asan). */
static void test_stale_handles(void) {
  hsa_executable_t exec;
  REQUIRE(hsa_executable_create(HSA_PROFILE_FULL, HSA_EXECUTABLE_STATE_UNFROZEN, NULL, &exec) ==
          HSA_STATUS_SUCCESS);
  static int global_value;
  CHECK_EQ_INT(hsa_executable_global_variable_define(exec, "g", &global_value), HSA_STATUS_SUCCESS);
  hsa_executable_symbol_t symbol;
  CHECK_EQ_INT(hsa_executable_get_symbol_by_name(exec, "g", NULL, &symbol), HSA_STATUS_SUCCESS);
  CHECK_EQ_INT(hsa_executable_destroy(exec), HSA_STATUS_SUCCESS);
  CHECK_EQ_INT(hsa_executable_destroy(exec), HSA_STATUS_ERROR_INVALID_EXECUTABLE);
  hsa_executable_state_t state;
  CHECK_EQ_INT(hsa_executable_get_info(exec, HSA_EXECUTABLE_INFO_STATE, &state),
               HSA_STATUS_ERROR_INVALID_EXECUTABLE);
  uint64_t address;
  CHECK_EQ_INT(
      hsa_executable_symbol_get_info(symbol, HSA_EXECUTABLE_SYMBOL_INFO_VARIABLE_ADDRESS, &address),
      HSA_STATUS_ERROR_INVALID_EXECUTABLE_SYMBOL);

  static const char bytes[16] = "not an ELF file";
  hsa_code_object_reader_t reader;
  REQUIRE(hsa_code_object_reader_create_from_memory(bytes, sizeof(bytes), &reader) ==
          HSA_STATUS_SUCCESS);
  CHECK_EQ_INT(hsa_code_object_reader_destroy(reader), HSA_STATUS_SUCCESS);
  CHECK_EQ_INT(hsa_code_object_reader_destroy(reader),
               HSA_STATUS_ERROR_INVALID_CODE_OBJECT_READER);

  hsa_signal_t signal;
  REQUIRE(hsa_signal_create(1, 0, NULL, &signal) == HSA_STATUS_SUCCESS);
  hsa_signal_group_t group;
  REQUIRE(hsa_signal_group_create(1, &signal, 0, NULL, &group) == HSA_STATUS_SUCCESS);
  CHECK_EQ_INT(hsa_signal_group_destroy(group), HSA_STATUS_SUCCESS);
  CHECK_EQ_INT(hsa_signal_group_destroy(group), HSA_STATUS_ERROR_INVALID_SIGNAL_GROUP);
  CHECK_EQ_INT(hsa_signal_destroy(signal), HSA_STATUS_SUCCESS);
  CHECK_EQ_INT(hsa_signal_destroy(signal), HSA_STATUS_ERROR_INVALID_SIGNAL);
}

/* Creating and destroying many executables takes time linear in their
 * number (the suite destroys 65,536, oldest first). */
static void test_many_executables(void) {
  enum { COUNT = 65536 };
  hsa_executable_t *execs = calloc(COUNT, sizeof(*execs));
  REQUIRE(execs);
  struct timespec start, end;
  clock_gettime(CLOCK_MONOTONIC, &start);
  for (int i = 0; i < COUNT; i++)
    REQUIRE(hsa_executable_create(HSA_PROFILE_FULL, HSA_EXECUTABLE_STATE_UNFROZEN, NULL,
                                  &execs[i]) == HSA_STATUS_SUCCESS);
  for (int i = 0; i < COUNT; i++)
    CHECK_EQ_INT(hsa_executable_destroy(execs[i]), HSA_STATUS_SUCCESS);
  clock_gettime(CLOCK_MONOTONIC, &end);
  double seconds = (double)(end.tv_sec - start.tv_sec) + (end.tv_nsec - start.tv_nsec) * 1e-9;
  CHECK(seconds < 5.0);
  free(execs);
}

int main(void) {
  if (hsa_init() != HSA_STATUS_SUCCESS) return 1;
  agent = util_cpu_agent();
  RUN(test_bad_code_objects);
  RUN(test_load_and_symbols);
  RUN(test_variables_and_unsupported);
  RUN(test_stale_handles);
  RUN(test_many_executables);
  hsa_shut_down();
  CHECK_EXIT();
}
