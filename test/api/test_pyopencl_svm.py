#!/usr/bin/python3
"""pyopencl on shared virtual memory, through the loader: a kernel on a
coarse-grain SVM array between maps, a fine-grain array the host reads
directly, copies and fills between SVM and numpy, and pyopencl arrays whose
memory comes from its SVM allocator (elementwise kernels, reductions).
Prints "ok NAME" or "not ok NAME" per case (test/run-tests.sh)."""
import os
import sys
import traceback

os.environ["PYOPENCL_NO_CACHE"] = "1"  # every build goes through Aquila
import numpy as np
import pyopencl as cl
import pyopencl.array as cla
from pyopencl.tools import SVMAllocator

platform = [p for p in cl.get_platforms() if p.name == "Aquila"][0]
device = platform.get_devices()[0]
ctx = cl.Context([device])
q = cl.CommandQueue(ctx)
prg = cl.Program(ctx, """
kernel void twice(global float *a) { a[get_global_id(0)] *= 2; }
kernel void add_index(global int *a) { a[get_global_id(0)] += (int)get_global_id(0); }
""").build()
N = 100003


def case_coarse_grain_between_maps():
    ary = cl.svm_empty(ctx, cl.svm_mem_flags.READ_WRITE, N, np.float32, alignment=64)
    with cl.SVM(ary).map_rw(q) as a:
        a[:] = np.arange(N, dtype=np.float32)
    prg.twice(q, (N,), None, cl.SVM(ary))
    with cl.SVM(ary).map_ro(q) as a:
        assert np.array_equal(a, 2 * np.arange(N, dtype=np.float32)), a[:8]


def case_fine_grain_read_directly():
    flags = cl.svm_mem_flags.READ_WRITE | cl.svm_mem_flags.SVM_FINE_GRAIN_BUFFER
    ary = cl.svm_empty(ctx, flags, N, np.int32)
    ary[:] = 5
    prg.add_index(q, (N,), None, cl.SVM(ary))
    q.finish()
    assert np.array_equal(ary, 5 + np.arange(N, dtype=np.int32)), ary[:8]


def case_copies_and_fills():
    src = np.random.default_rng(7).random(N).astype(np.float32)
    svm = cl.svm_empty(ctx, cl.svm_mem_flags.READ_WRITE, N, np.float32)
    cl.enqueue_copy(q, cl.SVM(svm), src)
    back = np.empty_like(src)
    cl.enqueue_copy(q, back, cl.SVM(svm))
    assert np.array_equal(back, src)
    cl.enqueue_svm_memfill(q, cl.SVM(svm), np.float32(1.5))
    cl.enqueue_copy(q, back, cl.SVM(svm))
    assert np.all(back == 1.5), back[:8]


def case_arrays_on_svm_allocator():
    alloc = SVMAllocator(ctx, flags=cl.svm_mem_flags.READ_WRITE, queue=q)
    x = np.random.default_rng(3).random(N).astype(np.float32)
    a = cla.to_device(q, x, allocator=alloc)
    assert np.allclose((a * 2 + 1).get(), x * 2 + 1)
    assert np.isclose(cla.sum(a).get(), x.sum(dtype=np.float64), rtol=1e-4)


failures = 0
for name in [n for n in dir() if n.startswith("case_")]:
    try:
        globals()[name]()
        print("ok", name[5:])
    except Exception:
        traceback.print_exc(file=sys.stdout)
        print("not ok", name[5:])
        failures += 1
sys.exit(1 if failures else 0)
