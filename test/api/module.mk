# test/api/: OpenCL API tests, each a program linked only with the system
# ICD loader, as an application would be.
API_TEST_NAMES := test_platform_device test_context_queue test_opencl3 test_spirv test_svm test_buffers test_events test_program_kernel test_ndrange \
                  test_subdevices test_images test_threads test_fork test_misuse test_trace test_robust
API_TESTS := $(foreach t,$(API_TEST_NAMES),$(BUILD)/test/api/$(t))

$(BUILD)/test/api/%: test/api/%.c test/api/api.h test/check.h $(BUILD)/icd/aquila.icd | deps
	@mkdir -p $(dir $@)
	$(CC) -std=c11 -O2 -g $(WARN) -D_GNU_SOURCE -o $@ $< -lOpenCL -lpthread -lm

TESTS += $(API_TESTS)

# pyopencl on SVM, a Python test (python3-pyopencl: make's package list).
$(BUILD)/test/api/test_pyopencl_svm: test/api/test_pyopencl_svm.py $(BUILD)/icd/aquila.icd | deps
	@mkdir -p $(dir $@)
	cp $< $@ && chmod +x $@

TESTS += $(BUILD)/test/api/test_pyopencl_svm

# Only the API tests, for a quick loop: make check-api
.PHONY: check-api
check-api: $(API_TESTS)
	@$(LOADER_ENV) BUILD=$(BUILD) sh test/run-tests.sh $(API_TESTS)

# The CPU share: hsa/cpu_share.c's quota reading on fake trees (linked in),
# and the device's compute units through the loader.
$(BUILD)/test/api/test_cpu_share: test/api/test_cpu_share.c hsa/cpu_share.c hsa/cpu_share.h \
                                  hsa/cpu_topology.c hsa/cpu_topology.h \
                                  test/api/api.h test/check.h $(BUILD)/icd/aquila.icd | deps
	@mkdir -p $(dir $@)
	$(CC) -std=c11 -O2 -g $(WARN) -D_GNU_SOURCE -o $@ $< hsa/cpu_share.c hsa/cpu_topology.c -lOpenCL -lpthread -lm

TESTS += $(BUILD)/test/api/test_cpu_share
