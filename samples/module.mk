# samples/: programs written only against the OpenCL 1.2 API, linked to the
# system ICD loader (-lOpenCL), as a user would build them. Each is one folder
# with its .c files; samples/common/ is linked into all of them.
SAMPLE_NAMES := vectoradd nbody sobelfilter blackscholes histogram matrixmul reduction \
                prefixsum recursivegaussian transpose bitonicsort binomialoption \
                convolution
SAMPLE_BINS := $(foreach s,$(SAMPLE_NAMES),$(BUILD)/samples/$(s))
SAMPLE_COMMON := samples/common/sample.c samples/common/sample.h

$(BUILD)/samples/%: samples/%/*.c $(SAMPLE_COMMON) | deps
	@mkdir -p $(dir $@)
	$(CC) -std=c11 -O2 -g $(WARN) -D_GNU_SOURCE -o $@ $(filter %.c,$^) -lOpenCL -lm

SAMPLES += $(SAMPLE_BINS)

# `make bench`: the samples on Aquila and on pocl, plus this machine's limits
# (bench/stream.c, bench/fmapeak.c), a runtime microbenchmark (bench/micro.c),
# what building programs costs (bench/buildtime.c) and the float math builtins'
# speed and accuracy (bench/mathbench.c); then real applications' own
# benchmarks on both (bench/apps-bench.sh: CLBlast through bench/clblast_sgemm.c,
# clpeak, hashcat, clFFT), installed if missing, and the time to their first
# result with every cache cold (bench/first-result.sh); last, the targets those
# figures are held to, with their limits (bench/targets.sh, from the medians both
# parts leave in $(BUILD)/bench-results.txt).
BENCH_BINS := $(BUILD)/bench/stream $(BUILD)/bench/fmapeak $(BUILD)/bench/micro \
              $(BUILD)/bench/buildtime $(BUILD)/bench/nbody_c $(BUILD)/bench/mathbench \
              $(BUILD)/bench/remote

$(BUILD)/bench/stream $(BUILD)/bench/fmapeak: $(BUILD)/bench/%: bench/%.c | deps
	@mkdir -p $(dir $@)
	$(CC) -O3 -march=native -fopenmp -o $@ $<
# NBody as hand-written C, the yardstick for the NBody sample. -fno-math-errno
# lets gcc vectorize 1/sqrtf (the result is unchanged: errno only).
$(BUILD)/bench/nbody_c: bench/nbody_c.c | deps
	@mkdir -p $(dir $@)
	$(CC) -O3 -march=native -fno-math-errno -fopenmp -o $@ $< -lm
$(BUILD)/bench/micro: bench/micro.c $(SAMPLE_COMMON) | deps
	@mkdir -p $(dir $@)
	$(CC) -std=c11 -O2 -g $(WARN) -D_GNU_SOURCE -o $@ $(filter %.c,$^) -lOpenCL -lm
$(BUILD)/bench/mathbench: bench/mathbench.c $(SAMPLE_COMMON) | deps
	@mkdir -p $(dir $@)
	$(CC) -std=c11 -O2 -g $(WARN) -D_GNU_SOURCE -o $@ $(filter %.c,$^) -lOpenCL -lm -pthread
# A remote device's round trip, command rate and transfers beside ucx_perftest (bench/remote.sh).
$(BUILD)/bench/remote: bench/remote.c | deps
	@mkdir -p $(dir $@)
	$(CC) -std=c11 -O2 -g $(WARN) -D_GNU_SOURCE -o $@ $< -lOpenCL
$(BUILD)/bench/buildtime: bench/buildtime.c | deps
	@mkdir -p $(dir $@)
	$(CC) -std=c11 -O2 -g $(WARN) -D_GNU_SOURCE -o $@ $< -lOpenCL

# Only `make bench` needs these: CLBlast's headers and library for bench/clblast_sgemm.c.
$(BUILD)/bench/clblast_sgemm: bench/clblast_sgemm.c $(SAMPLE_COMMON) | deps bench-deps
	@mkdir -p $(dir $@)
	$(CC) -std=c11 -O2 -g $(WARN) -D_GNU_SOURCE -o $@ $(filter %.c,$^) -lclblast -lOpenCL -lm

# OpenBLAS (its pthread build: every core) for bench/openblas_sgemm.c, the tuned-BLAS
# limit that CLBlast's SGEMM is measured against.
OPENBLAS := /usr/lib/x86_64-linux-gnu/openblas-pthread
$(BUILD)/bench/openblas_sgemm: bench/openblas_sgemm.c | deps bench-deps
	@mkdir -p $(dir $@)
	$(CC) -std=c11 -O2 -g $(WARN) -I/usr/include/x86_64-linux-gnu/openblas-pthread -o $@ $< \
	  -L$(OPENBLAS) -Wl,-rpath,$(OPENBLAS) -lopenblas -lm

# bench/first-result.sh times pyopencl programs too (python3-pyopencl, numpy).
BENCH_PACKAGES := pocl-opencl-icd libclblast-dev clpeak hashcat clfft-client libopenblas-pthread-dev \
                  python3-pyopencl python3-numpy

.PHONY: bench bench-deps
bench-deps:
	$(call install_missing,$(BENCH_PACKAGES))

# Both parts run even when the first reports a failure; the target fails if either did.
bench: all bench-deps $(BENCH_BINS) $(BUILD)/bench/clblast_sgemm $(BUILD)/bench/openblas_sgemm
	@status=0; results=$(abspath $(BUILD))/bench-results.txt; rm -f $$results; \
	BENCH_RESULTS=$$results sh bench/bench.sh $(BUILD) $(abspath $(ICD_FILE)) || status=1; \
	echo; \
	BENCH_RESULTS=$$results sh bench/apps-bench.sh $(BUILD) $(abspath $(ICD_FILE)) || status=1; \
	echo; echo "Time to the first result, every cache cold (s, medians of 3; bench/first-result.sh)"; \
	sh bench/first-result.sh $(BUILD) 3 Aquila=$(abspath $(ICD_FILE)) pocl=/etc/OpenCL/vendors/pocl.icd || status=1; \
	echo; echo "Kernels from SPIR-V against the same source (medians, bench/spirv.sh)"; \
	sh bench/spirv.sh $(BUILD) $(abspath $(ICD_FILE)) || status=1; \
	echo; echo "A remote device on this machine beside ucx_perftest (bench/remote.sh)"; \
	sh bench/remote.sh $(BUILD) $(abspath $(ICD_FILE)) || status=1; \
	echo; echo "Targets of issue 48 from this run (bench/targets.sh)"; \
	sh bench/targets.sh $$results || status=1; \
	exit $$status

# Only the SPIR-V section of `make bench`.
.PHONY: bench-spirv
bench-spirv: all
	sh bench/spirv.sh $(BUILD) $(abspath $(ICD_FILE))

# Only the remote section of `make bench`.
.PHONY: bench-remote
bench-remote: all $(BUILD)/bench/remote
	sh bench/remote.sh $(BUILD) $(abspath $(ICD_FILE))

# hsa-vectoradd: an HSA program on the standalone HSA runtime (libaquila-hsa.so),
# loading its kernel from a fat binary that clfatbin builds for x86-64 levels.
HSA_SAMPLE := $(BUILD)/samples/hsa-vectoradd
HSA_SAMPLE_FATBIN := $(BUILD)/samples/hsa-vectoradd.fatbin

$(HSA_SAMPLE): samples/hsa-vectoradd/hsa_vectoradd.c $(BUILD)/libaquila-hsa.so $(FATBIN_LIB) | deps
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) -std=c11 -O2 -g $(WARN) -o $@ $< $(FATBIN_LIB) -L$(BUILD) -laquila-hsa \
	  -Wl,-rpath,$(abspath $(BUILD)) -lelf -pthread

$(HSA_SAMPLE_FATBIN): samples/hsa-vectoradd/vectoradd.cl $(BUILD)/clfatbin
	@mkdir -p $(dir $@)
	$(BUILD)/clfatbin build --target x86-64-v2 --target x86-64-v3 --target x86-64-v4 -o $@ $<

SAMPLES += $(HSA_SAMPLE) $(HSA_SAMPLE_FATBIN)
