#!/bin/sh
# Lists the builtins that clang's opencl-c.h declares for OpenCL C 1.2 but
# the library does not define, grouped by name with a count of overloads.
#   sh compiler/builtins/missing.sh [build/compiler/builtins-x86_64.bc]
# Needs clang-19, llvm-nm-19 and python3; a developer tool, not a build step.
bc=${1:-build/compiler/builtins-x86_64.bc}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
: >"$tmp/empty.cl"
# -cl-no-stdinc drops the driver's table-generated declarations, so the
# explicit -finclude-default-header includes the full opencl-c.h.
clang-19 -x cl -cl-std=CL1.2 -target x86_64-pc-linux-gnu -cl-no-stdinc \
  -Xclang -finclude-default-header -Xclang -ffake-address-space-map -Xclang -faddress-space-map-mangling=yes \
  -fsyntax-only -Xclang -ast-dump=json "$tmp/empty.cl" >"$tmp/ast.json" || exit 1
llvm-nm-19 "$bc" | awk '$2 == "T" { print $3 }' >"$tmp/defined"
python3 - "$tmp/ast.json" "$tmp/defined" <<'PY'
import collections, json, sys
ast = json.load(open(sys.argv[1]))
defined = set(open(sys.argv[2]).read().split())
missing = collections.Counter()
for d in ast.get("inner", []):
    if d.get("kind") == "FunctionDecl" and "mangledName" in d:
        if d["mangledName"] not in defined:
            missing[d["name"]] += 1
for name, n in sorted(missing.items()):
    print(f"{name} {n}")
PY
