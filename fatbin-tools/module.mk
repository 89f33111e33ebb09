# fatbin-tools/: the clfatbin tool, which sits above the compiler (its
# `build` subcommand links the compiler library) and the fat binary library
# (fatbin/), and its test.

# clfatbin links the compiler library for its `build` subcommand.
CLFATBIN_COMPILER_LIB := $(BUILD)/libaquila_compiler.a
CLFATBIN_BUILD_OBJ := $(BUILD)/obj/fatbin-tools/clfatbin_build.o

CLFATBIN_OBJS := $(BUILD)/obj/fatbin-tools/clfatbin.o $(CLFATBIN_BUILD_OBJ)

$(BUILD)/clfatbin: $(CLFATBIN_OBJS) $(CLFATBIN_COMPILER_LIB) $(FATBIN_LIB)
	$(CC) $(CFLAGS) -o $@ $(CLFATBIN_OBJS) $(CLFATBIN_COMPILER_LIB) $(FATBIN_LIB) \
	  $(AQUILA_COMPILER_LDLIBS) $(FATBIN_LDLIBS) $(LDLIBS_SYS)

PROGS += $(BUILD)/clfatbin

# A shell test of clfatbin; make_sample (fatbin/module.mk) makes its inputs.
$(BUILD)/test/fatbin/test_clfatbin: test/fatbin/test_clfatbin.sh $(BUILD)/clfatbin \
                                    $(BUILD)/test/fatbin/make_sample
	@mkdir -p $(dir $@)
	cp $< $@ && chmod +x $@

TESTS += $(BUILD)/test/fatbin/test_clfatbin
