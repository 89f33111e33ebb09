# Aquila: an OpenCL 1.2 ICD whose devices are HSA agents.
#
#   make run     install missing Debian packages, build, run the samples
#   make check   the same set-up, then every test; last line "N passed, N failed"
#   make install PREFIX=/usr/local DESTDIR=   /   make uninstall
#   make deb     Debian packages in build/deb/ (debian/, dpkg-buildpackage)
#
# Each layer has a module.mk that adds its sources, libraries, programs and
# tests to the variables below.

BUILD      ?= build
PREFIX     ?= /usr/local
DESTDIR    ?=
LLVM_DIR   ?= /usr/lib/llvm-19
CLANG      ?= clang-19
CC         := gcc
CXX        := g++

# procps and gdb: test/run-tests.sh describes a test program that hangs (its
# threads, the processes under it, their stacks) before it stops it.
# llvm-spirv-15: SPIR-V programs are read with it (compiler/frontend/spirv.c);
# clang-15: the tests make SPIR-V with it (LLVM 19 as Debian 12 has it lacks
# a SPIR-V target, and the translator reads LLVM 15's bitcode).
# python3-pyopencl: a test runs a pyopencl program on SVM.
DEB_PACKAGES := clang-19 libclang-19-dev llvm-19-dev lld-19 binutils g++ libclc-19 libhsa-runtime-dev \
                ocl-icd-libopencl1 ocl-icd-opencl-dev opencl-headers libelf-dev clinfo pkg-config \
                valgrind libclang-rt-19-dev libucx-dev libsodium-dev ucx-utils iproute2 nftables \
                procps gdb llvm-spirv-15 clang-15 spirv-tools python3-pyopencl python3-numpy

WARN      := -Wall -Wextra -Wno-unused-parameter -Wno-missing-field-initializers
CPPFLAGS  := -D_GNU_SOURCE -DAQUILA_VERSION=\"0.1.0\" -DCL_TARGET_OPENCL_VERSION=300 -DCL_USE_DEPRECATED_OPENCL_1_0_APIS -DCL_USE_DEPRECATED_OPENCL_1_1_APIS \
             -DCL_USE_DEPRECATED_OPENCL_1_2_APIS -DCL_USE_DEPRECATED_OPENCL_2_0_APIS \
             -Ihsa/include -Icompiler/include -Ifatbin/include -Iruntime -Iicd -I$(BUILD)/gen
CFLAGS    := -std=c11 -O2 -g $(WARN) -fPIC -pthread
LDLIBS_SYS := -pthread -ldl -lm
# A packager's flags (debian/rules passes dpkg-buildflags' hardening), appended.
EXTRA_CFLAGS ?=
EXTRA_LDFLAGS ?=
CFLAGS     += $(EXTRA_CFLAGS)
LDLIBS_SYS += $(EXTRA_LDFLAGS)

ifeq ($(shell id -u),0)
SUDO :=
else
SUDO := sudo
endif

.PHONY: all deps run check check-vectorize trace-demo install install-files deb check-deb uninstall clean format libs progs check-asan check-tsan check-valgrind
all: deps libs progs

# $(call install_missing,PACKAGES) as a recipe line: installs those of the
# Debian packages that are missing, and only those; cheap when none is.
define install_missing
@missing=""; for p in $(1); do \
  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q 'install ok installed' || missing="$$missing $$p"; \
done; \
if [ -n "$$missing" ]; then \
  echo "aquila: installing Debian packages:$$missing"; \
  $(SUDO) apt-get update -qq && \
  DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq --no-install-recommends $$missing; \
fi
endef

# What the build and the tests need, run before every build. NO_DEPS=1 (a
# package build, whose Build-Depends are installed) skips it.
deps:
	$(if $(NO_DEPS),@true,$(call install_missing,$(DEB_PACKAGES)))

# Filled by the module.mk files.
LIBS :=
PROGS :=
TESTS :=
SAMPLES :=
INSTALL_TARGETS :=

