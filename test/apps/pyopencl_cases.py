"""pyopencl cases for test/apps/pyopencl.sh, each compared with numpy.
Usage: pyopencl_cases.py [CASE...]; no argument lists the cases.
Prints "case NAME ok" or "case NAME FAIL reason" per case; the platform is the
first (only) one the loader sees, so OCL_ICD_VENDORS selects it."""
import sys
from caserunner import run_cases
import numpy as np
import pyopencl as cl
import pyopencl.array as cla
import pyopencl.clmath as clmath
import pyopencl.clrandom as clrandom
from pyopencl.elementwise import ElementwiseKernel
from pyopencl.reduction import ReductionKernel
from pyopencl.scan import GenericScanKernel, InclusiveScanKernel, ExclusiveScanKernel

ctx = q = None


def setup():
    global ctx, q
    plat = cl.get_platforms()[0]
    ctx = cl.Context(plat.get_devices())
    q = cl.CommandQueue(ctx)


def close(a, b, rtol=1e-5, atol=1e-6, what=""):
    if not np.allclose(a, b, rtol=rtol, atol=atol):
        err = np.max(np.abs(np.asarray(a, dtype=np.float64) - np.asarray(b, dtype=np.float64)))
        raise AssertionError("%s max abs error %g" % (what, err))


def equal(a, b, what=""):
    if not np.array_equal(a, b):
        bad = np.nonzero(np.asarray(a) != np.asarray(b))
        raise AssertionError("%s %d elements differ, first at %s" % (what, len(bad[0]), bad[0][:1]))


rng = np.random.default_rng(1234)


