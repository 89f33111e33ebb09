# compiler/: OpenCL C to CPU code objects (libclang, the clang driver, LLVM-C).
-include compiler/builtins/builtins.mk

BUILTINS_BC ?= $(BUILD)/compiler/builtins-x86_64.bc
# Two builds of the API in aquila/compiler.h:
# - libaquila_compiler.a does the work in-process (libclang, LLVM); the
#   compiler helper process aquila-compiler and clfatbin link it;
# - libaquila_compiler_client.a is what libaquila.so links: it hands the work
#   to aquila-compiler processes (helper_client.c) and serves kernel-cache
#   hits itself, so LLVM never loads into an application.
#
# The folders, in the order a kernel passes them (compiler/README.md):
# frontend/, workgroup/, vectorize/, analysis/, codegen/; helper/ is how
# libaquila.so reaches the compiler, support/ what every stage uses.
COMPILER_CLIENT_ONLY := compiler/helper/helper.c compiler/helper/helper_client.c
COMPILER_SRCS := $(filter-out $(COMPILER_CLIENT_ONLY),$(wildcard compiler/*.c compiler/*/*.c))
COMPILER_OBJS := $(COMPILER_SRCS:%.c=$(BUILD)/obj/%.o) $(BUILD)/obj/compiler/builtins/builtins_blob.o \
                 $(BUILD)/obj/compiler/frontend/clang_in_process.o $(BUILD)/obj/compiler/codegen/x86_cpu.o
# clang_in_process.cpp uses clang's C++ API, from libclang-cpp (clang-19
# depends on it; its headers come with libclang-19-dev). By the library's
# file name: the unversioned link is in libclang-cpp19-dev, not needed.
LIBCLANG_CPP := -l:libclang-cpp.so.19.1
COMPILER_LDLIBS := -lclang-19 $(LIBCLANG_CPP) -lLLVM-19 -lstdc++
COMPILER_CLIENT_SRCS := compiler/helper/helper_client.c compiler/helper/helper_wire.c \
                        compiler/helper/cache.c compiler/codegen/gpu.c compiler/frontend/options.c \
                        compiler/support/util.c compiler/support/strbuf.c compiler/support/spawn.c
COMPILER_CLIENT_OBJS := $(COMPILER_CLIENT_SRCS:%.c=$(BUILD)/obj/%.o)

$(COMPILER_OBJS): CPPFLAGS += -I$(LLVM_DIR)/include
# The compiler's own headers are named by folder ("support/strbuf.h").
$(BUILD)/obj/compiler/%.o: CPPFLAGS += -Icompiler
$(BUILD)/gen/compiler_hash.h: compiler/frontend/clang_in_process.cpp compiler/codegen/x86_cpu.cpp

$(BUILD)/obj/compiler/builtins/builtins_blob.o: compiler/builtins/builtins_blob.S $(BUILTINS_BC) | deps
	@mkdir -p $(dir $@)
	$(CC) -c -DAQUILA_BUILTINS_BC='"$(BUILTINS_BC)"' $< -o $@

$(BUILD)/gen/builtins_hash.h: $(BUILTINS_BC)
	@mkdir -p $(dir $@)
	echo "#define AQUILA_BUILTINS_HASH \"$$(sha256sum $< | cut -d' ' -f1)\"" > $@

$(BUILD)/gen/compiler_hash.h: $(wildcard compiler/*.c compiler/*/*.c) \
                              $(wildcard compiler/*/*.h compiler/include/aquila/*.h) \
                              hsa/include/aquila/cpu_abi.h
	@mkdir -p $(dir $@)
	echo "#define AQUILA_COMPILER_HASH \"$$(cat $^ | sha256sum | cut -d' ' -f1)\"" > $@

$(BUILD)/obj/compiler/helper/cache.o: $(BUILD)/gen/builtins_hash.h $(BUILD)/gen/compiler_hash.h

# The C library functions the builtin library calls: the only external
# functions a code object may use (codegen.c checks).
$(BUILD)/gen/builtins_externals.h: $(BUILTINS_BC)
	@mkdir -p $(dir $@)
	$(LLVM_DIR)/bin/llvm-nm --undefined-only $< | awk '$$2 !~ /^__aquila_/ {printf "\"%s\",\n", $$2}' \
	  | sort -u > $@

$(BUILD)/obj/compiler/codegen/codegen.o: $(BUILD)/gen/builtins_externals.h

$(BUILD)/libaquila_compiler.a: $(COMPILER_OBJS)
	@rm -f $@
	ar rcs $@ $^

LIBS += $(BUILD)/libaquila_compiler.a

$(BUILD)/libaquila_compiler_client.a: $(COMPILER_CLIENT_OBJS)
	@rm -f $@
	ar rcs $@ $^

# The helper lives beside libaquila.so (build/ and $(LIBDIR)), in aquila/.
COMPILER_HELPER := $(BUILD)/aquila/aquila-compiler
$(COMPILER_HELPER): $(BUILD)/obj/compiler/helper/helper.o $(BUILD)/libaquila_compiler.a $(BUILD)/libaquila_fatbin.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ $(BUILD)/obj/compiler/helper/helper.o $(BUILD)/libaquila_compiler.a \
	  $(BUILD)/libaquila_fatbin.a $(COMPILER_LDLIBS) -lelf $(LDLIBS_SYS)

LIBS += $(BUILD)/libaquila_compiler_client.a $(COMPILER_HELPER)
AQUILA_COMPILER_LDLIBS := $(COMPILER_LDLIBS)