# Objects for libaquila.so: every symbol hidden unless marked for export.
$(BUILD)/obj/%.o: %.c | deps
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -fvisibility=hidden -MMD -MP -c $< -o $@
$(BUILD)/obj/%.o: %.S | deps
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) -fPIC -fvisibility=hidden -c $< -o $@
$(BUILD)/obj/%.o: %.cpp | deps
	@mkdir -p $(dir $@)
	$(CXX) $(CPPFLAGS) -std=c++17 -O2 -g -fPIC -fvisibility=hidden -fno-rtti -MMD -MP -c $< -o $@
# Objects for the standalone libraries and programs: default visibility.
$(BUILD)/obj-shared/%.o: %.c | deps
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -MMD -MP -c $< -o $@
$(BUILD)/obj-shared/%.o: %.S | deps
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) -fPIC -c $< -o $@

include hsa/module.mk
include fatbin/module.mk
include compiler/module.mk
include fatbin-tools/module.mk
include runtime/module.mk
include icd/module.mk
include samples/module.mk
include test/module.mk
include test/sanitize.mk
include test/apps/module.mk
include test/fuzz/module.mk

libs: $(LIBS)
progs: $(PROGS) $(SAMPLES) $(TESTS)

# The in-tree vendor file: the loader reads OCL_ICD_VENDORS=$(BUILD)/icd/aquila.icd.
ICD_FILE := $(BUILD)/icd/aquila.icd
LOADER_ENV := OCL_ICD_VENDORS=$(abspath $(ICD_FILE))

run: all
	@$(LOADER_ENV) sh samples/run-samples.sh $(BUILD)

check: all
	@$(LOADER_ENV) BUILD=$(BUILD) AQUILA_CACHE_DIR=$(abspath $(BUILD))/kernel-cache sh test/run-tests.sh $(TESTS)

# Other x86-64 CPUs than this one: every test with the kernels built for
# x86-64-v3 (AVX2, no AVX-512) and for x86-64-v2 (SSE4.2), each with a kernel
# cache of its own; then samples, a binary made here, the HSA sample and a
# remote daemon under QEMU's user mode emulating Haswell and Nehalem
# (test/cpus/qemu.sh). Each part prints its own "N passed, N failed".
.PHONY: check-cpus
check-cpus: all
	$(call install_missing,qemu-user)
	@status=0; \
	for level in x86-64-v3 x86-64-v2; do \
	  echo "== every test, kernels built for $$level"; \
	  log=$(BUILD)/check-cpus-$$level.log; \
	  $(LOADER_ENV) BUILD=$(BUILD) AQUILA_CPU_TARGET=$$level \
	    AQUILA_CACHE_DIR=$(abspath $(BUILD))/kernel-cache-$$level \
	    sh test/run-tests.sh $(TESTS) >$$log 2>&1 || status=1; \
	  grep '^not ok' $$log; tail -n 1 $$log; \
	done; \
	echo "== under QEMU's user mode"; \
	$(LOADER_ENV) BUILD=$(BUILD) sh test/run-tests.sh test/cpus/qemu.sh || status=1; \
	exit $$status

# The compiler's and builtins' tests through the loader, with every
# vectorized kernel also run scalar and compared (AQUILA_VECTORIZE=check);
# a difference fails it. Its own kernel cache: code objects with scalar twins.
VECTORIZE_CHECK_TESTS := $(BUILD)/test/compiler/test_vector_check $(BUILD)/test/compiler/test_vectorize \
                         $(BUILD)/test/compiler/test_compiler $(BUILD)/test/compiler/test_fuzz_found \
                         $(MATH_DEVICE_TEST) $(BUILD)/test/api/test_ndrange $(BUILD)/test/api/test_images
check-vectorize: all
	@$(LOADER_ENV) BUILD=$(BUILD) AQUILA_CACHE_DIR=$(abspath $(BUILD))/kernel-cache-check \
	  sh test/run-check-vectorize.sh $(VECTORIZE_CHECK_TESTS)

