# icd/: the ICD glue and the vendor library libaquila.so, which links every
# layer and exports only the cl* entry points (icd/exports.map).
ICD_SRCS := $(wildcard icd/*.c)
ICD_OBJS := $(ICD_SRCS:%.c=$(BUILD)/obj/%.o)

$(BUILD)/libaquila_icd.a: $(ICD_OBJS)
	@rm -f $@
	ar rcs $@ $^

# Static libraries in dependency order: upper layers first.
AQUILA_LAYER_LIBS := $(BUILD)/libaquila_icd.a $(BUILD)/libaquila_runtime.a \
                     $(BUILD)/libaquila_compiler_client.a $(BUILD)/libaquila_fatbin.a \
                     $(BUILD)/libaquila_hsa.a

$(BUILD)/libaquila.so: $(AQUILA_LAYER_LIBS) icd/exports.map
	$(CC) -shared -Wl,-soname,libaquila.so.1 -Wl,--version-script=icd/exports.map -Wl,-z,defs -Wl,-Bsymbolic \
	  -o $@ -Wl,--whole-archive $(BUILD)/libaquila_icd.a $(BUILD)/libaquila_runtime.a \
	  -Wl,--no-whole-archive $(BUILD)/libaquila_compiler_client.a $(BUILD)/libaquila_fatbin.a \
	  $(BUILD)/libaquila_hsa.a -lelf $(LDLIBS_SYS) -Wl,--no-as-needed -lmvec

# -Bsymbolic: the table must point at our cl* functions, not the loader's
# same-named ones that would interpose at run time.
# The in-tree vendor file names the library by absolute path.
$(BUILD)/icd/aquila.icd: $(BUILD)/libaquila.so
	@mkdir -p $(dir $@)
	echo "$(abspath $(BUILD)/libaquila.so)" > $@

LIBS += $(BUILD)/libaquila_icd.a $(BUILD)/libaquila.so $(BUILD)/icd/aquila.icd
