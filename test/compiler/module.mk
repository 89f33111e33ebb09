# test/compiler/: the compiler and fat binaries end to end through the loader.
$(BUILD)/test/compiler/test_compiler: test/compiler/test_compiler.c test/api/api.h test/check.h \
                                      $(BUILD)/icd/aquila.icd $(BUILD)/clfatbin | deps
	@mkdir -p $(dir $@)
	$(CC) -std=c11 -O2 -g $(WARN) -D_GNU_SOURCE -o $@ $< -lOpenCL -lm

TESTS += $(BUILD)/test/compiler/test_compiler

# GPU targets (AMD code objects, NVIDIA PTX) built by clfatbin; a shell test.
$(BUILD)/test/compiler/test_gpu_targets: test/compiler/test_gpu_targets.sh $(BUILD)/clfatbin
	@mkdir -p $(dir $@)
	cp $< $@ && chmod +x $@

TESTS += $(BUILD)/test/compiler/test_gpu_targets

# The footprint analysis's report for kernels of each kind; a shell test.
$(BUILD)/test/compiler/test_footprint: test/compiler/test_footprint.sh $(BUILD)/clfatbin
	@mkdir -p $(dir $@)
	cp $< $@ && chmod +x $@

TESTS += $(BUILD)/test/compiler/test_footprint

# SPIR-V made from the samples at test time, run and verified; a shell test.
$(BUILD)/test/compiler/test_spirv_samples: test/compiler/test_spirv_samples.sh $(SAMPLES)
	@mkdir -p $(dir $@)
	cp $< $@ && chmod +x $@

TESTS += $(BUILD)/test/compiler/test_spirv_samples

# The whole-function vectorizer against the scalar build of the same kernels.
$(BUILD)/test/compiler/test_vectorize: test/compiler/test_vectorize.c test/api/api.h test/check.h \
                                       $(BUILD)/icd/aquila.icd | deps
	@mkdir -p $(dir $@)
	$(CC) -std=c11 -O2 -g $(WARN) -D_GNU_SOURCE -o $@ $< -lOpenCL -lm

TESTS += $(BUILD)/test/compiler/test_vectorize

# Kernels reduced from `make fuzz-compiler` findings (test/fuzz/).
$(BUILD)/test/compiler/test_fuzz_found: test/compiler/test_fuzz_found.c test/api/api.h test/check.h \
                                        $(BUILD)/icd/aquila.icd | deps
	@mkdir -p $(dir $@)
	$(CC) -std=c11 -O2 -g $(WARN) -D_GNU_SOURCE -o $@ $< -lOpenCL -lm

TESTS += $(BUILD)/test/compiler/test_fuzz_found

# AQUILA_VECTORIZE=check: the vectorizer's self-check reports a difference.
$(BUILD)/test/compiler/test_vector_check: test/compiler/test_vector_check.c test/api/api.h \
                                          test/check.h $(BUILD)/icd/aquila.icd | deps
	@mkdir -p $(dir $@)
	$(CC) -std=c11 -O2 -g $(WARN) -D_GNU_SOURCE -o $@ $< -lOpenCL -lm

TESTS += $(BUILD)/test/compiler/test_vector_check
