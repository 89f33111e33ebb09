# test/remote/: remote agents end to end (run.sh starts aquilad daemons on
# loopback, netns.sh between two network namespaces); test_remote goes
# through the ICD loader, test_remote_link is a unit test of hsa/remote/'s
# wire and links.
REMOTE_TEST_BINS := $(BUILD)/test/remote/test_remote $(BUILD)/test/remote/test_remote_link

$(BUILD)/test/remote/test_remote: test/remote/test_remote.c test/api/api.h test/check.h $(BUILD)/icd/aquila.icd | deps
	@mkdir -p $(dir $@)
	$(CC) -std=c11 -O2 -g $(WARN) -D_GNU_SOURCE -o $@ $< -lOpenCL -lpthread -lm

$(BUILD)/test/remote/test_remote_link: test/remote/test_remote_link.c $(patsubst %,$(BUILD)/obj/%.o,$(basename $(REMOTE_COMMON))) test/check.h | deps
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -o $@ $< $(patsubst %,$(BUILD)/obj/%.o,$(basename $(REMOTE_COMMON))) \
	  $(REMOTE_LIBS_SYS) -pthread

PROGS += $(REMOTE_TEST_BINS)
# run.sh needs the daemon, the remote agents' library, the samples, the API tests
# and test_compiler (its tiers child).
TESTS += test/remote/run.sh
test/remote/run.sh: $(REMOTE_TEST_BINS) $(AQUILAD) $(REMOTE_PLUGIN) $(BUILD)/test/compiler/test_compiler
# netns.sh: a silent network between two namespaces it makes (skipped
# without CAP_NET_ADMIN).
TESTS += test/remote/netns.sh
test/remote/netns.sh: $(REMOTE_TEST_BINS) $(AQUILAD) $(REMOTE_PLUGIN)