# A sample's timeline (AQUILA_TRACE) drawn with Debian's matplotlib:
# $(BUILD)/trace-demo.json (open it in ui.perfetto.dev) and $(BUILD)/trace-demo.png.
TRACE_DEMO_SAMPLE ?= bitonicsort
trace-demo: all
	$(call install_missing,python3-matplotlib)
	$(LOADER_ENV) AQUILA_TRACE=$(abspath $(BUILD))/trace-demo.json $(BUILD)/samples/$(TRACE_DEMO_SAMPLE)
	/usr/bin/python3 samples/render-trace.py $(BUILD)/trace-demo.json $(BUILD)/trace-demo.png \
	  --title "$(TRACE_DEMO_SAMPLE) sample on Aquila's CPU agent (AQUILA_TRACE)"

format:
	clang-format -i $$(git ls-files '*.c' '*.h' '*.cpp')

clean:
	rm -rf $(BUILD)

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)

# ---- install -----------------------------------------------------------------
LIBDIR     ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
BINDIR     ?= $(PREFIX)/bin
VENDORDIR  ?= /etc/OpenCL/vendors
MANDIR     ?= $(PREFIX)/share/man
PUBLIC_HEADERS := hsa/include/aquila/cpu_abi.h hsa/include/aquila/hsa_ext_aquila.h fatbin/include/aquila/fatbin.h

$(BUILD)/aquila.pc: Makefile
	@mkdir -p $(dir $@)
	printf 'prefix=%s\nlibdir=%s\nincludedir=%s\n\nName: aquila\nDescription: %s\nVersion: 0.1.0\nLibs: -L$${libdir} -laquila-hsa\nCflags: -I$${includedir}\n' \
	  "$(PREFIX)" "$(LIBDIR)" "$(INCLUDEDIR)" \
	  "Aquila HSA runtime with a CPU agent; the OpenCL ICD is libaquila.so" > $@

# What install copies: built without the tests, samples and benchmarks.
INSTALL_FILES := $(BUILD)/libaquila.so $(BUILD)/libaquila-hsa.so $(BUILD)/libaquila_fatbin.a \
                 $(BUILD)/clfatbin $(BUILD)/aquila/aquila-compiler $(BUILD)/aquila.pc \
                 $(BUILD)/aquilad $(BUILD)/aquila/libaquila-remote.so
SYSTEMDDIR ?= /lib/systemd/system
SYSCONFDIR ?= /etc
install-files: $(INSTALL_FILES)

# The ICD library under its soname (it is loaded by the path in the .icd
# file, never linked, so it has no development link).
install: $(INSTALL_FILES)
	install -d $(DESTDIR)$(LIBDIR) $(DESTDIR)$(LIBDIR)/pkgconfig $(DESTDIR)$(BINDIR) \
	  $(DESTDIR)$(INCLUDEDIR)/aquila $(DESTDIR)$(VENDORDIR)
	install -m 644 $(BUILD)/libaquila.so $(DESTDIR)$(LIBDIR)/libaquila.so.1
	install -m 644 $(BUILD)/libaquila-hsa.so $(DESTDIR)$(LIBDIR)/libaquila-hsa.so.1
	ln -sf libaquila-hsa.so.1 $(DESTDIR)$(LIBDIR)/libaquila-hsa.so
	install -m 644 $(BUILD)/libaquila_fatbin.a $(DESTDIR)$(LIBDIR)/libaquila_fatbin.a
	install -m 755 $(BUILD)/clfatbin $(DESTDIR)$(BINDIR)/clfatbin
	install -d $(DESTDIR)$(MANDIR)/man1
	install -m 644 fatbin-tools/clfatbin.1 $(DESTDIR)$(MANDIR)/man1/clfatbin.1
	install -d $(DESTDIR)$(LIBDIR)/aquila
	install -m 755 $(BUILD)/aquila/aquila-compiler $(DESTDIR)$(LIBDIR)/aquila/aquila-compiler
	install -m 644 $(BUILD)/aquila/libaquila-remote.so $(DESTDIR)$(LIBDIR)/aquila/libaquila-remote.so
	install -m 755 $(BUILD)/aquilad $(DESTDIR)$(BINDIR)/aquilad
	install -d $(DESTDIR)$(MANDIR)/man8
	install -m 644 hsa/remote/aquilad.8 $(DESTDIR)$(MANDIR)/man8/aquilad.8
	install -d $(DESTDIR)$(SYSTEMDDIR) $(DESTDIR)$(SYSCONFDIR)/aquila
	sed 's|/usr/bin/aquilad|$(BINDIR)/aquilad|' hsa/remote/aquilad.service > $(DESTDIR)$(SYSTEMDDIR)/aquilad.service
	[ -e $(DESTDIR)$(SYSCONFDIR)/aquila/aquilad.conf ] || \
	  install -m 644 hsa/remote/aquilad.conf $(DESTDIR)$(SYSCONFDIR)/aquila/aquilad.conf
	install -m 644 $(PUBLIC_HEADERS) $(DESTDIR)$(INCLUDEDIR)/aquila/
	install -m 644 $(BUILD)/aquila.pc $(DESTDIR)$(LIBDIR)/pkgconfig/aquila.pc
	echo "$(LIBDIR)/libaquila.so.1" > $(DESTDIR)$(VENDORDIR)/aquila.icd
	@if [ -z "$(DESTDIR)" ] && [ "$$(id -u)" = 0 ]; then ldconfig; fi

