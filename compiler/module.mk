# compiler/: OpenCL C to CPU code objects (libclang, the clang driver, LLVM-C).
-include compiler/builtins/builtins.mk

BUILTINS_BC ?= $(BUILD)/compiler/builtins-x86_64.bc
COMPILER_SRCS := $(wildcard compiler/*.c)
COMPILER_OBJS := $(COMPILER_SRCS:%.c=$(BUILD)/obj/%.o) $(BUILD)/obj/compiler/builtins_blob.o
COMPILER_LDLIBS := -lclang-19 -lLLVM-19

$(COMPILER_OBJS): CPPFLAGS += -I$(LLVM_DIR)/include

$(BUILD)/obj/compiler/builtins_blob.o: compiler/builtins_blob.S $(BUILTINS_BC) | deps
	@mkdir -p $(dir $@)
	$(CC) -c -DAQUILA_BUILTINS_BC='"$(BUILTINS_BC)"' $< -o $@

$(BUILD)/gen/builtins_hash.h: $(BUILTINS_BC)
	@mkdir -p $(dir $@)
	echo "#define AQUILA_BUILTINS_HASH \"$$(sha256sum $< | cut -d' ' -f1)\"" > $@

$(BUILD)/gen/compiler_hash.h: $(COMPILER_SRCS) $(wildcard compiler/*.h compiler/include/aquila/*.h) \
                              hsa/include/aquila/cpu_abi.h
	@mkdir -p $(dir $@)
	echo "#define AQUILA_COMPILER_HASH \"$$(cat $^ | sha256sum | cut -d' ' -f1)\"" > $@

$(BUILD)/obj/compiler/cache.o: $(BUILD)/gen/builtins_hash.h $(BUILD)/gen/compiler_hash.h

# The C library functions the builtin library calls: the only external
# functions a code object may use (codegen.c checks).
$(BUILD)/gen/builtins_externals.h: $(BUILTINS_BC)
	@mkdir -p $(dir $@)
	$(LLVM_DIR)/bin/llvm-nm --undefined-only $< | awk '$$2 !~ /^__aquila_/ {printf "\"%s\",\n", $$2}' \
	  | sort -u > $@

$(BUILD)/obj/compiler/codegen.o: $(BUILD)/gen/builtins_externals.h

$(BUILD)/libaquila_compiler.a: $(COMPILER_OBJS)
	@rm -f $@
	ar rcs $@ $^

LIBS += $(BUILD)/libaquila_compiler.a
AQUILA_COMPILER_LDLIBS := $(COMPILER_LDLIBS)
