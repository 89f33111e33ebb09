# samples/: programs written only against the OpenCL 1.2 API, linked to the
# system ICD loader (-lOpenCL), as a user would build them.
SAMPLE_NAMES := vectoradd
SAMPLE_BINS := $(foreach s,$(SAMPLE_NAMES),$(BUILD)/samples/$(s))

$(BUILD)/samples/%: samples/%/*.c | deps
	@mkdir -p $(dir $@)
	$(CC) -std=c11 -O2 -g $(WARN) -D_GNU_SOURCE -o $@ $(filter %.c,$^) -lOpenCL -lm

SAMPLES += $(SAMPLE_BINS)
