# Sourced by test/apps/<name>.sh. Sets up the loader environment, the launch
# counter and a private temporary directory; provides need_pkgs and app_end.
#   ICD         the .icd file (default: the in-tree build/icd/aquila.icd)
#   LAUNCHCOUNT the pass-through library (default build/apps/liblaunchcount.so)
APPS_DIR=$(cd "$(dirname "$0")" && pwd)
TOP=$(cd "$APPS_DIR/../.." && pwd)
: "${BUILD:=$TOP/build}"
: "${ICD:=$BUILD/icd/aquila.icd}"
: "${LAUNCHCOUNT:=$BUILD/apps/liblaunchcount.so}"
ICD=$(readlink -f "$ICD")
PY=/usr/bin/python3
APP_TMP=$(mktemp -d "${TMPDIR:-/tmp}/aquila-app-$APP.XXXXXX")
trap 'rm -rf "$APP_TMP"' EXIT
export OCL_ICD_VENDORS="$ICD"
export LAUNCHCOUNT_FILE="$APP_TMP/launches"
: > "$LAUNCHCOUNT_FILE"
if [ ! -f "$LAUNCHCOUNT" ]; then
    echo "APP $APP FAIL launch counter $LAUNCHCOUNT not built (make apps builds it)"
    exit 1
fi
# Preloaded only into the application's processes (with_count), not into apt.
with_count() { LD_PRELOAD="$LAUNCHCOUNT${LD_PRELOAD:+ $LD_PRELOAD}" "$@"; }

# need_pkgs PKG...: install the Debian packages that are missing, and only those.
need_pkgs() {
    missing=""
    for p in "$@"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing="$missing $p"
    done
    [ -z "$missing" ] && return 0
    if [ "$(id -u)" = 0 ]; then sudo=""; else sudo=sudo; fi
    echo "apps: installing Debian packages:$missing"
    $sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends $missing
}

# launches: kernels launched so far by every counted process.
launches() { awk '{ n += $1 } END { print n + 0 }' "$LAUNCHCOUNT_FILE"; }

# app_end PASSED FAILED DETAIL: the one result line. A run that launched no
# kernel on the platform fails whatever its cases said.
app_end() {
    n=$(launches)
    d=${3:+; $3}
    if [ "$n" -eq 0 ]; then
        echo "APP $APP FAIL no kernel launched on the platform$d"
        exit 1
    elif [ "$2" -eq 0 ] && [ "$1" -gt 0 ]; then
        echo "APP $APP PASS $1/$(($1 + $2)) cases, $n kernel launches$d"
        exit 0
    else
        echo "APP $APP FAIL $1/$(($1 + $2)) cases passed, $n kernel launches$d"
        exit 1
    fi
}
