"""gpyfft (clFFT through pyopencl) cases for test/apps/clfft.sh, against numpy.fft.
Usage: gpyfft_cases.py [CASE...]; no argument lists the cases."""
import sys
from caserunner import run_cases
import numpy as np
import pyopencl as cl
import pyopencl.array as cla
from gpyfft.fft import FFT

ctx = q = None
rng = np.random.default_rng(3)


def setup():
    global ctx, q
    ctx = cl.Context(cl.get_platforms()[0].get_devices())
    q = cl.CommandQueue(ctx)


def crand(shape, dtype=np.complex64):
    return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)


def check(got, ref, tol):
    err = np.max(np.abs(got - ref)) / max(np.max(np.abs(ref)), 1e-30)
    if not err < tol:
        raise AssertionError("relative max error %g (tolerance %g)" % (err, tol))


def fft_c2c(x, axes, out_of_place=False, forward=True, tol=1e-5):
    d = cla.to_device(q, x)
    r = cla.empty_like(d) if out_of_place else None
    t = FFT(ctx, q, d, r, axes=axes)
    ev, = t.enqueue(forward=forward)
    ev.wait()
    got = (r if out_of_place else d).get()
    ref = np.fft.fftn(x, axes=axes) if forward else np.fft.ifftn(x, axes=axes)
    check(got, ref, tol)


def case_1d_inplace():
    fft_c2c(crand(1024), (0,))


def case_1d_out_of_place_inverse():
    fft_c2c(crand(4096), (0,), out_of_place=True, forward=False)


def case_1d_non_power_of_two():
    fft_c2c(crand(360), (0,), out_of_place=True)


def case_2d():
    fft_c2c(crand((128, 64)), (0, 1), out_of_place=True)


def case_3d():
    fft_c2c(crand((16, 32, 32)), (0, 1, 2))


def case_batched_axis1():
    # 8 transforms of 256 points along axis 1 (contiguous rows)
    fft_c2c(crand((8, 256)), (1,))


def case_batched_axis0():
    # 256 transforms of 8 points along axis 0 (strided)
    fft_c2c(crand((8, 256)), (0,), out_of_place=True)


def case_fp64():
    fft_c2c(crand((64, 128), np.complex128), (1,), out_of_place=True, tol=1e-12)


def case_real_to_complex():
    x = rng.standard_normal((16, 256)).astype(np.float32)
    d = cla.to_device(q, x)
    r = cla.empty(q, (16, 129), np.complex64)
    t = FFT(ctx, q, d, r, axes=(1,), real=True)
    ev, = t.enqueue()
    ev.wait()
    check(r.get(), np.fft.rfft(x, axis=1), 1e-5)


def case_real_to_complex_fp64_2d():
    # as gpyfft's own test_2d_real_to_complex_double
    x = rng.standard_normal((64, 32))
    d = cla.to_device(q, x)
    r = cla.empty(q, (64, 17), np.complex128)
    t = FFT(ctx, q, d, r, axes=(1, 0))
    ev, = t.enqueue()
    ev.wait()
    check(r.get(), np.fft.rfftn(x, axes=(0, 1)), 1e-12)


CASES = {n[5:]: f for n, f in sorted(globals().items()) if n.startswith("case_")}

if __name__ == "__main__":
    if len(sys.argv) == 1:
        print(" ".join(CASES))
        sys.exit(0)
    setup()
    run_cases(CASES, sys.argv[1:])
