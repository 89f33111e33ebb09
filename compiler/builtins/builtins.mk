# Aquila's OpenCL C builtin library for the x86-64 CPU target, and its test.
# Included from compiler/module.mk.
#
#   BUILTINS_BC        $(BUILD)/compiler/builtins-x86_64.bc, linked into each
#                      user program (baseline x86-64; see BUILTINS_CPUS)
#   BUILTINS_CLFLAGS   the flags the library is compiled with; user programs
#                      must be compiled with the same ones (plus -emit-llvm -c)
#   BUILTINS_CPU_BCS   the same library for each -march in BUILTINS_CPUS
#   BUILTINS_TEST      the test program (added to TESTS)
#   MATH_DEVICE_TEST   the float math builtins end to end, through the ICD
#                      loader (added to TESTS)
#
# Linking: -Xclang -mlink-builtin-bitcode works (the test uses it), but clang
# then marks every linked function, the libm declarations included,
# convergent, and a convergent call keeps the loop vectorizer away from any
# loop calling sin, exp, ... Linking with llvm::Linker (LinkOnlyNeeded, then
# internalize; llvm-link --only-needed --internalize) and running O2/O3
# afterwards keeps libm calls plain, so -fveclib=libmvec can widen them.
# Only __aquila_barrier must stay convergent.

BUILTINS_CL_EXT := +cl_khr_fp64,+cl_khr_int64_base_atomics,+cl_khr_int64_extended_atomics,+cl_khr_global_int32_base_atomics,+cl_khr_global_int32_extended_atomics,+cl_khr_local_int32_base_atomics,+cl_khr_local_int32_extended_atomics,+cl_khr_byte_addressable_store,+cl_khr_3d_image_writes
# -cl-ext must go through -Xclang: the driver ignores it (clang 19 warns
# "argument unused"). -Wno-psabi: see BUILTINS_CPUS below.
# -fno-slp-vectorize: the SLP vectorizer would pack a scalar builtin's
# independent halves (sin and cos of one argument, say) into <2 x float>
# operations, and the loop vectorizer rejects a work-item loop holding any
# vector-typed instruction ("instruction return type cannot be vectorized"):
# vectorizing is left to the kernel's own optimization, after inlining.
# -faddress-space-map-mangling=yes: pointer arguments' address spaces are
# mangled as their numbers (PU3AS1f, not PU8CLglobalf), as SPIR's are, so
# that the calls of a SPIR-V module's translation (compiler/frontend/spirv.c)
# name the same functions as OpenCL C's (compile.c passes it too).
# -fno-strict-aliasing: the library's accesses are inlined into programs
# that may reach the same memory through other types (a vstore4 of floats
# read back by a vload4 of ints): without -cl-strict-aliasing, OpenCL C
# allows no type-based alias analysis, so the library carries no TBAA tags.
BUILTINS_CLFLAGS := -x cl -cl-std=CL1.2 -target x86_64-pc-linux-gnu -fPIC \
  -Xclang -finclude-default-header -Xclang -ffake-address-space-map \
  -Xclang -faddress-space-map-mangling=yes \
  -Xclang -cl-ext=$(BUILTINS_CL_EXT) -O2 -fno-slp-vectorize -fno-strict-aliasing -Wno-psabi
BUILTINS_LLVM_LINK ?= $(LLVM_DIR)/bin/llvm-link
# OpenCL C 3.0's C11 atomics, work_group_barrier, 2.0's work-item
# functions and the generic address space's functions are declared by
# clang's header only from 2.0 on: their files are compiled as OpenCL C 3.0
# with the optional features user programs get (compiler/frontend/options.c's
# CL3.0 arguments; the device's list is runtime/features.c).
BUILTINS_CL30_FLAGS := -cl-std=CL3.0 \
  -Xclang -cl-ext=-__opencl_c_pipes,-__opencl_c_device_enqueue,-__opencl_c_read_write_images,-__opencl_c_subgroups,-cl_khr_subgroups \
  -D__opencl_c_atomic_scope_device=1 -D__opencl_c_atomic_scope_all_devices=1 \
  -D__opencl_c_work_group_collective_functions=1
BUILTINS_CL30_PARTS := atomic_c11 opencl_c_3 generic collectives
$(foreach f,$(BUILTINS_CL30_PARTS),$(BUILD)/compiler/builtins/$(f).bc $(BUILD)/compiler/builtins/%/$(f).bc): BUILTINS_CLFLAGS += $(BUILTINS_CL30_FLAGS)
# Sub-groups (subgroups.cl): OpenCL C 3.0 with __opencl_c_subgroups and the
# sub-group extensions user programs get (compiler/frontend/options.c's
# SUB_GROUP_EXTENSION_MACROS: clang's -cl-ext does not know the
# cl_khr_subgroup_* names, its header tests the macros).
BUILTINS_SUB_GROUP_FLAGS := -cl-std=CL3.0 \
  -Xclang -cl-ext=-__opencl_c_pipes,-__opencl_c_device_enqueue,-__opencl_c_read_write_images \
  -Dcl_khr_subgroup_extended_types=1 -Dcl_khr_subgroup_non_uniform_vote=1 \
  -Dcl_khr_subgroup_ballot=1 -Dcl_khr_subgroup_non_uniform_arithmetic=1 \
  -Dcl_khr_subgroup_shuffle=1 -Dcl_khr_subgroup_shuffle_relative=1 -Dcl_khr_subgroup_rotate=1 \
  -Dcl_khr_subgroup_clustered_reduce=1
$(BUILD)/compiler/builtins/subgroups.bc $(BUILD)/compiler/builtins/%/subgroups.bc: BUILTINS_CLFLAGS += $(BUILTINS_SUB_GROUP_FLAGS)

