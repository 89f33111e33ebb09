# Sanitizer builds: `make check-asan` / `make check-tsan` build the project a
# second time, instrumented, into build-asan/ or build-tsan/, and run the API
# and HSA tests there through the system ICD loader. `make check-valgrind`
# runs the same tests under Valgrind's memcheck, on the ordinary build.
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
# and to the link flags of libaquila.so, libaquila-hsa.so, the remote
# agents' library, aquilad and the programs that use CFLAGS; a plain `make` / `make check` leaves it empty.

SANITIZE ?=
ifneq ($(SANITIZE),)
CFLAGS += $(SANITIZE)
LDLIBS_SYS += $(SANITIZE)
HSA_LIBS_SYS += $(SANITIZE)
REMOTE_LIBS_SYS += $(SANITIZE)
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

# check-asan's build checks undefined behaviour too (UBSan: overflowing
# signed arithmetic, shifts past the width, misaligned or null accesses,
# out-of-range enum and bool values); a finding stops the test program.
# It is built by clang-19 with LLVM's ASan runtime, not by gcc: gcc 12's
# runtime takes no lock on its allocator around fork(), so a child forked
# while another thread of its parent was inside ASan's malloc deadlocked
# there (the fork tests hung in about one run of three); LLVM 19's runtime
# holds its allocator's locks across fork() (pthread_atfork), as glibc's
# malloc does. -shared-libasan: programs built with these flags (the HSA
# tests) use the same runtime that the wrapper preloads.
SAN_ASAN_CC := $(CLANG)
SAN_ASAN_FLAGS := -fsanitize=address,undefined -fno-sanitize-recover=undefined \
                  -fno-omit-frame-pointer -shared-libasan
SAN_TSAN_FLAGS := -fsanitize=thread
# What a sanitizer run needs: the libraries and the test programs, not the
# samples or the benchmarks.
SAN_TESTS := $(API_TESTS) $(HSA_TESTS)
SAN_WRAPPERS := $(patsubst $(BUILD)/test/%,$(BUILD)/san-run/%,$(SAN_TESTS))
# check-tsan and check-asan also run these API tests with a remote device
# alone, against an aquilad of the same build on loopback
# (test/remote/sanitized.sh): the remote client and the daemon run under
# the sanitizer too.
SAN_REMOTE_API := test_buffers test_events test_ndrange test_threads test_misuse test_context_queue
SAN_REMOTE ?=
SAN_REMOTE_RUN := $(if $(SAN_REMOTE),$(BUILD)/san-run/remote-api)

# Options: ASan reports leaks (detect_leaks=1) except those listed in
# test/lsan.supp, all of them inside third-party libraries; TSan reports every
# race (halt_on_error=0 lets a run show all of them) except those in
# test/tsan.supp, and exits with 66 when it reported any, which run-tests.sh
# counts as a failure. intercept_tls_get_addr=0 (kept from the gcc build): with gcc 12's ASan and this
# glibc, LeakSanitizer reads a garbage dynamic-TLS range for the threads that
# touched the thread-local storage of a dlopened module (code objects used to
# keep static __local variables there) and its tracer crashes at exit ("Tracer
# caught signal 11"); without the interception, LSan still scans static TLS
# and every stack.
SAN_ASAN_OPTIONS := detect_leaks=1:halt_on_error=1:intercept_tls_get_addr=0
SAN_UBSAN_OPTIONS := print_stacktrace=1:halt_on_error=1
SAN_LSAN_OPTIONS := suppressions=$(abspath test/lsan.supp):print_suppressions=0
SAN_TSAN_OPTIONS := halt_on_error=0:exitcode=66:second_deadlock_stack=1:history_size=4:suppressions=$(abspath test/tsan.supp):print_suppressions=0

# One wrapper per test: preload the runtime named by SAN_PRELOAD, then run it.
# TSan needs a fixed memory layout; setarch -R turns address randomization off.
$(BUILD)/san-run/%: $(BUILD)/test/% test/sanitize.mk
	@mkdir -p $(dir $@)
	@printf '#!/bin/sh\nexec %s env LD_PRELOAD=%s %s "$$@"\n' "$(SAN_LAUNCH)" "$(SAN_PRELOAD)" \
	  "$(abspath $<)" > $@
	@chmod +x $@

$(BUILD)/san-run/remote-api: test/remote/sanitized.sh test/sanitize.mk
	@mkdir -p $(dir $@)
	@printf '#!/bin/sh\nexec sh %s %s "%s" %s\n' "$(abspath test/remote/sanitized.sh)" \
	  "$(abspath $(BUILD))" "$(SAN_LAUNCH) env LD_PRELOAD=$(SAN_PRELOAD)" \
	  "$(foreach t,$(SAN_REMOTE_API),$(abspath $(BUILD)/san-run/api/$(t)))" > $@
	@chmod +x $@

