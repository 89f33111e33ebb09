"""The case loop of the Python application checks (pyopencl, OpenCV, gpyfft):
runs each named case, prints "case NAME ok" or "case NAME FAIL <reason>", and
exits 1 when any failed. `check`, if given, runs before each case."""
import sys
import traceback


def run_cases(cases, names, check=None):
    bad = 0
    for name in names:
        try:
            if check:
                check()
            cases[name]()
            print("case %s ok" % name, flush=True)
        except Exception as e:
            traceback.print_exc()
            msg = (str(e).strip().splitlines() or [type(e).__name__])[0][:150]
            print("case %s FAIL %s: %s" % (name, type(e).__name__, msg), flush=True)
            bad += 1
    sys.exit(1 if bad else 0)