BUILTINS_SRCS := $(wildcard compiler/builtins/*.cl)
BUILTINS_PARTS := $(patsubst compiler/builtins/%.cl,$(BUILD)/compiler/builtins/%.bc,$(BUILTINS_SRCS)) \
                  $(wildcard compiler/builtins/*.ll)
BUILTINS_BC := $(BUILD)/compiler/builtins-x86_64.bc

# -MMD writes the .d beside each .bc; the top-level Makefile includes them,
# so editing clc.h rebuilds every part.
# builtins.mk itself: a change of the flags above rebuilds the library.
$(BUILD)/compiler/builtins/%.bc: compiler/builtins/%.cl compiler/builtins/builtins.mk | deps
	@mkdir -p $(dir $@)
	$(CLANG) $(BUILTINS_CLFLAGS) -emit-llvm -MMD -MP -c $< -o $@

$(BUILTINS_BC): $(BUILTINS_PARTS)
	@mkdir -p $(dir $@)
	$(BUILTINS_LLVM_LINK) $^ -o $@

LIBS += $(BUILTINS_BC)

# Vectors wider than 16 bytes are passed in registers only when the target
# has AVX, so a library built for baseline x86-64 and a program built with
# -march=x86-64-v3 disagree on how float8 or double4 reach a builtin (the
# call is then neither inlined nor correct). A program compiled for another
# -march must link the library built for the same one: list the levels in
# BUILTINS_CPUS (e.g. x86-64-v2 x86-64-v3 x86-64-v4) to get
# $(BUILD)/compiler/builtins-<cpu>.bc for each, in BUILTINS_CPU_BCS.
BUILTINS_CPUS ?=
BUILTINS_CPU_BCS := $(foreach c,$(BUILTINS_CPUS),$(BUILD)/compiler/builtins-$(c).bc)
define BUILTINS_CPU_RULES
$(BUILD)/compiler/builtins/$(1)/%.bc: compiler/builtins/%.cl compiler/builtins/builtins.mk | deps
	@mkdir -p $$(dir $$@)
	$$(CLANG) $$(BUILTINS_CLFLAGS) -march=$(1) -emit-llvm -MMD -MP -c $$< -o $$@
$(BUILD)/compiler/builtins-$(1).bc: $(patsubst compiler/builtins/%.cl,$(BUILD)/compiler/builtins/$(1)/%.bc,$(BUILTINS_SRCS)) compiler/builtins/libm.ll
	$$(BUILTINS_LLVM_LINK) $$^ -o $$@
endef
$(foreach c,$(BUILTINS_CPUS),$(eval $(call BUILTINS_CPU_RULES,$(c))))
LIBS += $(BUILTINS_CPU_BCS)

# The test: OpenCL C test functions compiled exactly as user code is, with
# the library linked in the way the compiler will link it, into a shared
# object that the C test program dlopens.
BUILTINS_TEST_DIR := $(BUILD)/test/builtins
BUILTINS_TEST := $(BUILTINS_TEST_DIR)/test-builtins

$(BUILTINS_TEST_DIR)/cltests.o: test/builtins/cltests.cl test/builtins/funcs.h $(BUILTINS_BC) | deps
	@mkdir -p $(dir $@)
	$(CLANG) $(BUILTINS_CLFLAGS) -Itest/builtins -Xclang -mlink-builtin-bitcode \
	  -Xclang $(BUILTINS_BC) -MMD -MP -c $< -o $@

$(BUILTINS_TEST_DIR)/cltests.so: $(BUILTINS_TEST_DIR)/cltests.o
	$(CLANG) -shared -o $@ $< -lm

$(BUILTINS_TEST): test/builtins/test_builtins.c test/builtins/funcs.h test/check.h \
                  $(BUILTINS_TEST_DIR)/cltests.so | deps
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -Itest -rdynamic -o $@ test/builtins/test_builtins.c -ldl -lm -pthread

TESTS += $(BUILTINS_TEST)

# The image builtins' test: the same scheme, with images built in memory as
# struct aquila_image (hsa/include/aquila/cpu_abi.h).
IMAGES_TEST := $(BUILTINS_TEST_DIR)/test-images

$(BUILTINS_TEST_DIR)/imagetests.o: test/builtins/imagetests.cl $(BUILTINS_BC) | deps
	@mkdir -p $(dir $@)
	$(CLANG) $(BUILTINS_CLFLAGS) -Xclang -mlink-builtin-bitcode \
	  -Xclang $(BUILTINS_BC) -MMD -MP -c $< -o $@

$(BUILTINS_TEST_DIR)/imagetests.so: $(BUILTINS_TEST_DIR)/imagetests.o
	$(CLANG) -shared -o $@ $< -lm

$(IMAGES_TEST): test/builtins/test_images.c test/check.h hsa/include/aquila/cpu_abi.h \
                $(BUILTINS_TEST_DIR)/imagetests.so | deps
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -Itest -Ihsa/include -o $@ test/builtins/test_images.c -ldl -lm

TESTS += $(IMAGES_TEST)

# The same math builtins end to end: kernels built by Aquila for this CPU and
# run through the ICD loader, against glibc's double-precision functions.
MATH_DEVICE_TEST := $(BUILTINS_TEST_DIR)/test-math-device

$(MATH_DEVICE_TEST): test/builtins/test_math_device.c test/api/api.h test/check.h \
                     $(BUILD)/icd/aquila.icd | deps
	@mkdir -p $(dir $@)
	$(CC) -std=c11 -O2 -g $(WARN) -D_GNU_SOURCE -o $@ $< -lOpenCL -lm

TESTS += $(MATH_DEVICE_TEST)
