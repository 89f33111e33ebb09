#!/bin/sh
# make check-deb: installs the packages `make deb` built (build/deb/) on this
# machine, beside Debian's pocl-opencl-icd, and uses them as a user would:
# clinfo and a sample through the system ICD loader with no OCL_ICD_VENDORS,
# a build through the installed compiler helper, clfatbin and its manual,
# an HSA program built against libaquila-hsa-dev. Then removes and purges
# them and checks that none of their files is left.
# Usage: test-deb.sh BUILD_DIR. Needs root or sudo; refuses to touch an
# Aquila that is installed already.
set -u
build=${1:-build}
packages="aquila-opencl-icd aquila-compiler libaquila-hsa1 libaquila-hsa-dev clfatbin aquila-remote"
SUDO=
[ "$(id -u)" = 0 ] || SUDO=sudo
pass=0
fail=0
ok() { echo "ok $1"; pass=$((pass + 1)); }
not_ok() { echo "not ok $1: $2"; fail=$((fail + 1)); }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q 'install ok installed'; }

for p in $packages; do
  if installed "$p"; then
    echo "not ok setup: $p is installed already; this test would remove it"
    echo "0 passed, 1 failed"
    exit 1
  fi
done
debs=""
for p in $packages; do
  f=$(ls "$build"/deb/"${p}"_*.deb 2>/dev/null | head -1)
  [ -n "$f" ] || { echo "not ok setup: no $p package in $build/deb (make deb)"; echo "0 passed, 1 failed"; exit 1; }
  debs="$debs $f"
done
if ! installed pocl-opencl-icd; then
  $SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq \
    --no-install-recommends pocl-opencl-icd >/dev/null
fi

# ---- install ----
if $SUDO dpkg -i $debs >"$tmp/dpkg-i" 2>&1; then
  ok install
else
  # Dependencies the machine lacks: let apt bring them.
  if DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -f -y -qq >>"$tmp/dpkg-i" 2>&1 &&
    installed aquila-opencl-icd; then
    ok install
  else
    not_ok install "$(tail -5 "$tmp/dpkg-i")"
  fi
fi

# ---- use, as a user would: no OCL_ICD_VENDORS, no AQUILA_* ----
unset OCL_ICD_VENDORS
env | grep -q '^AQUILA_' && for v in $(env | sed -n 's/^\(AQUILA_[A-Z_]*\)=.*/\1/p'); do unset "$v"; done
if [ "$(cat /etc/OpenCL/vendors/aquila.icd 2>/dev/null)" = "/usr/lib/x86_64-linux-gnu/libaquila.so.1" ]; then
  ok vendor_file
else
  not_ok vendor_file "/etc/OpenCL/vendors/aquila.icd: $(cat /etc/OpenCL/vendors/aquila.icd 2>&1)"
fi
clinfo -l >"$tmp/clinfo" 2>&1
if grep -q 'Aquila' "$tmp/clinfo" && grep -q 'Portable Computing Language' "$tmp/clinfo"; then
  ok clinfo_lists_both_platforms
else
  not_ok clinfo_lists_both_platforms "$(cat "$tmp/clinfo")"
fi
for platform in Aquila Portable; do
  if out=$(timeout 300 "$build/samples/vectoradd" --platform "$platform" 2>&1) &&
    echo "$out" | grep -q verified; then
    ok "sample_on_$platform"
  else
    not_ok "sample_on_$platform" "$out"
  fi
done
# The kernel cache would serve a build without the helper: this one goes
# through the installed aquila-compiler.
if out=$(AQUILA_CACHE=0 timeout 300 "$build/samples/reduction" --platform Aquila 2>&1) &&
  echo "$out" | grep -q verified; then
  ok build_through_installed_compiler
else
  not_ok build_through_installed_compiler "$out"
fi
printf '__kernel void twice(__global int *a) { a[get_global_id(0)] *= 2; }\n' >"$tmp/k.cl"
if /usr/bin/clfatbin build -o "$tmp/k.fatbin" "$tmp/k.cl" 2>"$tmp/clfatbin" &&
  /usr/bin/clfatbin verify "$tmp/k.fatbin" >/dev/null && man -w clfatbin >/dev/null 2>&1; then
  ok clfatbin_and_manual
else
  not_ok clfatbin_and_manual "$(cat "$tmp/clfatbin")"
fi
cat >"$tmp/agents.c" <<'EOF'
#include <aquila/hsa_ext_aquila.h>
#include <hsa/hsa.h>
#include <stdio.h>
static hsa_status_t count(hsa_agent_t a, void *n) { ++*(int *)n; return HSA_STATUS_SUCCESS; }
int main(void) {
  int n = 0;
  if (hsa_init() != HSA_STATUS_SUCCESS) return 1;
  hsa_iterate_agents(count, &n);
  hsa_shut_down();
  printf("%d\n", n);
  return n > 0 ? 0 : 1;
}
EOF
if cc -o "$tmp/agents" "$tmp/agents.c" $(pkg-config --cflags --libs aquila) 2>"$tmp/cc" &&
  "$tmp/agents" >/dev/null; then
  ok hsa_program_against_dev_package
else
  not_ok hsa_program_against_dev_package "$(cat "$tmp/cc")"
fi

# ---- remove, purge: nothing left ----
for p in $packages; do dpkg -L "$p" 2>/dev/null; done | sort -u >"$tmp/files"
if $SUDO dpkg -r $packages >"$tmp/dpkg-r" 2>&1 && $SUDO dpkg -P $packages >>"$tmp/dpkg-r" 2>&1; then
  ok remove_and_purge
else
  not_ok remove_and_purge "$(tail -5 "$tmp/dpkg-r")"
fi
left=""
while read -r f; do
  # Directories other packages share (/usr, /etc/OpenCL/vendors) stay.
  [ -d "$f" ] && continue
  [ -e "$f" ] && left="$left $f"
done <"$tmp/files"
[ -d /usr/lib/x86_64-linux-gnu/aquila ] && left="$left /usr/lib/x86_64-linux-gnu/aquila/"
[ -d /usr/include/aquila ] && left="$left /usr/include/aquila/"
for p in $packages; do dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -qv 'not-installed' && left="$left [$p: $(dpkg-query -W -f='${Status}' "$p")]"; done
if [ -z "$left" ]; then ok nothing_left; else not_ok nothing_left "$left"; fi
clinfo -l >"$tmp/clinfo-after" 2>&1
if grep -q 'Portable Computing Language' "$tmp/clinfo-after" && ! grep -q 'Aquila' "$tmp/clinfo-after"; then
  ok pocl_alone_after
else
  not_ok pocl_alone_after "$(cat "$tmp/clinfo-after")"
fi
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
