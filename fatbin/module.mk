# fatbin/: the fat binary format (libelf): libaquila_fatbin.a reads, writes
# and selects from fat binaries for the runtime, the compiler and clfatbin;
# its tests, and `make fuzz` (libFuzzer on the reader).

FATBIN_LIB := $(BUILD)/libaquila_fatbin.a
FATBIN_LIB_SRCS := fatbin/fatbin.c fatbin/fatbin_write.c fatbin/fatbin_read.c fatbin/select.c
FATBIN_LIB_OBJS := $(FATBIN_LIB_SRCS:%.c=$(BUILD)/obj/%.o)
FATBIN_LDLIBS := -lelf -pthread

$(FATBIN_LIB): $(FATBIN_LIB_OBJS)
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^

LIBS += $(FATBIN_LIB)

# Tests: the library's unit tests, and make_sample, which makes good and bad
# fat binaries (for clfatbin's test and the fuzzer's corpus).
$(BUILD)/test/fatbin/test_fatbin: $(BUILD)/obj/test/fatbin/test_fatbin.o $(FATBIN_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ $^ $(FATBIN_LDLIBS) $(LDLIBS_SYS)

$(BUILD)/test/fatbin/make_sample: $(BUILD)/obj/test/fatbin/make_sample.o $(FATBIN_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ $^ $(FATBIN_LDLIBS) $(LDLIBS_SYS)

TESTS += $(BUILD)/test/fatbin/test_fatbin

# libFuzzer on aquila_fatbin_read. FUZZ_TIME seconds (0: build only).
FUZZ_CC := clang-19
FUZZ_TIME ?= 60
FUZZ_BIN := $(BUILD)/fuzz/fuzz_fatbin_read
FUZZ_CORPUS := $(BUILD)/fuzz/corpus

.PHONY: fuzz fuzz-deps
fuzz-deps:
	$(call install_missing,clang-19 libclang-rt-19-dev libelf-dev)

$(FUZZ_BIN): test/fatbin/fuzz_fatbin_read.c $(FATBIN_LIB_SRCS) fatbin/fatbin_format.h \
             fatbin/include/aquila/fatbin.h | fuzz-deps
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(CPPFLAGS) -std=c11 -g -O1 -fsanitize=fuzzer,address,undefined \
	  -fno-sanitize-recover=undefined -o $@ test/fatbin/fuzz_fatbin_read.c $(FATBIN_LIB_SRCS) \
	  $(FATBIN_LDLIBS)

# The remote agents' message checks (hsa/remote/wire.c), FUZZ_TIME seconds too.
FUZZ_WIRE_BIN := $(BUILD)/fuzz/fuzz_wire
$(FUZZ_WIRE_BIN): test/remote/fuzz_wire.c hsa/remote/wire.c hsa/remote/wire.h | fuzz-deps
	@mkdir -p $(dir $@)
	$(FUZZ_CC) -std=c11 -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
	  -o $@ test/remote/fuzz_wire.c hsa/remote/wire.c

fuzz: $(FUZZ_BIN) $(BUILD)/test/fatbin/make_sample $(FUZZ_WIRE_BIN)
	@mkdir -p $(FUZZ_CORPUS) $(BUILD)/fuzz/wire-corpus
	$(BUILD)/test/fatbin/make_sample --corpus $(FUZZ_CORPUS)
	@if [ "$(FUZZ_TIME)" -gt 0 ]; then \
	  $(FUZZ_BIN) -max_total_time=$(FUZZ_TIME) -max_len=65536 \
	    -artifact_prefix=$(BUILD)/fuzz/ $(FUZZ_CORPUS) && \
	  $(FUZZ_WIRE_BIN) -max_total_time=$(FUZZ_TIME) -max_len=4096 \
	    -artifact_prefix=$(BUILD)/fuzz/wire- $(BUILD)/fuzz/wire-corpus; \
	fi