uninstall:
	rm -f $(DESTDIR)$(LIBDIR)/libaquila.so.1 $(DESTDIR)$(LIBDIR)/libaquila-hsa.so.1 \
	  $(DESTDIR)$(LIBDIR)/libaquila-hsa.so $(DESTDIR)$(LIBDIR)/libaquila_fatbin.a \
	  $(DESTDIR)$(BINDIR)/clfatbin $(DESTDIR)$(MANDIR)/man1/clfatbin.1 $(DESTDIR)$(LIBDIR)/pkgconfig/aquila.pc \
	  $(DESTDIR)$(VENDORDIR)/aquila.icd $(DESTDIR)$(LIBDIR)/aquila/aquila-compiler \
	  $(DESTDIR)$(LIBDIR)/aquila/libaquila-remote.so $(DESTDIR)$(BINDIR)/aquilad \
	  $(DESTDIR)$(MANDIR)/man8/aquilad.8 \
	  $(DESTDIR)$(SYSTEMDDIR)/aquilad.service
	-rmdir $(DESTDIR)$(LIBDIR)/aquila 2>/dev/null
	rm -f $(addprefix $(DESTDIR)$(INCLUDEDIR)/aquila/,$(notdir $(PUBLIC_HEADERS)))
	-rmdir $(DESTDIR)$(INCLUDEDIR)/aquila 2>/dev/null
	@if [ -z "$(DESTDIR)" ] && [ "$$(id -u)" = 0 ]; then ldconfig; fi

# ---- Debian packages ---------------------------------------------------------
# make deb: the tracked tree (as it is in the work tree) built with Debian's
# tooling (debian/, debhelper) in $(BUILD)/deb/src; the packages, .changes
# and lintian's report land in $(BUILD)/deb/. make check-deb installs them
# on this machine beside pocl, runs clinfo and a sample through the system
# loader, and purges them again (test/deb/test-deb.sh; needs root or sudo).
DEB_TOOLS := debhelper dpkg-dev fakeroot lintian
deb:
	$(call install_missing,$(DEB_TOOLS))
	rm -rf $(BUILD)/deb && mkdir -p $(BUILD)/deb/src
	git ls-files -z | tar --null -T - -cf - | tar -xf - -C $(BUILD)/deb/src
	cd $(BUILD)/deb/src && dpkg-buildpackage -b -us -uc
	lintian --info $(BUILD)/deb/*.changes > $(BUILD)/deb/lintian.txt 2>&1 || true
	@echo "aquila: packages:"; ls $(BUILD)/deb/*.deb
	@echo "aquila: lintian ($(BUILD)/deb/lintian.txt):"; grep -E '^[EWI]:' $(BUILD)/deb/lintian.txt | sort | uniq -c || echo "  clean"

check-deb: deb all
	@sh test/deb/test-deb.sh $(BUILD)
