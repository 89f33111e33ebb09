# `make apps`: real OpenCL applications (pyopencl, OpenCV T-API, CLBlast, clFFT,
# ViennaCL, hashcat, piglit) on Aquila, or on another platform with
# `make apps ICD=/etc/OpenCL/vendors/pocl.icd`, or on a remote device alone
# (an aquilad on loopback) with `make apps REMOTE=1`. Not part of `make check`.
# Each test/apps/<name>.sh installs its own Debian packages and ends with one
# line "APP <name> PASS|FAIL <detail>"; test/apps/run-apps.sh prints the table.
APPS_ICD   ?= $(if $(ICD),$(ICD),$(abspath $(ICD_FILE)))
APPS       ?= pyopencl opencv clblast clfft viennacl hashcat piglit
LAUNCHCOUNT := $(BUILD)/apps/liblaunchcount.so

$(LAUNCHCOUNT): test/apps/launchcount.c | deps
	@mkdir -p $(dir $@)
	$(CC) -std=c11 -O2 -g $(WARN) -fPIC -shared -DCL_TARGET_OPENCL_VERSION=120 $< -o $@ -Wl,--no-as-needed -lOpenCL -ldl

.PHONY: apps
apps: all $(LAUNCHCOUNT)
	@BUILD=$(abspath $(BUILD)) LAUNCHCOUNT=$(abspath $(LAUNCHCOUNT)) ICD=$(APPS_ICD) REMOTE=$(REMOTE) \
	  sh test/apps/run-apps.sh $(APPS)
