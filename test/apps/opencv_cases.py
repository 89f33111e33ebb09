"""OpenCV T-API cases for test/apps/opencv.sh: each operation on a cv2.UMat
(OpenCL) against the same operation on numpy arrays with OpenCL off.
Usage: opencv_cases.py EXPECTED_DEVICE_SUBSTRING [CASE...]; no case: list."""
import sys
from caserunner import run_cases
import numpy as np
import cv2

rng = np.random.default_rng(7)
H, W = 480, 640
# A smooth image with edges, so that Canny and thresholds have structure.
yy, xx = np.mgrid[0:H, 0:W]
base = (128 + 60 * np.sin(xx / 23.0) * np.cos(yy / 31.0)).astype(np.float32)
base[100:300, 200:400] += 50
noise = rng.normal(0, 6, (H, W, 3))
IMG = np.clip(base[..., None] + noise + np.array([0, 20, -20]), 0, 255).astype(np.uint8)
GRAY = cv2.cvtColor(IMG, cv2.COLOR_BGR2GRAY)
F32 = rng.random((H, W)).astype(np.float32)


def both(fn, *args):
    """(OpenCL result, CPU result) of fn applied to UMats / numpy arrays."""
    cv2.ocl.setUseOpenCL(False)
    ref = fn(*args)
    cv2.ocl.setUseOpenCL(True)
    got = fn(*[cv2.UMat(a) if isinstance(a, np.ndarray) else a for a in args])
    return host(got), host(ref)


def host(r):
    if isinstance(r, cv2.UMat):
        return r.get()
    if isinstance(r, (tuple, list)):
        return np.array([host(x) for x in r])
    return r


def cmp(got, ref, tol=1, frac=0.0, what=""):
    got = np.asarray(got, dtype=np.float64)
    ref = np.asarray(ref, dtype=np.float64)
    if got.shape != ref.shape:
        raise AssertionError("%s shape %s vs %s" % (what, got.shape, ref.shape))
    diff = np.abs(got - ref)
    bad = np.count_nonzero(diff > tol)
    if bad > frac * diff.size:
        raise AssertionError("%s: %d of %d elements differ by more than %g (max %g)"
                             % (what, bad, diff.size, tol, diff.max()))


def case_filters():
    cmp(*both(lambda a: cv2.GaussianBlur(a, (5, 5), 1.5), IMG), what="GaussianBlur")
    cmp(*both(lambda a: cv2.blur(a, (7, 7)), IMG), what="blur")
    cmp(*both(lambda a: cv2.medianBlur(a, 5), GRAY), what="medianBlur")
    cmp(*both(lambda a: cv2.Sobel(a, cv2.CV_16S, 1, 0, ksize=3), GRAY), what="Sobel")
    k = np.array([[0, -1, 0], [-1, 5, -1], [0, -1, 0]], np.float32)
    cmp(*both(lambda a: cv2.filter2D(a, -1, k), IMG), what="filter2D")
    cmp(*both(lambda a: cv2.bilateralFilter(a, 5, 30, 5), GRAY), tol=2, what="bilateralFilter")


def case_color():
    cmp(*both(lambda a: cv2.cvtColor(a, cv2.COLOR_BGR2GRAY), IMG), what="BGR2GRAY")
    cmp(*both(lambda a: cv2.cvtColor(a, cv2.COLOR_BGR2HSV), IMG), what="BGR2HSV")
    cmp(*both(lambda a: cv2.cvtColor(a, cv2.COLOR_BGR2YUV), IMG), what="BGR2YUV")
    cmp(*both(lambda a: cv2.cvtColor(a, cv2.COLOR_BGR2Lab), IMG), tol=2, what="BGR2Lab")
    cmp(*both(lambda a: cv2.cvtColor(a, cv2.COLOR_BGR2RGBA), IMG), tol=0, what="BGR2RGBA")


def case_geometry():
    cmp(*both(lambda a: cv2.resize(a, (320, 240), interpolation=cv2.INTER_LINEAR), IMG), what="resize linear down")
    cmp(*both(lambda a: cv2.resize(a, (1000, 700), interpolation=cv2.INTER_LINEAR), IMG), what="resize linear up")
    cmp(*both(lambda a: cv2.resize(a, (213, 160), interpolation=cv2.INTER_AREA), IMG), what="resize area")
    cmp(*both(lambda a: cv2.resize(a, (800, 600), interpolation=cv2.INTER_NEAREST), IMG), tol=0,
        frac=0.001, what="resize nearest")
    M = cv2.getRotationMatrix2D((W / 2, H / 2), 17, 0.9)
    cmp(*both(lambda a: cv2.warpAffine(a, M, (W, H)), IMG), frac=0.002, what="warpAffine")
    P = cv2.getPerspectiveTransform(np.float32([[0, 0], [W, 0], [0, H], [W, H]]),
                                    np.float32([[10, 20], [W - 30, 5], [25, H - 10], [W - 5, H - 40]]))
    cmp(*both(lambda a: cv2.warpPerspective(a, P, (W, H)), IMG), frac=0.002, what="warpPerspective")
    cmp(*both(lambda a: cv2.flip(a, 1), IMG), tol=0, what="flip")


