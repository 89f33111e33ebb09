# hsa: Aquila's HSA 1.1 runtime with the CPU agent.
#   $(BUILD)/libaquila_hsa.a   hidden-visibility objects, linked into the ICD library
#   $(BUILD)/libaquila-hsa.so  standalone runtime exporting only hsa_* (soname libaquila-hsa.so.1)

HSA_SOURCES := hsa/runtime.c hsa/agent.c hsa/memory.c hsa/signal.c hsa/queue.c \
               hsa/cpu_agent.c hsa/cpu_share.c hsa/cpu_topology.c hsa/fiber.c hsa/fiber_x86_64.S hsa/address_spaces.c hsa/code_object.c \
               hsa/code_object_v1.c hsa/executable.c hsa/printf.c hsa/image.c hsa/handle.c \
               hsa/dispatch_check.c hsa/trace.c hsa/remote/agents.c \
               hsa/remote/settings.c
HSA_OBJS        := $(patsubst %,$(BUILD)/obj/%.o,$(basename $(HSA_SOURCES)))
HSA_SHARED_OBJS := $(patsubst %,$(BUILD)/obj-shared/%.o,$(basename $(HSA_SOURCES)))
HSA_LIBS_SYS    := -pthread -ldl -lm $(EXTRA_LDFLAGS)

$(BUILD)/libaquila_hsa.a: $(HSA_OBJS)
	@mkdir -p $(dir $@)
	rm -f $@
	ar rcs $@ $^

$(BUILD)/libaquila-hsa.so: $(HSA_SHARED_OBJS) hsa/libaquila-hsa.map
	@mkdir -p $(dir $@)
	$(CC) -shared -Wl,-soname,libaquila-hsa.so.1 -Wl,--version-script=hsa/libaquila-hsa.map \
	  -Wl,-z,defs -o $@ $(HSA_SHARED_OBJS) $(HSA_LIBS_SYS)
	ln -sf libaquila-hsa.so $(BUILD)/libaquila-hsa.so.1

LIBS += $(BUILD)/libaquila_hsa.a $(BUILD)/libaquila-hsa.so

# Remote agents (docs/REMOTE.md): the client side, loaded by the HSA
# runtime only when AQUILA_REMOTE is set, beside libaquila.so in aquila/;
# and aquilad, the daemon that serves a machine's CPU agent, on the
# standalone HSA runtime.
REMOTE_COMMON   := hsa/remote/link.c hsa/remote/wire.c hsa/remote/auth.c
REMOTE_LIBS_SYS := -lucp -lucs -lsodium
REMOTE_PLUGIN   := $(BUILD)/aquila/libaquila-remote.so
AQUILAD         := $(BUILD)/aquilad
REMOTE_PLUGIN_OBJS := $(patsubst %,$(BUILD)/obj/%.o,$(basename hsa/remote/client.c $(REMOTE_COMMON)))
AQUILAD_OBJS       := $(patsubst %,$(BUILD)/obj/%.o,$(basename hsa/remote/aquilad.c $(REMOTE_COMMON)))

$(BUILD)/obj/hsa/remote/aquilad.o: CPPFLAGS += -I$(LLVM_DIR)/include

$(REMOTE_PLUGIN): $(REMOTE_PLUGIN_OBJS)
	@mkdir -p $(dir $@)
	$(CC) -shared -Wl,-z,defs -o $@ $(REMOTE_PLUGIN_OBJS) $(REMOTE_LIBS_SYS) -pthread $(EXTRA_LDFLAGS)

$(AQUILAD): $(AQUILAD_OBJS) $(BUILD)/libaquila-hsa.so
	$(CC) -o $@ $(AQUILAD_OBJS) -L$(BUILD) -laquila-hsa -Wl,-rpath,'$$ORIGIN' \
	  -L$(LLVM_DIR)/lib -lLLVM-19 $(REMOTE_LIBS_SYS) -pthread $(EXTRA_LDFLAGS)

LIBS += $(REMOTE_PLUGIN)
PROGS += $(AQUILAD)

# Tests: hand-written CPU code objects, and programs using only the public API.
HSA_TEST_KERNELS := $(patsubst test/hsa/kernels/%.c,$(BUILD)/test/hsa/%.so,$(wildcard test/hsa/kernels/*.c))
HSA_TEST_NAMES   := test_runtime test_signal test_queue test_dispatch test_executable test_image \
                    test_cu_mask test_help test_fork
HSA_TESTS        := $(addprefix $(BUILD)/test/hsa/,$(HSA_TEST_NAMES))
HSA_BENCH        := $(BUILD)/test/hsa/bench_dispatch

$(BUILD)/test/hsa/%.so: test/hsa/kernels/%.c hsa/include/aquila/cpu_abi.h
	@mkdir -p $(dir $@)
	$(CC) -std=c11 -O2 -g -Wall -Wextra -Wno-unused-parameter -fPIC -shared -Ihsa/include -o $@ $<

$(BUILD)/test/hsa/%: test/hsa/%.c test/hsa/hsa_test_util.h test/check.h $(BUILD)/libaquila-hsa.so $(HSA_TEST_KERNELS)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -Itest -Itest/hsa -DHSA_TEST_KERNEL_DIR='"$(abspath $(BUILD)/test/hsa)"' \
	  -o $@ $< -L$(BUILD) -laquila-hsa -Wl,-rpath,$(abspath $(BUILD)) $(LDLIBS_SYS)

TESTS += $(HSA_TESTS)
PROGS += $(HSA_BENCH)
# The tests load these at run time: make must not delete them as
# intermediate files of the pattern rule above.
.SECONDARY: $(HSA_TEST_KERNELS)

.PHONY: hsa-check
hsa-check: $(HSA_TESTS)
	@sh test/run-tests.sh $(HSA_TESTS)
