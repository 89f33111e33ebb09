// ViennaCL on the OpenCL platform the loader sees, against host results:
// vector operations, inner product and norms, dense matrix product, sparse
// (CSR) matrix-vector product, and the conjugate gradient solver.
// Prints "case NAME ok|FAIL detail"; exit status 1 when a case fails.
#define VIENNACL_WITH_OPENCL
#include <cmath>
#include <cstdio>
#include <map>
#include <random>
#include <string>
#include <vector>
#include <viennacl/compressed_matrix.hpp>
#include <viennacl/linalg/cg.hpp>
#include <viennacl/linalg/inner_prod.hpp>
#include <viennacl/linalg/norm_2.hpp>
#include <viennacl/linalg/prod.hpp>
#include <viennacl/matrix.hpp>
#include <viennacl/ocl/backend.hpp>
#include <viennacl/vector.hpp>

static int failures = 0;
static void report(const char *name, double err, double tol) {
  bool ok = err <= tol;
  printf("case %s %s (relative error %.3g, tolerance %.3g)\n", name, ok ? "ok" : "FAIL", err, tol);
  failures += !ok;
}
static double rel(const std::vector<double> &a, const std::vector<double> &b) {
  double num = 0, den = 0;
  for (size_t i = 0; i < a.size(); i++) { num += (a[i] - b[i]) * (a[i] - b[i]); den += b[i] * b[i]; }
  return std::sqrt(num / (den > 0 ? den : 1));
}

template <typename T> static void run(const char *prec, double tol) {
  std::mt19937 gen(42);
  std::uniform_real_distribution<double> U(-1, 1);
  char name[64];
  const size_t n = 10007;
  std::vector<T> x(n), y(n);
  for (size_t i = 0; i < n; i++) { x[i] = T(U(gen)); y[i] = T(U(gen)); }
  viennacl::vector<T> vx(n), vy(n), vz(n);
  viennacl::copy(x, vx);
  viennacl::copy(y, vy);
  vz = T(2.5) * vx - vy + viennacl::linalg::element_prod(vx, vy);
  std::vector<T> z(n);
  viennacl::copy(vz, z);
  std::vector<double> got(n), ref(n);
  for (size_t i = 0; i < n; i++) { got[i] = z[i]; ref[i] = 2.5 * x[i] - y[i] + double(x[i]) * y[i]; }
  snprintf(name, sizeof name, "vector_ops_%s", prec); report(name, rel(got, ref), tol);
  double dot = 0, nrm = 0;
  for (size_t i = 0; i < n; i++) { dot += double(x[i]) * y[i]; nrm += double(x[i]) * x[i]; }
  T vdot = viennacl::linalg::inner_prod(vx, vy), vnrm = viennacl::linalg::norm_2(vx);
  snprintf(name, sizeof name, "inner_prod_norm_%s", prec);
  report(name, std::fabs(vdot - dot) / std::fabs(dot) + std::fabs(vnrm - std::sqrt(nrm)) / std::sqrt(nrm), 10 * tol);

  // Dense: C = A * B, 123x77 times 77x91 (sizes not multiples of a tile).
  const size_t M = 123, K = 77, N = 91;
  std::vector<std::vector<T>> A(M, std::vector<T>(K)), B(K, std::vector<T>(N)), C(M, std::vector<T>(N));
  for (auto &r : A) for (auto &v : r) v = T(U(gen));
  for (auto &r : B) for (auto &v : r) v = T(U(gen));
  viennacl::matrix<T> vA(M, K), vB(K, N), vC(M, N);
  viennacl::copy(A, vA);
  viennacl::copy(B, vB);
  vC = viennacl::linalg::prod(vA, vB);
  viennacl::copy(vC, C);
  std::vector<double> g2, r2;
  for (size_t i = 0; i < M; i++)
    for (size_t j = 0; j < N; j++) {
      double s = 0;
      for (size_t k = 0; k < K; k++) s += double(A[i][k]) * B[k][j];
      g2.push_back(C[i][j]); r2.push_back(s);
    }
  snprintf(name, sizeof name, "dense_gemm_%s", prec); report(name, rel(g2, r2), tol);
  // Transposed product and matrix-vector.
  viennacl::vector<T> vv(K), vr(M);
  std::vector<T> v(K), r(M);
  for (auto &e : v) e = T(U(gen));
  viennacl::copy(v, vv);
  vr = viennacl::linalg::prod(vA, vv);
  viennacl::copy(vr, r);
  std::vector<double> g3, r3;
  for (size_t i = 0; i < M; i++) { double s = 0; for (size_t k = 0; k < K; k++) s += double(A[i][k]) * v[k]; g3.push_back(r[i]); r3.push_back(s); }
  snprintf(name, sizeof name, "dense_gemv_%s", prec); report(name, rel(g3, r3), tol);

  // Sparse: 2D Poisson matrix on a 60x60 grid (SPD), CSR.
  const size_t G = 60, S = G * G;
  std::vector<std::map<unsigned int, T>> P(S);
  for (size_t i = 0; i < G; i++)
    for (size_t j = 0; j < G; j++) {
      size_t k = i * G + j;
      P[k][k] = 4;
      if (i > 0) P[k][k - G] = -1;
      if (i + 1 < G) P[k][k + G] = -1;
      if (j > 0) P[k][k - 1] = -1;
      if (j + 1 < G) P[k][k + 1] = -1;
    }
  viennacl::compressed_matrix<T> vP(S, S);
  viennacl::copy(P, vP);
  std::vector<T> b(S), out(S);
  for (auto &e : b) e = T(U(gen));
  viennacl::vector<T> vb(S), vo(S);
  viennacl::copy(b, vb);
  vo = viennacl::linalg::prod(vP, vb);
  viennacl::copy(vo, out);
  std::vector<double> g4, r4;
  for (size_t k = 0; k < S; k++) { double s = 0; for (auto &e : P[k]) s += double(e.second) * b[e.first]; g4.push_back(out[k]); r4.push_back(s); }
  snprintf(name, sizeof name, "sparse_spmv_%s", prec); report(name, rel(g4, r4), tol);

  // CG on P x = b; check the residual on the host.
  viennacl::vector<T> vsol = viennacl::linalg::solve(vP, vb, viennacl::linalg::cg_tag(tol > 1e-8 ? 1e-5 : 1e-10, 2000));
  std::vector<T> sol(S);
  viennacl::copy(vsol, sol);
  std::vector<double> Ax(S), bd(S);
  for (size_t k = 0; k < S; k++) { double s = 0; for (auto &e : P[k]) s += double(e.second) * sol[e.first]; Ax[k] = s; bd[k] = b[k]; }
  snprintf(name, sizeof name, "cg_solver_%s", prec); report(name, rel(Ax, bd), tol > 1e-8 ? 1e-4 : 1e-9);
}

int main(int argc, char **argv) {
  // argv[1]: "float" or "double" (default: both)
  std::string which = argc > 1 ? argv[1] : "both";
  auto dev = viennacl::ocl::current_device();
  printf("device: %s\n", dev.name().c_str());
  if (which != "double") run<float>("float", 1e-5);
  if (which == "float") return failures ? 1 : 0;
  if (dev.double_support()) run<double>("double", 1e-12);
  else { printf("case double FAIL no double support\n"); failures++; }
  return failures ? 1 : 0;
}