.PHONY: check-asan check-tsan san-check
# check-asan runs the tests three times: with ASan's defaults, with every new
# allocation filled with 0xbe, and with allocations left as the heap had them
# (max_malloc_fill_size=0): memory read before it is written then gives
# different results in the three runs instead of happening to be zero.
SAN_ASAN_FILLS := default malloc_fill_byte=190:max_malloc_fill_size=1073741824 max_malloc_fill_size=0
# A build-asan/ left by another compiler (gcc's, before) is rebuilt whole:
# its objects would need that compiler's runtime.
check-asan:
	@if [ "$$(cat build-asan/.compiler 2>/dev/null)" != "$(SAN_ASAN_CC)" ]; then \
	  rm -rf build-asan && mkdir -p build-asan && echo "$(SAN_ASAN_CC)" > build-asan/.compiler; fi
	+@for fill in $(SAN_ASAN_FILLS); do \
	  case $$fill in default) extra= ;; *) extra=:$$fill ;; esac; \
	  echo "check-asan: ASAN_OPTIONS ...$$extra"; \
	  $(MAKE) --no-print-directory BUILD=build-asan CC=$(SAN_ASAN_CC) SANITIZE="$(SAN_ASAN_FLAGS)" SAN_REMOTE=1 \
	  SAN_PRELOAD="$$($(SAN_ASAN_CC) -print-file-name=libclang_rt.asan-x86_64.so)" SAN_LAUNCH= \
	  SAN_ENV="ASAN_OPTIONS=$(SAN_ASAN_OPTIONS)$$extra LSAN_OPTIONS=$(SAN_LSAN_OPTIONS) UBSAN_OPTIONS=$(SAN_UBSAN_OPTIONS)" san-check \
	  || exit 1; done
check-tsan:
	+@$(MAKE) --no-print-directory BUILD=build-tsan SANITIZE="$(SAN_TSAN_FLAGS)" \
	  SAN_PROGRAM_FLAGS="$(SAN_TSAN_FLAGS)" SAN_REMOTE=1 \
	  SAN_PRELOAD="$$($(CC) -print-file-name=libtsan.so)" SAN_LAUNCH="setarch $$(uname -m) -R" \
	  SAN_ENV='TSAN_OPTIONS=$(SAN_TSAN_OPTIONS)' san-check

# Run only from check-asan / check-tsan (it needs their variables).
san-check: deps $(LIBS) $(SAN_TESTS) $(SAN_WRAPPERS) $(if $(SAN_REMOTE),$(AQUILAD) $(REMOTE_PLUGIN) $(SAN_REMOTE_RUN))
	@$(LOADER_ENV) BUILD=$(BUILD) AQUILA_CACHE_DIR=$(abspath $(BUILD))/kernel-cache $(SAN_ENV) \
	  sh test/run-tests.sh $(SAN_WRAPPERS) $(SAN_REMOTE_RUN)

# ---- make check-valgrind --------------------------------------------------
# The API and HSA test programs, the compiler's end-to-end tests, the image
# builtins and the fat binary reader, and everything they load (the ICD loader,
# libaquila.so, libaquila-hsa.so, the code objects), run under memcheck; so
# do the children they fork. The compiler helper processes that libaquila.so
# spawns do not (--trace-children=no: they are another program, posix_spawned,
# and LLVM under memcheck would take hours; the compiler runs under Valgrind
# in test_compiler through clfatbin). Valgrind 3.19 does not emulate AVX-512,
# so AQUILA_CPU_TARGET=x86-64-v3 has the kernels built for AVX2 instead of
# for this CPU (glibc picks its own functions by the CPUID that Valgrind
# shows). A memcheck error makes the program exit with 66 (run-tests.sh
# counts it as a failure); definite and indirect leaks are errors too;
# test/valgrind.supp lists what is left out, only in third-party code, each
# entry with its reason. --fair-sched: the compute units and the tests wait
# by spinning at times, and Valgrind runs one thread at a time.
# --max-stackframe: a work-group may move its stack pointer by tens of MiB
# at once (context arrays of kernels split at barriers, on the units' and
# helpers' 64 MiB stacks); memcheck would take that for a switch of stacks.
# Left out: the builtin library's numeric tests (test-builtins,
# test-math-device), which compare results with glibc's long double and set
# rounding modes: Valgrind computes x87 long doubles in 64 bits and runs SSE
# code in round-to-nearest only, so their references and conversions come
# out wrong there (no memcheck error in them).
VG_TESTS := $(SAN_TESTS) $(BUILD)/test/compiler/test_compiler $(BUILD)/test/compiler/test_vectorize \
            $(BUILD)/test/builtins/test-images $(BUILD)/test/fatbin/test_fatbin
VG_OPTIONS := --tool=memcheck -q --error-exitcode=66 --trace-children=no \
              --child-silent-after-fork=no --leak-check=full --show-leak-kinds=definite,indirect \
              --errors-for-leak-kinds=definite,indirect --fair-sched=yes --num-callers=40 \
              --max-stackframe=67108864 \
              --suppressions=$(abspath test/valgrind.supp)
# Per test program: memcheck is 20 to 50 times slower.
VG_TIMEOUT ?= 3600
VG_WRAPPERS := $(patsubst $(BUILD)/test/%,$(BUILD)/vg-run/%,$(VG_TESTS))

$(BUILD)/vg-run/%: $(BUILD)/test/% test/sanitize.mk
	@mkdir -p $(dir $@)
	@printf '#!/bin/sh\nexec valgrind %s %s "$$@"\n' "$(VG_OPTIONS)" "$(abspath $<)" > $@
	@chmod +x $@

.PHONY: check-valgrind
check-valgrind: deps $(LIBS) $(VG_TESTS) $(VG_WRAPPERS)
	@$(LOADER_ENV) BUILD=$(BUILD) AQUILA_CACHE_DIR=$(abspath $(BUILD))/kernel-cache-valgrind \
	  AQUILA_CPU_TARGET=x86-64-v3 AQUILA_TEST_TIMEOUT=$(VG_TIMEOUT) \
	  sh test/run-tests.sh $(VG_WRAPPERS)