def case_morphology():
    k = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (5, 5))
    cmp(*both(lambda a: cv2.erode(a, k), GRAY), tol=0, what="erode")
    cmp(*both(lambda a: cv2.dilate(a, k, iterations=2), IMG), tol=0, what="dilate")
    cmp(*both(lambda a: cv2.morphologyEx(a, cv2.MORPH_GRADIENT, k), GRAY), tol=0, what="gradient")
    cmp(*both(lambda a: cv2.morphologyEx(a, cv2.MORPH_OPEN, np.ones((3, 3), np.uint8)), GRAY), tol=0, what="open")


def case_canny():
    got, ref = both(lambda a: cv2.Canny(a, 20, 60), GRAY)
    if np.count_nonzero(ref) < 1000:
        raise AssertionError("reference found too few edges")
    cmp(got, ref, tol=0, frac=0.01, what="Canny")
    cmp(*both(lambda a: cv2.threshold(a, 127, 255, cv2.THRESH_BINARY)[1], GRAY), tol=0, what="threshold")
    cmp(*both(lambda a: cv2.adaptiveThreshold(a, 255, cv2.ADAPTIVE_THRESH_MEAN_C, cv2.THRESH_BINARY, 11, 2), GRAY),
        tol=0, frac=0.002, what="adaptiveThreshold")


def case_histogram_reductions():
    cmp(*both(lambda a: cv2.calcHist([a], [0], None, [256], [0, 256]), GRAY), tol=0, what="calcHist")
    cmp(*both(lambda a: cv2.equalizeHist(a), GRAY), what="equalizeHist")
    cmp(*both(lambda a: np.array(cv2.sumElems(a)), IMG), tol=0.5, what="sum")
    cmp(*both(lambda a: np.array(cv2.mean(a)), IMG), tol=1e-6, what="mean")
    cmp(*both(lambda a: np.array(cv2.minMaxLoc(a)[:2]), GRAY), tol=0, what="minMaxLoc")
    cmp(*both(lambda a: cv2.countNonZero(a), GRAY - 100), tol=0, what="countNonZero")
    cmp(*both(lambda a: cv2.norm(a, cv2.NORM_L2), F32), tol=1e-3, what="norm L2")
    cmp(*both(lambda a: cv2.meanStdDev(a), F32), tol=1e-5, what="meanStdDev")


def case_arithmetic():
    F2 = rng.random((H, W)).astype(np.float32)
    cmp(*both(cv2.add, IMG, IMG), tol=0, what="add saturate")
    cmp(*both(lambda a, b: cv2.addWeighted(a, 0.3, b, 0.7, 5), IMG, IMG[::-1].copy()), what="addWeighted")
    cmp(*both(cv2.multiply, F32, F2), tol=1e-6, what="multiply")
    cmp(*both(cv2.divide, F32, F2 + 0.5), tol=1e-5, what="divide")
    cmp(*both(lambda a: cv2.magnitude(a, a), F32), tol=1e-5, what="magnitude")
    cmp(*both(lambda a: cv2.transpose(a), F32), tol=0, what="transpose")
    cmp(*both(lambda a, b: cv2.gemm(a, b, 1, None, 0), F32[:128, :200].copy(), F2[:200, :96].copy()),
        tol=1e-3, what="gemm")


CASES = {n[5:]: f for n, f in sorted(globals().items()) if n.startswith("case_")}

if __name__ == "__main__":
    if len(sys.argv) < 3:
        print(" ".join(CASES))
        sys.exit(0)
    want = sys.argv[1]
    cv2.ocl.setUseOpenCL(True)
    dev = cv2.ocl.Device.getDefault()
    print("haveOpenCL %s useOpenCL %s device %r platform version %r" % (
        cv2.ocl.haveOpenCL(), cv2.ocl.useOpenCL(), dev.name(), dev.version()), flush=True)

    def check():
        if not cv2.ocl.useOpenCL():
            raise AssertionError("cv2.ocl.useOpenCL() is False: no OpenCL device")
        if want not in dev.name():
            raise AssertionError("device %r is not %r" % (dev.name(), want))

    run_cases(CASES, sys.argv[2:], check)