def case_array_arith():
    a = rng.random(100003).astype(np.float32)
    b = rng.random(100003).astype(np.float32) + 0.5
    da, db = cla.to_device(q, a), cla.to_device(q, b)
    close((da + db).get(), a + b)
    close((da * db - 3 * da).get(), a * b - 3 * a)
    close((da / db).get(), a / b)
    close((da ** 2).get(), a ** 2)
    close(abs(-da).get(), a)
    close(cla.maximum(da, db).get(), np.maximum(a, b))
    close(cla.if_positive(da - 0.5, da, db).get(), np.where(a - 0.5 > 0, a, b))
    equal(da[10:20].get(), a[10:20])
    i = rng.integers(-1000, 1000, 50000).astype(np.int32)
    di = cla.to_device(q, i)
    equal((di * 3 + 7).get(), i * 3 + 7)
    equal((di // 7).get() if hasattr(di, '__floordiv__') else (i // 7), i // 7)
    equal(cla.arange(q, 0, 1000, 1, dtype=np.int32).get(), np.arange(1000, dtype=np.int32))


def case_elementwise():
    k = ElementwiseKernel(ctx, "float *x, float *y, float a, float *z",
                          "z[i] = a * x[i] + sin(y[i]) * exp(-x[i])", "saxpy_like")
    x = rng.random(123457).astype(np.float32)
    y = rng.random(123457).astype(np.float32)
    dx, dy = cla.to_device(q, x), cla.to_device(q, y)
    dz = cla.empty_like(dx)
    k(dx, dy, np.float32(2.5), dz)
    close(dz.get(), 2.5 * x + np.sin(y) * np.exp(-x), rtol=1e-5, atol=1e-6)


def case_reduction():
    x = rng.random(1000003).astype(np.float32)
    dx = cla.to_device(q, x)
    close(cla.sum(dx).get(), np.sum(x, dtype=np.float64), rtol=1e-4)
    close(cla.max(dx).get(), x.max())
    close(cla.min(dx).get(), x.min())
    y = rng.random(1000003).astype(np.float32)
    dy = cla.to_device(q, y)
    close(cla.dot(dx, dy).get(), np.dot(x.astype(np.float64), y), rtol=1e-4)
    i = rng.integers(0, 100, 300001).astype(np.int32)
    equal(cla.sum(cla.to_device(q, i)).get(), i.sum())
    krn = ReductionKernel(ctx, np.float32, neutral="0", reduce_expr="a+b",
                          map_expr="x[i]*x[i]", arguments="__global float *x")
    close(krn(dx).get(), np.sum(x.astype(np.float64) ** 2), rtol=1e-4)


def case_scan():
    i = rng.integers(0, 10, 200003).astype(np.int32)
    di = cla.to_device(q, i)
    inc = InclusiveScanKernel(ctx, np.int32, "a+b", "0")
    d = di.copy()
    inc(d)
    equal(d.get(), np.cumsum(i))
    exc = ExclusiveScanKernel(ctx, np.int32, "a+b", "0")
    d = di.copy()
    exc(d)
    equal(d.get(), np.concatenate([[0], np.cumsum(i)[:-1]]))
    equal(cla.cumsum(di).get(), np.cumsum(i))
    # a segmented / generic scan: copy_if
    from pyopencl.algorithm import copy_if
    res, count, _ = copy_if(di, "ary[i] > 5")
    n = int(count.get())
    equal(res.get()[:n], i[i > 5])


def case_clrandom_philox():
    gen = clrandom.PhiloxGenerator(ctx, seed=42)
    u = gen.uniform(q, (1 << 20,), np.float32).get()
    if not (u.min() >= 0 and u.max() <= 1 and abs(u.mean() - 0.5) < 0.01):
        raise AssertionError("uniform stats off: min %g max %g mean %g" % (u.min(), u.max(), u.mean()))
    n = gen.normal(q, (1 << 20,), np.float32).get()
    if not (abs(n.mean()) < 0.01 and abs(n.std() - 1) < 0.01):
        raise AssertionError("normal stats off: mean %g std %g" % (n.mean(), n.std()))
    d = clrandom.rand(q, (1 << 16,), np.float64).get()
    if not (d.min() >= 0 and d.max() <= 1 and abs(d.mean() - 0.5) < 0.02):
        raise AssertionError("rand fp64 stats off")


def case_clrandom_ranlux():
    gen = clrandom.RanluxGenerator(q, luxury=2, seed=7)
    u = gen.uniform(q, (1 << 18,), np.float32).get()
    if not (u.min() >= 0 and u.max() <= 1 and abs(u.mean() - 0.5) < 0.01):
        raise AssertionError("ranlux uniform stats off: min %g max %g mean %g" % (u.min(), u.max(), u.mean()))
    n = gen.normal(q, (1 << 18,), np.float32).get()
    if not (abs(n.mean()) < 0.02 and abs(n.std() - 1) < 0.02):
        raise AssertionError("ranlux normal stats off: mean %g std %g" % (n.mean(), n.std()))


def case_radix_sort():
    from pyopencl.algorithm import RadixSort
    sort = RadixSort(ctx, "int *ary", key_expr="ary[i]", sort_arg_names=["ary"], key_dtype=np.int32)
    a = rng.integers(0, 1 << 30, 100003).astype(np.int32)
    (out,), _ = sort(cla.to_device(q, a), key_bits=30)
    equal(out.get(), np.sort(a))


def case_clmath():
    x = (rng.random(65537) * 4 + 0.1).astype(np.float32)
    dx = cla.to_device(q, x)
    for name, ref, tol in [("sin", np.sin, 1e-5), ("cos", np.cos, 1e-5), ("exp", np.exp, 1e-5),
                           ("log", np.log, 1e-5), ("sqrt", np.sqrt, 1e-6), ("tan", np.tan, 1e-4),
                           ("atan", np.arctan, 1e-5), ("log10", np.log10, 1e-5),
                           ("sinh", np.sinh, 1e-5), ("cbrt", np.cbrt, 1e-5)]:
        close(getattr(clmath, name)(dx).get(), ref(x), rtol=tol, atol=1e-6, what=name)
    close(clmath.atan2(dx, dx + 1).get(), np.arctan2(x, x + 1), rtol=1e-5, what="atan2")
    close(clmath.fmod(dx, dx * 0 + np.float32(0.7)).get(), np.fmod(x, np.float32(0.7)),
          rtol=1e-5, atol=1e-5, what="fmod")


def case_images():
    # A device without images is not asked for them, as the
    # CTS does; the case then checks that images are refused cleanly.
    if not q.device.image_support:
        fmt = cl.ImageFormat(cl.channel_order.R, cl.channel_type.FLOAT)
        try:
            cl.Image(ctx, cl.mem_flags.READ_ONLY, fmt, shape=(4, 4))
        except cl.LogicError:
            print("images: the device has none (CL_DEVICE_IMAGE_SUPPORT false), and refuses them")
            return
        raise AssertionError("a device without image support made an image")
    h, w = 67, 131
    img = rng.random((h, w)).astype(np.float32)
    fmt = cl.ImageFormat(cl.channel_order.R, cl.channel_type.FLOAT)
    mf = cl.mem_flags
    src = cl.Image(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, fmt, shape=(w, h), hostbuf=img)
    dst = cl.Image(ctx, mf.WRITE_ONLY, fmt, shape=(w, h))
    prg = cl.Program(ctx, """
    __constant sampler_t s = CLK_NORMALIZED_COORDS_FALSE | CLK_ADDRESS_CLAMP_TO_EDGE | CLK_FILTER_NEAREST;
    __kernel void blur(read_only image2d_t in, write_only image2d_t out) {
        int x = get_global_id(0), y = get_global_id(1);
        float acc = 0;
        for (int dy = -1; dy <= 1; dy++)
            for (int dx = -1; dx <= 1; dx++)
                acc += read_imagef(in, s, (int2)(x + dx, y + dy)).x;
        write_imagef(out, (int2)(x, y), (float4)(acc / 9, 0, 0, 1));
    }""").build()
    prg.blur(q, (w, h), None, src, dst)
    out = np.empty_like(img)
    cl.enqueue_copy(q, out, dst, origin=(0, 0), region=(w, h))
    p = np.pad(img, 1, mode="edge")
    ref = sum(p[1 + dy:1 + dy + h, 1 + dx:1 + dx + w] for dy in (-1, 0, 1) for dx in (-1, 0, 1)) / 9
    close(out, ref, rtol=1e-5, atol=1e-6, what="image blur")
    # RGBA uint8 round trip + linear sampling at pixel centres
    rgba = rng.integers(0, 255, (h, w, 4)).astype(np.uint8)
    fmt8 = cl.ImageFormat(cl.channel_order.RGBA, cl.channel_type.UNORM_INT8)
    im8 = cl.Image(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, fmt8, shape=(w, h), hostbuf=rgba)
    outb = cl_array = cla.empty(q, (h, w, 4), np.float32)
    prg2 = cl.Program(ctx, """
    __constant sampler_t s = CLK_NORMALIZED_COORDS_TRUE | CLK_ADDRESS_CLAMP_TO_EDGE | CLK_FILTER_LINEAR;
    __kernel void fetch(read_only image2d_t in, __global float4 *out) {
        int x = get_global_id(0), y = get_global_id(1);
        float2 c = (float2)((x + 0.5f) / get_image_width(in), (y + 0.5f) / get_image_height(in));
        out[y * get_image_width(in) + x] = read_imagef(in, s, c);
    }""").build()
    prg2.fetch(q, (w, h), None, im8, outb.data)
    close(outb.get(), rgba / 255.0, rtol=1e-3, atol=2e-3, what="unorm8 linear")


def case_fp64():
    dev = ctx.devices[0]
    if "cl_khr_fp64" not in dev.extensions:
        raise AssertionError("device lacks cl_khr_fp64")
    x = rng.random(100001) * 10
    dx = cla.to_device(q, x)
    close((dx * dx + 1.5).get(), x * x + 1.5, rtol=1e-14, atol=1e-14)
    close(clmath.exp(dx).get(), np.exp(x), rtol=1e-13, atol=0)
    close(clmath.log1p(dx).get(), np.log1p(x), rtol=1e-13, atol=0)
    close(cla.sum(dx).get(), x.sum(), rtol=1e-12)
    k = ElementwiseKernel(ctx, "double *x, double *z", "z[i] = fma(x[i], x[i], sqrt(x[i]))")
    dz = cla.empty_like(dx)
    k(dx, dz)
    close(dz.get(), x * x + np.sqrt(x), rtol=1e-14, atol=1e-14)


def case_complex():
    a = (rng.random(10001) + 1j * rng.random(10001)).astype(np.complex64)
    b = (rng.random(10001) + 1j * rng.random(10001)).astype(np.complex64)
    da, db = cla.to_device(q, a), cla.to_device(q, b)
    close((da * db).get(), a * b, rtol=1e-5)
    close((da / db).get(), a / b, rtol=1e-4)


def case_local_memory_barriers():
    src = """
    __kernel void rev(__global const int *in, __global int *out, __local int *tmp) {
        int l = get_local_id(0), n = get_local_size(0), g = get_group_id(0);
        tmp[l] = in[g * n + l];
        barrier(CLK_LOCAL_MEM_FENCE);
        out[g * n + l] = tmp[n - 1 - l];
    }"""
    prg = cl.Program(ctx, src).build()
    a = np.arange(64 * 1000, dtype=np.int32)
    da = cla.to_device(q, a)
    dout = cla.empty_like(da)
    prg.rev(q, (a.size,), (64,), da.data, dout.data, cl.LocalMemory(64 * 4))
    equal(dout.get(), a.reshape(-1, 64)[:, ::-1].ravel())


CASES = {n[5:]: f for n, f in sorted(globals().items()) if n.startswith("case_")}

if __name__ == "__main__":
    if len(sys.argv) == 1:
        print(" ".join(CASES))
        sys.exit(0)
    setup()
    print("device:", ctx.devices[0].name, "/", ctx.devices[0].platform.name, flush=True)
    run_cases(CASES, sys.argv[1:])
