# Sanitizer builds: `make check-asan` / `make check-tsan` build the project a
# second time, instrumented, into build-asan/ or build-tsan/, and run the API
# and HSA tests there through the system ICD loader.
#
# Under ASan the API test programs and libOpenCL.so.1 are not instrumented
# (an application is not either); the instrumented code is libaquila.so, which the
# loader dlopens. A sanitizer runtime must be loaded before everything else,
# so each test runs through a small wrapper that LD_PRELOADs it for that one
# program only (run-tests.sh's own sh, timeout and grep stay uninstrumented,
# and LeakSanitizer does not report their allocations). Code objects that the
# compiler builds at run time and the C++ parts of the compiler are not
# instrumented either.
#
# SANITIZE (set only by the sub-make below) is appended to the compile flags
# and to the link flags of libaquila.so, libaquila-hsa.so and the programs
# that use CFLAGS; a plain `make` / `make check` leaves it empty.

SANITIZE ?=
ifneq ($(SANITIZE),)
CFLAGS += $(SANITIZE)
LDLIBS_SYS += $(SANITIZE)
HSA_LIBS_SYS += $(SANITIZE)
endif
# TSan preloaded into an uninstrumented program is not set up in time: its
# __tls_get_addr interceptor calls a null pointer at the loader's first TLS
# access (clGetPlatformIDs). Under TSan the API test programs are linked
# with -fsanitize=thread themselves (SAN_PROGRAM_FLAGS), so the runtime
# starts first, from the executable.
SAN_PROGRAM_FLAGS ?=
ifneq ($(SAN_PROGRAM_FLAGS),)
$(API_TESTS): CC += $(SAN_PROGRAM_FLAGS)
endif

SAN_ASAN_FLAGS := -fsanitize=address -fno-omit-frame-pointer
SAN_TSAN_FLAGS := -fsanitize=thread
# What a sanitizer run needs: the libraries and the test programs, not the
# samples or the benchmarks.
SAN_TESTS := $(API_TESTS) $(HSA_TESTS)
SAN_WRAPPERS := $(patsubst $(BUILD)/test/%,$(BUILD)/san-run/%,$(SAN_TESTS))

# Options: ASan reports leaks (detect_leaks=1) except those listed in
# test/lsan.supp, all of them inside third-party libraries; TSan reports every
# race (halt_on_error=0 lets a run show all of them) except those in
# test/tsan.supp, and exits with 66 when it reported any, which run-tests.sh
# counts as a failure. intercept_tls_get_addr=0: with gcc 12's ASan and this
# glibc, LeakSanitizer reads a garbage dynamic-TLS range for the threads that
# touched the thread-local storage of a dlopened module (code objects used to
# keep static __local variables there) and its tracer crashes at exit ("Tracer
# caught signal 11"); without the interception, LSan still scans static TLS
# and every stack.
SAN_ASAN_OPTIONS := detect_leaks=1:halt_on_error=1:intercept_tls_get_addr=0
SAN_LSAN_OPTIONS := suppressions=$(abspath test/lsan.supp):print_suppressions=0
SAN_TSAN_OPTIONS := halt_on_error=0:exitcode=66:second_deadlock_stack=1:history_size=4:suppressions=$(abspath test/tsan.supp):print_suppressions=0

# One wrapper per test: preload the runtime named by SAN_PRELOAD, then run it.
# TSan needs a fixed memory layout; setarch -R turns address randomization off.
$(BUILD)/san-run/%: $(BUILD)/test/% test/sanitize.mk
	@mkdir -p $(dir $@)
	@printf '#!/bin/sh\nexec %s env LD_PRELOAD=%s %s "$$@"\n' "$(SAN_LAUNCH)" "$(SAN_PRELOAD)" \
	  "$(abspath $<)" > $@
	@chmod +x $@

.PHONY: check-asan check-tsan san-check
# check-asan runs the tests three times: with ASan's defaults, with every new
# allocation filled with 0xbe, and with allocations left as the heap had them
# (max_malloc_fill_size=0): memory read before it is written then gives
# different results in the three runs instead of happening to be zero.
SAN_ASAN_FILLS := default malloc_fill_byte=190:max_malloc_fill_size=1073741824 max_malloc_fill_size=0
check-asan:
	+@for fill in $(SAN_ASAN_FILLS); do \
	  case $$fill in default) extra= ;; *) extra=:$$fill ;; esac; \
	  echo "check-asan: ASAN_OPTIONS ...$$extra"; \
	  $(MAKE) --no-print-directory BUILD=build-asan SANITIZE="$(SAN_ASAN_FLAGS)" \
	  SAN_PRELOAD="$$($(CC) -print-file-name=libasan.so)" SAN_LAUNCH= \
	  SAN_ENV="ASAN_OPTIONS=$(SAN_ASAN_OPTIONS)$$extra LSAN_OPTIONS=$(SAN_LSAN_OPTIONS)" san-check \
	  || exit 1; done
check-tsan:
	+@$(MAKE) --no-print-directory BUILD=build-tsan SANITIZE="$(SAN_TSAN_FLAGS)" \
	  SAN_PROGRAM_FLAGS="$(SAN_TSAN_FLAGS)" \
	  SAN_PRELOAD="$$($(CC) -print-file-name=libtsan.so)" SAN_LAUNCH="setarch $$(uname -m) -R" \
	  SAN_ENV='TSAN_OPTIONS=$(SAN_TSAN_OPTIONS)' san-check

# Run only from check-asan / check-tsan (it needs their variables).
san-check: deps $(LIBS) $(SAN_TESTS) $(SAN_WRAPPERS)
	@$(LOADER_ENV) BUILD=$(BUILD) AQUILA_CACHE_DIR=$(abspath $(BUILD))/kernel-cache $(SAN_ENV) \
	  sh test/run-tests.sh $(SAN_WRAPPERS)
