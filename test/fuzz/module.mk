# `make fuzz-compiler`: CLSmith's random OpenCL C kernels on Aquila, pocl and
# Oclgrind (test/fuzz/fuzz-compiler.sh, docs/CONFORMANCE.md "CLSmith"). Not
# part of `make check`. CLSmith is built outside the tree and named by
# CLSMITH=<its build folder>; FUZZ_TIME= seconds for the whole run, shared by
# the modes (FUZZ_MODES=, FUZZ_COUNT= kernels a mode at most, FUZZ_SEED=,
# FUZZ_TIMEOUT=, FUZZ_REF_TIMEOUT=, FUZZ_SMALL=: see the script).
FUZZ_COMPILER_PACKAGES := pocl-opencl-icd oclgrind opencl-headers ocl-icd-opencl-dev

# `make fuzz` sets FUZZ_TIME ?= 60 for libFuzzer; this run's default is 600.
FUZZ_COMPILER_TIME := $(if $(filter file,$(origin FUZZ_TIME)),600,$(FUZZ_TIME))

.PHONY: fuzz-compiler fuzz-compiler-deps
fuzz-compiler-deps:
	$(call install_missing,$(FUZZ_COMPILER_PACKAGES))

fuzz-compiler: all fuzz-compiler-deps
	@BUILD=$(BUILD) CLSMITH=$(CLSMITH) FUZZ_TIME=$(FUZZ_COMPILER_TIME) bash test/fuzz/fuzz-compiler.sh
