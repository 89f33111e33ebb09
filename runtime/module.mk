# runtime/: the OpenCL objects and the command scheduler.
RUNTIME_SRCS := $(wildcard runtime/*.c)
RUNTIME_OBJS := $(RUNTIME_SRCS:%.c=$(BUILD)/obj/%.o)

$(BUILD)/libaquila_runtime.a: $(RUNTIME_OBJS)
	@rm -f $@
	ar rcs $@ $^

LIBS += $(BUILD)/libaquila_runtime.a
