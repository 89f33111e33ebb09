/* The whole-function vectorizer, by difference: every kernel here is built
 * twice, vectorized (the default) and with AQUILA_VECTORIZE=0, run on the
 * same input with several local sizes (multiples of the vector width, and
 * sizes that leave a scalar rest or need the scalar version), and the two
 * outputs must be identical. The kernels exercise what the vectorizer must
 * get right: divergent branches and loops, values leaving loops at
 * different iterations, memory under masks (including indices that wrap
 * in lanes that are off), stores to one address, atomics, private arrays,
 * switches, OpenCL vectors and barriers. A few results are also checked
 * against a host computation, so that both builds being wrong alike shows. */
#include "../api/api.h"

struct vcase {
  const char *name;
  const char *source; /* kernel "k"(__global const int *in, __global int *out, int n) */
  unsigned dims;
  size_t reqd;   /* the kernel's reqd_work_group_size along x, run with that only */
  size_t reqd_y; /* and along y (2D) */
};

/* in[] holds small signed values; out[] has room for n + 64 elements. */
static const struct vcase cases[] = {
    {"if_else",
     "__kernel void k(__global const int *in, __global int *out, int n) {\n"
     "  int i = get_global_id(0), x = in[i], r;\n"
     "  if (x > 0) r = x * 3 + 1; else r = -x / 2;\n"
     "  out[i] = r;\n"
     "}\n",
     1},
    {"nested_if",
     "__kernel void k(__global const int *in, __global int *out, int n) {\n"
     "  int i = get_global_id(0), x = in[i], r = 0;\n"
     "  if (x & 1) {\n"
     "    if (x & 2) r = x + 10; else { r = x - 10; if (x & 4) r *= 2; }\n"
     "  } else if (x & 8) {\n"
     "    r = i;\n"
     "  } else {\n"
     "    r = -i;\n"
     "  }\n"
     "  out[i] = r;\n"
     "}\n",
     1},
    {"varying_loop",
     "__kernel void k(__global const int *in, __global int *out, int n) {\n"
     "  int i = get_global_id(0), s = 0;\n"
     "  for (int j = 0; j < (in[i] & 31); j++) s += j * in[(i + j) % n];\n"
     "  out[i] = s;\n"
     "}\n",
     1},
    {"loop_break_continue",
     "__kernel void k(__global const int *in, __global int *out, int n) {\n"
     "  int i = get_global_id(0), s = 0, j;\n"
     "  for (j = 0; j < 40; j++) {\n"
     "    int v = in[(i * 7 + j) % n];\n"
     "    if (v % 5 == 0) continue;\n"
     "    if (v > 40) break;\n"
     "    s += v;\n"
     "  }\n"
     "  out[i] = s * 100 + j;\n"
     "}\n",
     1},
    {"return_in_loop",
     "__kernel void k(__global const int *in, __global int *out, int n) {\n"
     "  int i = get_global_id(0);\n"
     "  out[i] = -1;\n"
     "  for (int j = 0; j < 64; j++) {\n"
     "    if (in[(i + j) % n] == 7) { out[i] = j; return; }\n"
     "  }\n"
     "  out[i] = 1000;\n"
     "}\n",
     1},
    {"nested_varying_loops",
     "__kernel void k(__global const int *in, __global int *out, int n) {\n"
     "  int i = get_global_id(0), s = 0;\n"
     "  for (int a = 0; a < (i & 7); a++)\n"
     "    for (int b = a; b < (in[i] & 15); b++)\n"
     "      s += a ^ b;\n"
     "  out[i] = s;\n"
     "}\n",
     1},
    {"find_first",
     "__kernel void k(__global const int *in, __global int *out, int n) {\n"
     "  int i = get_global_id(0), j = 0, last = 0;\n"
     "  while (j < n && in[j] <= in[i]) { last = in[j]; j++; }\n"
     "  out[i] = j * 1000 + last;\n"
     "}\n",
     1},
    {"switch_varying",
     "__kernel void k(__global const int *in, __global int *out, int n) {\n"
     "  int i = get_global_id(0), r;\n"
     "  switch (in[i] & 7) {\n"
     "  case 0: r = 5; break;\n"
     "  case 1: r = i; break;\n"
     "  case 3: r = in[i] * in[i];\n"
     "  case 4: r = -3; break;\n"
     "  default: r = 42;\n"
     "  }\n"
     "  out[i] = r;\n"
     "}\n",
     1},
    {"wrapping_index",
     "__kernel void k(__global const int *in, __global int *out, int n) {\n"
     "  int i = get_global_id(0);\n"
     "  uint j = (uint)i - 5u;\n"
     "  int r = 0;\n"
     "  if (j < (uint)n) r = in[j];\n"
     "  int m = i - 9;\n"
     "  if (m >= 0) r += in[m];\n"
     "  if (i + 3 < n) r += in[n - 1 - i - 3];\n"
     "  out[i] = r;\n"
     "}\n",
     1},
    {"store_under_mask",
     "__kernel void k(__global const int *in, __global int *out, int n) {\n"
     "  int i = get_global_id(0);\n"
     "  out[i] = 0;\n"
     "  if (in[i] > 10) out[i] = in[i];\n"
     "  if (i % 3 == 1) out[i] += in[n - 1 - i];\n"
     "}\n",
     1},
    {"last_writer",
     "__kernel void k(__global const int *in, __global int *out, int n) {\n"
     "  int l = get_local_id(0), g = get_group_id(0);\n"
     "  if (l % 3 == 0) out[g] = l * 10 + (in[get_global_id(0)] & 1);\n"
     "}\n",
     1},
    {"atomics",
     "__kernel void k(__global const int *in, __global int *out, int n) {\n"
     "  int i = get_global_id(0);\n"
     "  if (in[i] & 1) atomic_add(&out[in[i] & 15], i);\n"
     "  atomic_inc(&out[16]);\n"
     "  if (i < 5) atomic_max(&out[17], in[i]);\n"
     "}\n",
     1},
    {"private_array",
     "__kernel void k(__global const int *in, __global int *out, int n) {\n"
     "  int i = get_global_id(0), a[9];\n"
     "  for (int j = 0; j < 9; j++) a[j] = in[(i + j) % n] * (j + 1);\n"
     "  int s = 0;\n"
     "  for (int j = 0; j < 9; j++) s += a[(in[i] + j) & 7] - a[j];\n"
     "  out[i] = s + a[in[i] & 7];\n"
     "}\n",
     1},
    {"private_uniform_index",
     "typedef struct { int x; float y; } S;\n"
     "__kernel void k(__global const int *in, __global int *out, int n) {\n"
     "  int i = get_global_id(0), a[32], m = n % 29 + 3;\n"
     "  S s[6];\n"
     "  for (int j = 0; j < m; j++) a[j] = in[(i + j) % n];\n"
     "  for (int j = m - 1; j > 0; j--) a[j - 1] += a[j] * 2;\n"
     "  int c = min(m - 1, 6);\n"
     "  for (int j = 0; j < c; j++) { s[j].x = a[j] - i; s[j].y = (float)a[j + 1] * 0.5f; }\n"
     "  int t = 0;\n"
     "  for (int j = 0; j < c; j++) t += s[j].x * (int)s[(j + i) % c].y;\n"
     "  out[i] = a[0] + a[m / 2] + t;\n"
     "}\n",
     1},
    /* A state array updated in a loop each work-item runs its own number
     * of times (an iterated hash), at constant indices and at the loop's
     * counter, under a nested branch too: lanes that left the loop keep
     * their values (the array is read and written whole, a select keeping
     * the inactive lanes'). */
    {"private_state_divergent_loop",
     "__kernel void k(__global const int *in, __global int *out, int n) {\n"
     "  int i = get_global_id(0);\n"
     "  uint h[8], w[4];\n"
     "  for (int j = 0; j < 8; j++) h[j] = (uint)in[(i + j) % n] + j;\n"
     "  for (int j = 0; j < 4; j++) w[j] = (uint)(i * j);\n"
     "  for (int r = 0; r < (in[i] & 15); r++) {\n"
     "    for (int j = 0; j < 8; j++) h[j] = rotate(h[j] ^ h[(j + 1) & 7], 5u) + w[j & 3];\n"
     "    w[r & 3] += h[3];\n"
     "    if (h[0] & 1) w[0] ^= (uint)r;\n"
     "  }\n"
     "  uint s = 0;\n"
     "  for (int j = 0; j < 8; j++) s = s * 31u + h[j];\n"
     "  out[i] = (int)(s + w[0] + w[1] + w[2] + w[3]);\n"
     "}\n",
     1},
    {"division",
     "__kernel void k(__global const int *in, __global int *out, int n) {\n"
     "  int i = get_global_id(0), d = in[i] % 4, r = 0;\n"
     "  if (d != 0) r = (in[i] * 1000) / d + (i % d);\n"
     "  uint u = (uint)in[(i + 1) % n];\n"
     "  if (u != 0u) r += (int)(0xFFFFFFFFu / u);\n"
     "  out[i] = r;\n"
     "}\n",
     1},
    {"types",
     "__kernel void k(__global const int *in, __global int *out, int n) {\n"
     "  int i = get_global_id(0);\n"
     "  char c = (char)in[i];\n"
     "  short s = (short)(in[i] * 300);\n"
     "  long l = (long)in[i] * 123456789L + i;\n"
     "  double d = (double)in[i] / 3.0;\n"
     "  ulong h = (ulong)i * 0x9E3779B97F4A7C15UL;\n"
     "  out[i] = c + s + (int)(l >> 7) + (int)(d * 8.0) + (int)(h >> 40) + popcount(in[i]) +\n"
     "           clz(in[i]) + rotate(in[i], 3) + mul_hi(in[i], 0x12345678) + add_sat(in[i], "
     "0x7ffffff0);\n"
     "}\n",
     1},
    {"float_math",
     "__kernel void k(__global const int *in, __global int *out, int n) {\n"
     "  int i = get_global_id(0);\n"
     "  float x = (float)in[i] * 0.25f;\n"
     "  float y = fma(x, x, 1.0f) + fabs(x) * floor(x * 3.3f) + fmin(x, 2.0f) - sqrt(fabs(x));\n"
     "  y = x > 0 ? y / x : y * 0.5f;\n"
     "  out[i] = (int)(y * 1000.0f) + isnan(y) + (int)copysign(1.0f, x);\n"
     "}\n",
     1},
    {"opencl_vectors",
     "__kernel void k(__global const int *in, __global int *out, int n) {\n"
     "  int i = get_global_id(0);\n"
     "  if (i >= n / 4) { out[n + 63 - (i & 31)] = 0; return; }\n"
     "  int4 v = vload4(i, in);\n"
     "  int4 w = v.wzyx * (int4)(1, 2, 3, 4) + (int4)(i);\n"
     "  w = select(w, -w, w > 20);\n"
     "  vstore4(w, i, out);\n"
     "}\n",
     1},
    {"element_groups",
     "__kernel void k(__global const int *in, __global int *out, int n) {\n"
     "  int i = get_global_id(0);\n"
     "  __global const int4 *a = (__global const int4 *)in;\n"
     "  __global int4 *o = (__global int4 *)out;\n"
     "  if (i >= n / 4) return;\n"
     "  int4 x = a[max(i - 1, 0)];\n"
     "  int4 y = a[i];\n"
     "  int4 z = a[(i * 7) % (n / 4)];\n"
     "  int3 w = vload3(i, in);\n"
     "  if (x.x & 1) o[i] = x + y * 2 - z;\n"
     "  else o[i] = (int4)(w.x, w.y, w.z, y.w);\n"
     "  if (i < 21 && i % 5 == 2) vstore3(w * 3, i, out + n);\n"
     "}\n",
     1},
    {"byte_groups",
     "__kernel void k(__global const int *in, __global int *out, int n) {\n"
     "  int i = get_global_id(0);\n"
     "  uchar4 c = ((__global const uchar4 *)in)[i];\n"
     "  uchar4 d = ((__global const uchar4 *)in)[min(i + 1, n - 1)];\n"
     "  out[i] = c.x + c.y * 3 + c.z * 7 - d.z;\n"
     "  if (c.x > 100) ((__global uchar4 *)out)[i] = (uchar4)(c.y, c.x, 9, d.w);\n"
     "}\n",
     1},
    {"structs",
     "typedef struct { int a; float b; short c; short d; } P;\n"
     "__kernel void k(__global const int *in, __global int *out, int n) {\n"
     "  int i = get_global_id(0);\n"
     "  __global const P *p = (__global const P *)in;\n"
     "  __global P *q = (__global P *)out;\n"
     "  if (i >= n / 3) return;\n"
     "  P x = p[i];\n"
     "  P y;\n"
     "  y.a = x.a + x.c;\n"
     "  y.b = x.b;\n"
     "  y.c = x.d;\n"
     "  y.d = (short)i;\n"
     "  if (x.a & 2) q[i] = y;\n"
     "  else q[i].a = -x.a;\n"
     "}\n",
     1},
    {"whole_vectors",
     "__kernel void k(__global const int *in, __global int *out, int n) {\n"
     "  int i = get_global_id(0);\n"
     "  __global const ushort *h = (__global const ushort *)in;\n"
     "  if (i >= n / 2) return;\n"
     "  uint4 a = convert_uint4(vload4(i, h));\n"
     "  uint4 b = convert_uint4(vload4(min(i + 1, n / 2 - 1), h));\n"
     "  uint2 c = convert_uint2(vload2(i * 3 % (n / 2), h));\n"
     "  uint4 r = a.wzyx + b * 3u + (uint4)(c, c.yx);\n"
     "  if (r.x & 1) vstore4(convert_ushort4(r), i, (__global ushort *)out);\n"
     "  else vstore2(convert_ushort2(r.zw), 2 * i + 1, (__global ushort *)out);\n"
     "}\n",
     1},
    {"required_size_8",
     "__kernel __attribute__((reqd_work_group_size(8, 1, 1)))\n"
     "void k(__global const int *in, __global int *out, int n) {\n"
     "  __local int s[8];\n"
     "  int l = get_local_id(0), i = get_global_id(0);\n"
     "  s[l] = in[i] * 3 + (int)sqrt((float)abs(in[i]));\n"
     "  barrier(CLK_LOCAL_MEM_FENCE);\n"
     "  int r = s[7 - l] - s[(l + 1) % 8];\n"
     "  if (r & 1) r += (int)(exp((float)(r % 5)) * 10.0f);\n"
     "  out[i] = r;\n"
     "}\n",
     1, 8},
    {"dynamic_dim",
     "__kernel void k(__global const int *in, __global int *out, int n) {\n"
     "  int s = 0;\n"
     "  for (uint d = 0; d < get_work_dim() + 1; d++) s = s * 31 + (int)get_local_id(d) +\n"
     "      (int)get_global_id(d) * 7;\n"
     "  out[get_global_id(0)] = s + in[get_global_id(0)];\n"
     "}\n",
     1},
    {"local_reduction",
     "__kernel void k(__global const int *in, __global int *out, int n) {\n"
     "  __local int s[256];\n"
     "  int l = get_local_id(0), ls = get_local_size(0);\n"
     "  s[l] = in[get_global_id(0)];\n"
     "  barrier(CLK_LOCAL_MEM_FENCE);\n"
     "  for (int k = 1; k < ls; k *= 2) {\n"
     "    int v = (l % (2 * k) == 0 && l + k < ls) ? s[l + k] : 0;\n"
     "    barrier(CLK_LOCAL_MEM_FENCE);\n"
     "    s[l] += v;\n"
     "    barrier(CLK_LOCAL_MEM_FENCE);\n"
     "  }\n"
     "  out[get_global_id(0)] = s[l] + (l == 0 ? 1000000 : 0);\n"
     "}\n",
     1},
    /* __local counters updated per distinct address (emit_group_counter_update):
     * hot and cold bins, lanes off, a uniform counter, sub, and an atomic
     * whose old value is used (not merged). */
    {"local_histogram",
     "__kernel void k(__global const int *in, __global int *out, int n) {\n"
     "  __local int bins[32];\n"
     "  __local int count, seen;\n"
     "  int l = get_local_id(0), ls = get_local_size(0), i = get_global_id(0);\n"
     "  for (int b = l; b < 32; b += ls) bins[b] = 0;\n"
     "  if (l == 0) count = seen = 0;\n"
     "  barrier(CLK_LOCAL_MEM_FENCE);\n"
     "  int v = in[i];\n"
     "  atomic_inc(&bins[v & 3 ? v & 7 : (v >> 2) & 31]);\n"
     "  if (v % 3) atomic_add(&bins[(v * 5) & 31], 3);\n"
     "  if (v > 10) atomic_sub(&bins[v & 1], 2);\n"
     "  if (v & 1) atomic_add(&count, 2);\n"
     "  atomic_dec(&count);\n"
     "  int order = atomic_inc(&seen);\n"
     "  barrier(CLK_LOCAL_MEM_FENCE);\n"
     "  out[i] = (l < 32 ? bins[l] : 0) + (l == 0 ? count * 1000 : 0) + (order >= ls) * 7;\n"
     "}\n",
     1},
    {"local_scan_divergent",
     "__kernel void k(__global const int *in, __global int *out, int n) {\n"
     "  __local int s[256];\n"
     "  int l = get_local_id(0), ls = get_local_size(0);\n"
     "  s[l] = in[get_global_id(0)];\n"
     "  for (int off = 1; off < ls; off <<= 1) {\n"
     "    barrier(CLK_LOCAL_MEM_FENCE);\n"
     "    int v = l >= off ? s[l - off] : 0;\n"
     "    barrier(CLK_LOCAL_MEM_FENCE);\n"
     "    if (v & 1) s[l] += v; else s[l] -= v / 2;\n"
     "  }\n"
     "  barrier(CLK_LOCAL_MEM_FENCE);\n"
     "  int acc = 0;\n"
     "  for (int j = 0; j <= l % 13; j++) acc += s[(l + j) % ls];\n"
     "  out[get_global_id(0)] = acc;\n"
     "}\n",
     1},
    {"two_dims",
     "__kernel void k(__global const int *in, __global int *out, int n) {\n"
     "  int x = get_global_id(0), y = get_global_id(1), w = get_global_size(0);\n"
     "  int i = y * w + x;\n"
     "  int r = in[i];\n"
     "  if (x > 0) r += in[i - 1];\n"
     "  if (y > 0) r += 2 * in[i - w];\n"
     "  if ((x + y) & 1) r = -r;\n"
     "  out[i] = r * (int)get_local_id(1) + (int)get_local_id(0);\n"
     "}\n",
     2},
    {"two_dims_local_tile",
     "__kernel void k(__global const int *in, __global int *out, int n) {\n"
     "  __local int t[16][17];\n"
     "  int lx = get_local_id(0), ly = get_local_id(1), ls = get_local_size(0) * "
     "get_local_size(1);\n"
     "  int x = get_global_id(0), y = get_global_id(1), w = get_global_size(0);\n"
     "  for (int j = ly * get_local_size(0) + lx; j < 16 * 17; j += ls)\n"
     "    t[j / 17][j % 17] = in[(get_group_id(0) * 31 + get_group_id(1) * 7 + j) % n];\n"
     "  barrier(CLK_LOCAL_MEM_FENCE);\n"
     "  int r = t[lx % 16][ly % 16] * 3 + t[ly % 16][(lx + 1) % 16];\n"
     "  out[y * w + x] = r;\n"
     "}\n",
     2},
    /* A flattened local id, tid = x + 8 y, and its quotients and
     * remainders: with 8-wide groups, tid % 8 and tid % 16 step like x
     * across a vector of 8 and tid / 8, tid / 16 are the same for all of
     * it (the lanes never straddle a multiple of 8); tid & 3, tid >> 2,
     * tid % 24 do straddle. CLBlast keeps tid in a volatile variable. */
    {"flattened_local_id",
     "__kernel __attribute__((reqd_work_group_size(8, 8, 1)))\n"
     "void k(__global const int *in, __global int *out, int n) {\n"
     "  volatile int tid = get_local_id(0) + 8 * get_local_id(1);\n"
     "  int a0 = tid % 8, a1 = tid / 8, b0 = tid % 16, b1 = tid / 16;\n"
     "  int c0 = tid & 3, c1 = tid >> 2, d0 = tid % 24, d1 = tid / 24;\n"
     "  uint u = get_local_id(0) + 8 * get_local_id(1);\n"
     "  int g = get_group_id(0) * 64 + get_group_id(1) * 7;\n"
     "  __local int t[64];\n"
     "  t[b1 * 16 + b0] = in[(g + a1 * 8 + a0) % n];\n"
     "  barrier(CLK_LOCAL_MEM_FENCE);\n"
     "  int r = t[a0 * 8 + a1] * 3 + c0 * 100 + c1 * 7 + d0 * 11 + d1 * 13;\n"
     "  r += (u % 8) * 17 + (u / 16) * 19 + (u & 7) + ((u >> 3) << 5) + (u % 16 >> 1);\n"
     "  out[get_global_id(1) * get_global_size(0) + get_global_id(0)] = r;\n"
     "}\n",
     2, 8, 8},
    /* The same without a required size (vectors of 16, groups of any
     * size), and a negative dividend, whose remainder is not affine. */
    {"flattened_local_id_any_size",
     "__kernel void k(__global const int *in, __global int *out, int n) {\n"
     "  int tid = get_local_id(0) + 16 * get_local_id(1);\n"
     "  int x = get_global_id(0), y = get_global_id(1), w = get_global_size(0);\n"
     "  int m = (int)get_local_id(0) - 4;\n"
     "  int r = in[(tid / 16 * 16 + tid % 16 + y * 3) % n] + (tid >> 4) * 5 + (tid & 15) * 9;\n"
     "  r += (m % 8) * 31 + (m / 8) * 37 + (tid % 32) * 41 + (tid / 32) * 43;\n"
     "  out[y * w + x] = r;\n"
     "}\n",
     2},
    /* Two rows of a group of 8 x 8 in one vector of 16: every local id
     * has two runs, x the same in both halves, y one more in the second.
     * A GEMM in small, CLBlast's way: tiles in __local memory loaded by a
     * flattened id, then a loop that reads A's tile by x (the same in both
     * rows: one half-width load for both) and B's by y (one address per
     * row: a broadcast each), with int4 elements of each. */
    /* Rows that are one vector each, with a loop accumulating floats per
     * row between barriers: the rows' loops run jammed (regions.c), which
     * must not change a row's order of operations. A tile's dot products
     * (16 rows), a loop whose count depends on the data, with fma() and
     * a second chain (8 rows), and float4 / double accumulators (4 rows);
     * each sum returned bit for bit. */
    {"accumulating_rows_tile",
     "__kernel __attribute__((reqd_work_group_size(16, 16, 1)))\n"
     "void k(__global const int *in, __global int *out, int n) {\n"
     "  __local float ta[16][16], tb[16][16];\n"
     "  int lx = get_local_id(0), ly = get_local_id(1);\n"
     "  int x = get_global_id(0), y = get_global_id(1), w = get_global_size(0);\n"
     "  float sum = 0.1f * ly;\n"
     "  for (int t = 0; t < 3; t++) {\n"
     "    ta[ly][lx] = in[(y * 5 + lx + t * 16) % n] * 0.37f;\n"
     "    tb[ly][lx] = in[(x * 3 + ly * 7 + t) % n] * 1.13f;\n"
     "    barrier(CLK_LOCAL_MEM_FENCE);\n"
     "    for (int k = 0; k < 16; k++) sum += ta[ly][k] * tb[k][lx];\n"
     "    barrier(CLK_LOCAL_MEM_FENCE);\n"
     "  }\n"
     "  out[y * w + x] = as_int(sum);\n"
     "}\n",
     2, 16, 16},
    {"accumulating_rows_varying",
     "__kernel __attribute__((reqd_work_group_size(16, 8, 1)))\n"
     "void k(__global const int *in, __global int *out, int n) {\n"
     "  __local float tile[8][16];\n"
     "  int lx = get_local_id(0), ly = get_local_id(1);\n"
     "  int x = get_global_id(0), y = get_global_id(1), w = get_global_size(0);\n"
     "  tile[ly][lx] = in[(x + y * 3) % n] * 0.25f - 1.0f;\n"
     "  barrier(CLK_LOCAL_MEM_FENCE);\n"
     "  float s = (float)lx, p = 1.0f;\n"
     "  int count = (in[(y * 11) % n] & 7) + 3;\n"
     "  for (int k = 0; k < count; k++) {\n"
     "    s = fma(tile[(ly + k) & 7][lx], p, s);\n"
     "    p *= 0.9f;\n"
     "  }\n"
     "  barrier(CLK_LOCAL_MEM_FENCE);\n"
     "  out[y * w + x] = as_int(s) ^ count;\n"
     "}\n",
     2, 16, 8},
    {"accumulating_rows_wide",
     "__kernel __attribute__((reqd_work_group_size(16, 4, 1)))\n"
     "void k(__global const int *in, __global int *out, int n) {\n"
     "  __local float4 tile[4][16];\n"
     "  int lx = get_local_id(0), ly = get_local_id(1);\n"
     "  int x = get_global_id(0), y = get_global_id(1), w = get_global_size(0);\n"
     "  tile[ly][lx] = (float4)(in[x % n], in[(x + y) % n], lx, ly) * 0.5f;\n"
     "  barrier(CLK_LOCAL_MEM_FENCE);\n"
     "  float4 acc = (float4)(0.0f);\n"
     "  double d = 0.0;\n"
     "  for (int k = 0; k < 16; k++) {\n"
     "    acc += tile[ly][k] * tile[(ly + 1) & 3][k];\n"
     "    d += (double)tile[ly][k].x * 1.0000001;\n"
     "  }\n"
     "  barrier(CLK_LOCAL_MEM_FENCE);\n"
     "  out[y * w + x] = as_int(acc.x) ^ as_int(acc.y) ^ as_int(acc.z) ^ as_int(acc.w) ^\n"
     "                   (int)as_long(d);\n"
     "}\n",
     2, 16, 4},
    {"two_rows_gemm",
     "__kernel __attribute__((reqd_work_group_size(8, 8, 1)))\n"
     "void k(__global const int *in, __global int *out, int n) {\n"
     "  __local int4 ta[8 * 8], tb[8 * 8];\n"
     "  int lx = get_local_id(0), ly = get_local_id(1), tid = lx + 8 * ly;\n"
     "  int g = get_group_id(0) * 3 + get_group_id(1) * 5;\n"
     "  int4 acc = (int4)(ly, lx, tid, g);\n"
     "  for (int t = 0; t < 3; t++) {\n"
     "    ta[tid] = (int4)(in[(g + tid + t) % n], in[(g + 2 * tid) % n], tid, t);\n"
     "    tb[tid % 8 * 8 + tid / 8] = (int4)(in[(g * 7 + tid) % n], t, -tid, in[(tid * 3) % n]);\n"
     "    barrier(CLK_LOCAL_MEM_FENCE);\n"
     "    for (int k = 0; k < 8; k++) {\n"
     "      int4 a = ta[k * 8 + lx], b = tb[ly * 8 + k];\n"
     "      acc += a * b.x + (a ^ b) * b.w;\n"
     "    }\n"
     "    barrier(CLK_LOCAL_MEM_FENCE);\n"
     "  }\n"
     "  out[get_global_id(1) * get_global_size(0) + get_global_id(0)] =\n"
     "      acc.x + acc.y * 3 + acc.z * 5 + acc.w * 7;\n"
     "}\n",
     2, 8, 8},
    /* Two rows without barriers: branches and loops on y (uniform in each
     * row, not in the vector), quotients by y's functions, a store to one
     * address per row (the row's last work-item's value stays), a local
     * id of a dimension known at run time, and x % 4 (runs that straddle:
     * varying). */
    {"two_rows_by_row",
     "__kernel __attribute__((reqd_work_group_size(8, 4, 1)))\n"
     "void k(__global const int *in, __global int *out, int n) {\n"
     "  int lx = get_local_id(0), ly = get_local_id(1);\n"
     "  int x = get_global_id(0), y = get_global_id(1), w = get_global_size(0);\n"
     "  int r = in[(y * w + x) % n] + in[(y * 3 + (n & 1)) % n] * 5;\n"
     "  if (ly & 1) r = r * 3 - ly; else r += in[(x + 1) % n];\n"
     "  for (int j = 0; j < ly + (in[y % n] & 3); j++) r = r * 7 + j;\n"
     "  r += (y * 13 + 5) / (ly + 1 + (n & 1)) + (lx % 4) * 11 + (int)get_local_id(n & 1) * 17;\n"
     "  r += (int)get_local_id((n >> 1) & 1) * 19 + (ly > 1 ? in[ly] : lx);\n"
     "  out[n + ((y * 4 + get_group_id(0)) & 63)] = r;\n"
     "  out[(y * w + x) % n] = r;\n"
     "}\n",
     2, 8, 4},
    /* Two rows under masks: bounds checks whose indices are negative in
     * lanes that are off (the runs' starts found from each run's first
     * active lane), a row with no lane on, int2 elements, masked stores. */
    {"two_rows_masked",
     "__kernel __attribute__((reqd_work_group_size(8, 2, 1)))\n"
     "void k(__global const int *in, __global int *out, int n) {\n"
     "  int x = get_global_id(0), y = get_global_id(1), w = get_global_size(0);\n"
     "  int i = y * w + x - 13, r = -1;\n"
     "  __global const int2 *p = (__global const int2 *)in;\n"
     "  if (i >= 0 && i < n / 2 - 8) {\n"
     "    int2 q = p[i];\n"
     "    r = in[i] + in[i + 1] * 3 + q.x * 5 + q.y * 7;\n"
     "  }\n"
     "  if (y & 1) r += in[(i & 127) + 3] * 11 + in[(y * 3) & 63];\n"
     "  if (x & 1) r += in[y & 63] * 13;\n"
     "  if (i >= 0 && (x & 3) != 1) out[i] = r;\n"
     "  if (i < 0 && (y & 1)) out[n + (x & 31)] = r * 2;\n"
     "}\n",
     2, 8, 2},
    /* Two rows with a vector load at one address per row and a pointer
     * stepping through a loop by a step of y's. */
    {"two_rows_pointer_walk",
     "__kernel __attribute__((reqd_work_group_size(8, 2, 1)))\n"
     "void k(__global const int *in, __global int *out, int n) {\n"
     "  int lx = get_local_id(0), ly = get_local_id(1), lz = get_local_id(2);\n"
     "  int x = get_global_id(0), y = get_global_id(1), w = get_global_size(0);\n"
     "  __global const int4 *row = (__global const int4 *)in + ly * 3 + lz;\n"
     "  int4 s = row[0];\n"
     "  __global const int *p = in + ly * 5;\n"
     "  int acc = 0;\n"
     "  for (int j = 0; j < 6; j++, p += ly + 1) acc += *p * (j + 1) + p[lx];\n"
     "  int i = (y * w + x) % n;\n"
     "  out[i] = acc + s.x * 3 + s.y * 5 + s.z * 7 + s.w * 11 + lz * 1000;\n"
     "}\n",
     2, 8, 2},
    /* CLBlast's GEMM in small: a tile in __local memory, then a loop
     * between the barriers that rows of a group run alike (its trip count
     * from an argument) and whose body is large: two rows of vectors are
     * unrolled and jammed there (regions.c), sharing what they load alike.
     * Three rows: the jammed pair and a row on its own. */
    {"jammed_rows",
     "__kernel __attribute__((reqd_work_group_size(8, 3, 1)))\n"
     "void k(__global const int *in, __global int *out, int n) {\n"
     "  __local int4 ta[64];\n"
     "  int lx = get_local_id(0), ly = get_local_id(1), tid = lx + 8 * ly;\n"
     "  int g = get_group_id(0) + 5 * get_group_id(1);\n"
     "  for (int i = tid; i < 64; i += 24)\n"
     "    ta[i] = (int4)(in[(g + i) % n], in[(g + 2 * i) % n], in[(g + 3 * i) % n], i);\n"
     "  barrier(CLK_LOCAL_MEM_FENCE);\n"
     "  int4 acc0 = 0, acc1 = 0, acc2 = (int4)(ly);\n"
     "  for (int k = 0; k < (n & 7) + 9; k++) {\n"
     "    int4 a = ta[(k * 8 + lx) & 63], c = ta[(k + 8 * ly) & 63];\n"
     "    int b0 = in[(k + ly * 5) % n], b1 = in[(2 * k + ly) % n];\n"
     "    acc0 += a * b0 + c;\n"
     "    acc1 += a.wzyx * b1 - (c >> 1);\n"
     "    acc2 = acc2 * 3 + (a ^ c) + (int4)(b0 & b1);\n"
     "    if (a.x > b0) acc0.y -= b1;\n"
     "  }\n"
     "  barrier(CLK_LOCAL_MEM_FENCE);\n"
     "  int4 r = acc0 + acc1 * 7 + acc2 * 13;\n"
     "  out[get_global_id(1) * get_global_size(0) + get_global_id(0)] = r.x + r.y * 3 + r.z * 5 + "
     "r.w * 11;\n"
     "}\n",
     2, 8, 3},
    /* Neighbours clamped to the edge, as image filters read them: the
     * address is affine but where a clamp holds (unclamped() in
     * vectorize.c). At both ends and in the middle of a vector, under a
     * mask, through unsigned, narrowing and widening arithmetic, walking
     * down, and near the ends of a 16-bit index's range. */
    {"clamped_neighbours",
     "__kernel void k(__global const int *in, __global int *out, int n) {\n"
     "  int i = get_global_id(0);\n"
     "  if (i >= n - 3) return;\n"
     "  int l = max(i - 1, 0), r = min(i + 1, n - 1), c = clamp(i - 5, 3, n - 29);\n"
     "  uint u = min((uint)i + 2u, (uint)n - 7u);\n"
     "  int d = max(n - 1 - i - 2, 0);\n"
     "  short s = (short)(i * 1000 - 32700);\n"
     "  int w = clamp((int)(short)(s + (short)5), 0, n - 2);\n"
     "  ushort h = (ushort)(i + 65530);\n"
     "  int z = min((int)(ushort)(h + (ushort)3), n - 1);\n"
     "  out[i] = in[l] + 3 * in[r] + 5 * in[c] + 7 * in[u] + 11 * in[d] + 13 * in[w] + 17 * "
     "in[z];\n"
     "}\n",
     1},
    /* Indices that are consecutive in some vectors only (rows of a tile
     * 22 wide, a remainder by n, bytes through a division and its
     * remainder) or in none (a stride of 3 through a 16-bit index): the
     * run-time check compares the index vector (consecutive_index() in
     * vectorize.c), of the narrower integer where the index extends one. */
    {"index_runs",
     "__kernel void k(__global const int *in, __global int *out, int n) {\n"
     "  int i = get_global_id(0);\n"
     "  if (i == n - 2) return;\n"
     "  int tx = i % 22, ty = i / 22;\n"
     "  int a = in[(ty * 25 + tx) % n];\n"
     "  uint u = (uint)(ty * 23 + tx);\n"
     "  int b = in[u % (uint)n];\n"
     "  short s = (short)(i * 3);\n"
     "  int c = in[(s & 0x7ff) % n];\n"
     "  __global const uchar *bytes = (__global const uchar *)in;\n"
     "  int d = bytes[(i / 7) * 7 + i % 7];\n"
     "  long l = (long)i * 2 - (i & 1);\n"
     "  int e = in[l % n];\n"
     "  out[i] = a + 3 * b + 5 * c + 7 * d + 11 * e;\n"
     "}\n",
     1},
    {"clamped_pixels",
     "__kernel void k(__global const int *in, __global int *out, int n) {\n"
     "  int x = get_global_id(0), y = get_global_id(1);\n"
     "  int w = get_global_size(0), h = get_global_size(1);\n"
     "  __global const uchar4 *p = (__global const uchar4 *)in;\n"
     "  if (x >= w - 2) return;\n"
     "  int xl = max(x - 1, 0), xr = min(x + 1, w - 3);\n"
     "  int ya = max(y - 1, 0) * w, yc = y * w, yb = min(y + 1, h - 1) * w;\n"
     "  int4 a = convert_int4(p[ya + xl]) - convert_int4(p[yb + xr]);\n"
     "  int4 b = convert_int4(p[yc + xl]) * 2 + convert_int4(p[yc + xr]);\n"
     "  float2 f = vload2(clamp(x - 2, 1, w / 2), (__global const float *)in + yc);\n"
     "  int4 r = a * 3 + b + (int4)((int)(f.x * 0.0f), 0, 0, 0);\n"
     "  ((__global uchar4 *)out)[yc + x] = convert_uchar4_sat(r);\n"
     "}\n",
     2},
    /* A radix-8 FFT's exchange (clFFT's passes): each work-item stores its
     * 8 values at lds[(me / 8) * 64 + me % 8 + k * 8] (two runs of 8 lanes
     * in a vector of 16, taken by two half-width stores), reads them back
     * at unit stride (its own, where the group is no multiple of 8 work-items
     * and some were not written), then the same pattern for float2 elements (two
     * members) read back as pairs; and a global read of runs of 8 (in
     * bounds by the modulo only for the first half of most vectors: a
     * gather then). */
    {"radix8_runs_of_eight",
     "#define EACH(S) S(0) S(1) S(2) S(3) S(4) S(5) S(6) S(7)\n"
     "__kernel void k(__global const int *in, __global int *out, int n) {\n"
     "  __local int lds[(256 / 8 + 1) * 64];\n"
     "  __local int2 pairs[(256 / 8 + 1) * 64];\n"
     "  uint me = get_local_id(0), ls = get_local_size(0), base = get_group_id(0) * ls;\n"
     "  int g = in[((me / 8) * 16 + me % 8 + base) % n];\n"
     "  int h = in[(base / 8 * 16 + (me / 8) * 16 + me % 8) % (uint)n];\n"
     "#define PUT(k) lds[(me / 8) * 64 + me % 8 + k * 8] = in[(base + me + k) % n] + k + g;\n"
     "  EACH(PUT)\n"
     "  barrier(CLK_LOCAL_MEM_FENCE);\n"
     "  int s = h;\n"
     "#define GET(k) s = s * 3 + lds[ls % 8 ? (me / 8) * 64 + me % 8 + ((k + 5) & 7) * 8\\\n"
     "                                       : me + k * ls];\n"
     "  EACH(GET)\n"
     "#define PUT2(k) pairs[(me / 8) * 64 + me % 8 + k * 8] = (int2)(s + k, s - k);\n"
     "  EACH(PUT2)\n"
     "  barrier(CLK_LOCAL_MEM_FENCE);\n"
     "#define GET2(k) { int2 q = pairs[(me / 8) * 64 + me % 8 + ((k + 3) & 7) * 8];\\\n"
     "                  s = s * 5 + q.x - 2 * q.y; }\n"
     "  EACH(GET2)\n"
     "  out[base + me] = s;\n"
     "}\n",
     1},
    /* A radix-4 pass of a Stockham FFT (clFFT's, two butterflies per
     * work-item): stores at ((2 * me + c) / 64) * 256 + (2 * me + c) % 64 +
     * 64 * k for c = 0 and 1 (after InstCombine: (me << 3) & -256, uniform
     * in a vector, with 2 * me & 62 or (2 * me | 1) & 63 stepping by 2: one
     * interleaved pair of vectors), read back where each work-item wrote;
     * then masks that round down where lanes straddle a block or not, and
     * a remainder whose lanes start one above an aligned value; and
     * twiddles from a table at 7 + 7 * (me % 8) + k, the same addresses in
     * both halves of a vector of 16. */
    {"radix4_pair_exchange",
     "#define EACH(S) S(0) S(1) S(2) S(3)\n"
     "#define AT(c, k) (((2 * me + c) / 64) * 256 + (2 * me + c) % 64 + k * 64)\n"
     "#define R8(b) b * 3 + 1, b * 3 - 2, b * 5, b + 7, 11 - b, b * b, b ^ 5, b - 9\n"
     "__constant int tw[128] = {R8(0), R8(1), R8(2), R8(3), R8(4), R8(5), R8(6), R8(7),\n"
     "                          R8(8), R8(9), R8(10), R8(11), R8(12), R8(13), R8(14), R8(15)};\n"
     "__kernel void k(__global const int *in, __global int *out, int n) {\n"
     "  __local int lds[2048 + 64];\n"
     "  uint me = get_local_id(0), ls = get_local_size(0), base = get_group_id(0) * ls;\n"
     "#define PUT(k) lds[AT(0, k)] = in[(base + me + k) % n] + k;\\\n"
     "               lds[AT(1, k)] = in[(base + me * 3 + k) % n] - k;\n"
     "  EACH(PUT)\n"
     "  barrier(CLK_LOCAL_MEM_FENCE);\n"
     "  int s = (int)((me * 8) & ~255u) + 3 * (int)((me * 4) & ~31u);\n"
     "  s += 5 * (int)((me * 2 + 1) & ~15u) + 7 * (int)((me * 8 + 3) & ~63u);\n"
     "  s += 11 * (int)((2 * me + 1) % 64) + 13 * (int)((4 * me + 3) % 32);\n"
     "  s += 17 * (int)((2 * me + 40) % 64) + 19 * (int)((2 * me + 40) & 48);\n"
     "#define GET(k) s = s * 3 + lds[AT(0, k)] - 5 * lds[AT(1, k)];\\\n"
     "               s += tw[2 * (7 + 7 * (me % 8) + k)] * 3 - tw[2 * (7 + 7 * (me % 8) + k) + "
     "1];\n"
     "  EACH(GET)\n"
     "  out[base + me] = s;\n"
     "}\n",
     1},
    /* Tables of 8-byte elements read at addresses that are apart (one
     * gather of the elements, split into their members): int2 at a
     * data-dependent index and at 7 + 7 * (me % 8) + k, both halves of an
     * int2 read as scalars, short4 under a branch some lanes skip; and
     * written so, into __local tiles at a permuted index and 72 bytes
     * apart (one scatter of the elements), read back where each
     * work-item wrote. */
    {"table_pairs",
     "__kernel void k(__global const int *in, __global int *out, int n) {\n"
     "  __local int2 tile[256];\n"
     "  __local int pairs[512];\n"
     "  __local int2 spread[256 * 9];\n"
     "  __global const int2 *t2 = (__global const int2 *)in;\n"
     "  __global const short4 *t4 = (__global const short4 *)in;\n"
     "  uint me = get_local_id(0), i = get_global_id(0);\n"
     "  int h = in[i % n] & 15;\n"
     "  int2 a = t2[h + 3];\n"
     "  int2 b = t2[(7 + 7 * (me % 8)) % (n / 2)];\n"
     "  int c = in[2 * ((h * 5) % 16)] - 3 * in[2 * ((h * 5) % 16) + 1];\n"
     "  int s = a.x * 3 - a.y + 5 * b.x + 7 * b.y + c;\n"
     "  if (h & 2) {\n"
     "    short4 d = t4[(h * 3 + 1) % 8];\n"
     "    s += d.x - 2 * d.y + 3 * d.z - 4 * d.w;\n"
     "  }\n"
     "  uint ls = get_local_size(0), p = (me * 5) % ls;\n"
     "  tile[p] = (int2)(s, s ^ 3);\n"
     "  spread[me * 9] = (int2)(s + 5, s * 7);\n"
     "  if (h & 1) { pairs[2 * p] = s - 1; pairs[2 * p + 1] = s * 3; }\n"
     "  barrier(CLK_LOCAL_MEM_FENCE);\n"
     "  s += tile[p].x * 2 - tile[p].y + spread[me * 9].x - 3 * spread[me * 9].y;\n"
     "  if (h & 1) s += pairs[2 * p] - pairs[2 * p + 1];\n"
     "  out[i] = s;\n"
     "}\n",
     1},
    /* An FFT's exchange through __local memory with uint indices, unrolled
     * as clFFT generates it: each work-item writes 8 consecutive elements
     * (one access group, found by the index they share: lds[zext(me * 8 |
     * k)]; then in reverse order, 8 scatters), and reads at unit stride
     * (lds[(me + k * ls) & 0xffffffff]). */
    {"local_uint_exchange",
     "#define EACH(S) S(0) S(1) S(2) S(3) S(4) S(5) S(6) S(7)\n"
     "#define EACH_DOWN(S) S(7) S(6) S(5) S(4) S(3) S(2) S(1) S(0)\n"
     "__kernel void k(__global const int *in, __global int *out, int n) {\n"
     "  __local int lds[256 * 8 + 16];\n"
     "  uint me = get_local_id(0), ls = get_local_size(0), off = (uint)n & 15;\n"
     "  uint base = get_group_id(0) * ls;\n"
     "#define LOAD(k) int r##k = in[(base + me + k * 3) % n];\n"
     "  EACH(LOAD)\n"
     "#define PUT(k) lds[off + me * 8 + k] = r##k * (k + 1);\n"
     "  EACH(PUT)\n"
     "  barrier(CLK_LOCAL_MEM_FENCE);\n"
     "#define GET(k) r##k = lds[off + me + k * ls];\n"
     "  EACH(GET)\n"
     "  barrier(CLK_LOCAL_MEM_FENCE);\n"
     "#define PUT_DOWN(k) lds[me * 8 + k] = r##k - k;\n"
     "  EACH_DOWN(PUT_DOWN)\n"
     "  barrier(CLK_LOCAL_MEM_FENCE);\n"
     "  int s = 0;\n"
     "#define SUM(k) s = s * 3 + lds[me + k * ls];\n"
     "  EACH(SUM)\n"
     "  out[base + me] = s;\n"
     "}\n",
     1},
    /* 4, 8 and 16 members a lane, written and read whole (interleaved
     * and split by two-input shuffles, address.c), and one element of a
     * neighbour's: every element ends up in the result. */
    {"members_zipped",
     "__kernel void k(__global const int *in, __global int *out, int n) {\n"
     "  int l = get_local_id(0), i = get_global_id(0), x = in[i];\n"
     "  __local int t8[256 * 8], t4[256 * 4], t16[256 * 16];\n"
     "  vstore8((int8)(x, x + 1, x * 2, x ^ 5, -x, x * 3, x - 7, x >> 1), l, t8);\n"
     "  vstore4((int4)(x * 5, x + 9, -2 * x, x & 3), l, t4);\n"
     "  vstore16((int16)(x, 1, 2, x - 3, x + 4, x + 5, 6, x * 7, 8, x ^ 9, 10, -x, x | 12, 13,\n"
     "                   x + 14, x ^ 15), l, t16);\n"
     "  barrier(CLK_LOCAL_MEM_FENCE);\n"
     "  int m = (l + 1) % (int)get_local_size(0);\n"
     "  int8 a = vload8(l, t8), a2 = vload8(m, t8);\n"
     "  int4 b = vload4(l, t4);\n"
     "  int16 c = vload16(l, t16);\n"
     "  int s = 0;\n"
     "  for (int e = 0; e < 8; e++) s = s * 3 + ((int *)&a)[e];\n"
     "  for (int e = 0; e < 4; e++) s = s * 5 + ((int *)&b)[e];\n"
     "  for (int e = 0; e < 16; e++) s = s * 7 + ((int *)&c)[e];\n"
     "  out[i] = s + a2.s3 * 31 + a2.s6;\n"
     "}\n",
     1},
};

static const size_t local_sizes_1d[] = {16, 64, 48, 256, 24, 8, 7, 1, 0};
static const size_t local_sizes_2d[][2] = {{16, 4}, {32, 2}, {8, 8}, {16, 16}, {5, 3}, {0, 0}};

/* AQUILA_VECTORIZE as the test started: "check" under make check-vectorize,
 * which the vectorized builds keep. */
static const char *initial_vectorize;

static void restore_vectorize(void) {
  if (initial_vectorize)
    setenv("AQUILA_VECTORIZE", initial_vectorize, 1);
  else
    unsetenv("AQUILA_VECTORIZE");
}

/* Builds c's kernel with AQUILA_VECTORIZE as given (NULL: as the test started). */
static cl_kernel build_case_kernel(const struct vcase *c, const char *vectorize, cl_program *prog) {
  if (vectorize)
    setenv("AQUILA_VECTORIZE", vectorize, 1);
  else
    restore_vectorize();
  cl_int err;
  cl_program p = build_program(c->source, "", &err);
  if (!p || err != CL_SUCCESS) {
    restore_vectorize();
    printf("  %s: build failed (%d) with AQUILA_VECTORIZE=%s\n", c->name, err,
           vectorize ? vectorize : "(unset)");
    if (p) clReleaseProgram(p);
    return NULL;
  }
  cl_kernel k = clCreateKernel(p, "k", &err);
  /* Machine code is made at a kernel's first launch, or by a query that
   * needs it, under the environment of that moment: made here, while
   * AQUILA_VECTORIZE still says which code this kernel is to have (else
   * the "scalar" kernel would be vectorized like the other, and the
   * comparison would compare nothing). */
  cl_ulong private_size = 0;
  if (k)
    clGetKernelWorkGroupInfo(k, device, CL_KERNEL_PRIVATE_MEM_SIZE, sizeof private_size,
                             &private_size, NULL);
  restore_vectorize();
  *prog = p;
  return k;
}

/* Runs k over global (1D: n, 2D: side x side) with the given local size; returns out. */
static int *run(cl_kernel k, const int *in, int n, unsigned dims, const size_t *global,
                const size_t *local) {
  cl_int err;
  size_t bytes = (size_t)(n + 64) * sizeof(int);
  cl_mem din =
      clCreateBuffer(context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, bytes, (void *)in, &err);
  cl_mem dout = clCreateBuffer(context, CL_MEM_READ_WRITE, bytes, NULL, &err);
  int zero = 0;
  clEnqueueFillBuffer(queue, dout, &zero, sizeof zero, 0, bytes, 0, NULL, NULL);
  clSetKernelArg(k, 0, sizeof din, &din);
  clSetKernelArg(k, 1, sizeof dout, &dout);
  clSetKernelArg(k, 2, sizeof n, &n);
  int *out = calloc((size_t)n + 64, sizeof *out);
  err = clEnqueueNDRangeKernel(queue, k, dims, NULL, global, local, 0, NULL, NULL);
  if (err == CL_SUCCESS)
    err = clEnqueueReadBuffer(queue, dout, CL_TRUE, 0, bytes, out, 0, NULL, NULL);
  clReleaseMemObject(din);
  clReleaseMemObject(dout);
  if (err != CL_SUCCESS) {
    printf("  run failed: %d\n", err);
    free(out);
    return NULL;
  }
  return out;
}

static int compare_case(const struct vcase *c) {
  cl_program pv = NULL, ps = NULL;
  cl_kernel kv = build_case_kernel(c, NULL, &pv), ks = build_case_kernel(c, "0", &ps);
  int ok = kv && ks;
  for (int round = 0; ok; round++) {
    size_t global[2], local[2];
    int n;
    if (c->dims == 1) {
      if (!local_sizes_1d[round] || (c->reqd && round > 0)) break;
      local[0] = c->reqd ? c->reqd : local_sizes_1d[round];
      global[0] = local[0] * (local[0] >= 64 ? 4 : 21);
      n = (int)global[0];
    } else {
      if (!local_sizes_2d[round][0] || (c->reqd && round > 0)) break;
      local[0] = c->reqd ? c->reqd : local_sizes_2d[round][0];
      local[1] = c->reqd ? c->reqd_y : local_sizes_2d[round][1];
      global[0] = local[0] * 4;
      global[1] = local[1] * 3;
      n = (int)(global[0] * global[1]);
    }
    int *in = malloc(((size_t)n + 64) * sizeof *in);
    unsigned seed = 12345u + (unsigned)round;
    for (int i = 0; i < n + 64; i++) {
      seed = seed * 1103515245u + 12345u;
      in[i] = (int)((seed >> 16) % 97) - 30;
    }
    int *a = run(kv, in, n, c->dims, global, local), *b = run(ks, in, n, c->dims, global, local);
    if (!a || !b) {
      ok = 0;
    } else {
      for (int i = 0; i < n + 64; i++)
        if (a[i] != b[i]) {
          printf("  %s, local size %zu x %zu: out[%d] = %d vectorized, %d scalar\n", c->name,
                 local[0], c->dims > 1 ? local[1] : (size_t)1, i, a[i], b[i]);
          ok = 0;
          break;
        }
    }
    free(a);
    free(b);
    free(in);
  }
  if (kv) clReleaseKernel(kv);
  if (ks) clReleaseKernel(ks);
  if (pv) clReleaseProgram(pv);
  if (ps) clReleaseProgram(ps);
  return ok;
}

static void vectorized_matches_scalar(void) {
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
    CHECK(compare_case(&cases[i]));
}

/* ---- OpenCL vectors in per-lane private memory -------------------------------------------- */

/* Every OpenCL vector width of every type, read with vloadN from a
 * __private array at an offset that differs from work-item to work-item,
 * written back with vstoreN at another, and read once more: the
 * vectorizer keeps private arrays interleaved by lane, so an access of a
 * vector's elements through a pointer into one must step over the other
 * lanes' copies (CTS vload_private: vload3 returned its first element
 * three times). */
static const char *const private_types[] = {"char", "uchar", "short", "ushort", "int",
                                            "uint", "long",  "ulong", "float",  "double"};
static const int private_widths[] = {2, 3, 4, 8, 16};

/* One kernel per width: every type in turn, each on an array of its own
 * (an array accessed as whole vectors is not interleaved, and a kernel
 * that computes with wide vectors already is not vectorized: one width per
 * kernel keeps each access in the shape under test). */
static char *private_vector_source(int w) {
  static char src[16384];
  int n = snprintf(src, sizeof src,
                   "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n"
                   "__kernel void k(__global const int *in, __global int *out, int n) {\n"
                   "  int i = get_global_id(0), s = 0;\n"
                   "  uint at = (uint)(in[i] + 30) %% 5u, align = (uint)i %% 3u;\n");
  for (size_t a = 0; a < sizeof private_types / sizeof private_types[0]; a++) {
    const char *t = private_types[a];
    n += snprintf(src + n, sizeof src - (size_t)n,
                  "  {\n"
                  "    __private %s p[96];\n"
                  "    for (int j = 0; j < 96; j++) p[j] = (%s)(in[(j + i) %% n] + j);\n"
                  "    %s%d v = vload%d(at, p + align);\n"
                  "    vstore%d(v + (%s)1, (uint)(in[i] + 31) %% 4u, p + 1 + align);\n"
                  "    %s%d u = vload%d(at, p + align);\n"
                  "    for (int e = 0; e < %d; e++)\n"
                  "      s = s * 7 + (int)((%s *)&v)[e] + 3 * (int)((%s *)&u)[e];\n"
                  "  }\n",
                  t, t, t, w, w, w, t, t, w, w, w, t, t);
  }
  snprintf(src + n, sizeof src - (size_t)n, "  out[i] = s;\n}\n");
  return src;
}

static void private_vectors_match_scalar(void) {
  for (size_t b = 0; b < sizeof private_widths / sizeof private_widths[0]; b++) {
    char name[64];
    snprintf(name, sizeof name, "private vectors of %d", private_widths[b]);
    struct vcase c = {name, private_vector_source(private_widths[b]), 1, 0};
    if (!compare_case(&c)) {
      printf("  %s differ\n", name);
      CHECK(0);
    }
  }
}

/* The reduced CTS vload_private kernel, against the host. */
static void vload3_private_host_reference(void) {
  const char *src =
      "__kernel void k(__global const int *src, __global const uint *offsets,\n"
      "                __global const uint *align, __global int *results) {\n"
      "  __private int p[192];\n"
      "  int tid = get_global_id(0);\n"
      "  for (int i = 0; i < 192; i++) p[i] = src[i];\n"
      "  int3 t = vload3(offsets[tid], p + align[tid]);\n"
      "  results[3 * tid] = t.s0; results[3 * tid + 1] = t.s1; results[3 * tid + 2] = t.s2;\n"
      "}\n";
  cl_int err;
  cl_program p = build_program(src, "", &err);
  REQUIRE(p);
  cl_kernel k = clCreateKernel(p, "k", &err);
  REQUIRE(k);
  enum { N = 64 };
  int host_src[192], results[3 * N];
  cl_uint offsets[N], align[N];
  for (int i = 0; i < 192; i++)
    host_src[i] = 1000 + i;
  for (int i = 0; i < N; i++) {
    offsets[i] = (cl_uint)(i % 60);
    align[i] = (cl_uint)(i % 3);
  }
  cl_mem m[4] = {clCreateBuffer(context, CL_MEM_COPY_HOST_PTR, sizeof host_src, host_src, &err),
                 clCreateBuffer(context, CL_MEM_COPY_HOST_PTR, sizeof offsets, offsets, &err),
                 clCreateBuffer(context, CL_MEM_COPY_HOST_PTR, sizeof align, align, &err),
                 clCreateBuffer(context, CL_MEM_WRITE_ONLY, sizeof results, NULL, &err)};
  for (cl_uint i = 0; i < 4; i++)
    CHECK_EQ_INT(clSetKernelArg(k, i, sizeof m[i], &m[i]), CL_SUCCESS);
  size_t global = N, local = 16;
  CHECK_EQ_INT(clEnqueueNDRangeKernel(queue, k, 1, NULL, &global, &local, 0, NULL, NULL),
               CL_SUCCESS);
  CHECK_EQ_INT(clEnqueueReadBuffer(queue, m[3], CL_TRUE, 0, sizeof results, results, 0, NULL, NULL),
               CL_SUCCESS);
  for (int i = 0; i < N; i++)
    for (int e = 0; e < 3; e++) {
      int expect = host_src[offsets[i] * 3 + align[i] + e];
      if (results[3 * i + e] != expect) {
        printf("  work-item %d element %d: %d, expected %d\n", i, e, results[3 * i + e], expect);
        CHECK(0);
        i = N;
        break;
      }
    }
  for (int i = 0; i < 4; i++)
    clReleaseMemObject(m[i]);
  clReleaseKernel(k);
  clReleaseProgram(p);
}

/* 3-element vectors of narrow integers: vload3 gives a 4-element vector
 * whose last element is undefined, and clang reads element 0 back through
 * the whole vector's bits (bitcast, shl, ashr); joining the elements must
 * not let the undefined one spoil the others (CTS integer_mad_sat char3). */
static void narrow_vector3_match_scalar(void) {
  static const char *const types[] = {"char", "uchar", "short", "ushort"};
  static const char *const ops[] = {"mad_sat(a, b, c)", "mad_hi(a, b, c)", "add_sat(a, b)",
                                    "hadd(a, c)",       "a * b + c",       "clamp(a, b, c)"};
  for (size_t t = 0; t < 4; t++)
    for (size_t o = 0; o < sizeof ops / sizeof ops[0]; o++) {
      char src[1024], name[64];
      snprintf(src, sizeof src,
               "__kernel void k(__global const int *in, __global int *out, int n) {\n"
               "  int i = get_global_id(0);\n"
               "  __global const %s *s = (__global const %s *)in;\n"
               "  int j = %s;\n"
               "  %s3 a = vload3(j, s), b = vload3(j + 1, s), c = vload3(j + 2, s);\n"
               "  %s3 r = %s;\n"
               "  out[i] = (int)r.s0 * 65536 + (int)r.s1 * 256 + (int)r.s2;\n"
               "}\n",
               types[t], types[t], t < 2 ? "i" : "i % 64", types[t], types[t], ops[o]);
      snprintf(name, sizeof name, "%s3 %s", types[t], ops[o]);
      struct vcase c = {name, src, 1, 0};
      if (!compare_case(&c)) {
        printf("  %s differs\n", name);
        CHECK(0);
      }
    }
}

/* Both builds could be wrong alike: a few results against the host. */
static void host_reference(void) {
  const struct vcase *c = &cases[0]; /* if_else */
  cl_program p = NULL;
  cl_kernel k = build_case_kernel(c, NULL, &p);
  REQUIRE(k);
  int n = 1024, *in = malloc((size_t)(n + 64) * sizeof *in);
  for (int i = 0; i < n + 64; i++)
    in[i] = (i * 37) % 101 - 50;
  size_t global = (size_t)n, local = 64;
  int *out = run(k, in, n, 1, &global, &local);
  REQUIRE(out);
  for (int i = 0; i < n; i++) {
    int x = in[i], r = x > 0 ? x * 3 + 1 : -x / 2;
    if (out[i] != r) {
      printf("  if_else: out[%d] = %d, expected %d\n", i, out[i], r);
      CHECK(0);
      break;
    }
  }
  free(out);
  free(in);
  clReleaseKernel(k);
  clReleaseProgram(p);

  c = &cases[10]; /* last_writer: the highest local id that is a multiple of 3 */
  k = build_case_kernel(c, NULL, &p);
  REQUIRE(k);
  n = 256;
  in = calloc((size_t)n + 64, sizeof *in);
  global = (size_t)n;
  local = 64;
  out = run(k, in, n, 1, &global, &local);
  REQUIRE(out);
  for (int g = 0; g < 4; g++)
    CHECK_EQ_INT(out[g], 630);
  free(out);
  free(in);
  clReleaseKernel(k);
  clReleaseProgram(p);
}

/* Image reads and writes, inline (common formats) and out of line (the
 * others), vectorized and scalar alike, with a constant sampler and a
 * sampler argument, float and integer reads. */
static void images_match_scalar(void) {
  const char *src =
      "__constant sampler_t edge = CLK_NORMALIZED_COORDS_FALSE | CLK_ADDRESS_CLAMP_TO_EDGE |\n"
      "                            CLK_FILTER_NEAREST;\n"
      "__kernel void fimg(read_only image2d_t in, write_only image2d_t out, sampler_t s) {\n"
      "  int x = get_global_id(0), y = get_global_id(1);\n"
      "  float4 a = read_imagef(in, edge, (int2)(x ^ 1, y));\n"
      "  float4 b = read_imagef(in, s, (float2)(x + 0.5f, y - 0.5f));\n"
      "  if (x % 3) a = a * 0.5f + b * 0.25f;\n"
      "  write_imagef(out, (int2)(x, y), a + (float4)(x * 0.001f, 0, 0, 0));\n"
      "}\n"
      "__kernel void uimg(read_only image2d_t in, write_only image2d_t out, sampler_t s) {\n"
      "  int x = get_global_id(0), y = get_global_id(1);\n"
      "  uint4 a = read_imageui(in, edge, (int2)(x - 1, y + 1));\n"
      "  if (a.x & 1) a = a.wzyx;\n"
      "  write_imageui(out, (int2)(x, y), a + (uint4)(x & 3));\n"
      "}\n";
  struct {
    cl_channel_order order;
    cl_channel_type type;
    int integer;
  } formats[] = {
      {CL_RGBA, CL_UNORM_INT8, 0},    {CL_BGRA, CL_UNORM_INT8, 0},     {CL_R, CL_FLOAT, 0},
      {CL_RGBA, CL_FLOAT, 0},         {CL_RG, CL_SNORM_INT16, 0},      {CL_RGBA, CL_HALF_FLOAT, 0},
      {CL_RGBA, CL_UNSIGNED_INT8, 1}, {CL_RGBA, CL_UNSIGNED_INT16, 1}, {CL_R, CL_UNSIGNED_INT32, 1},
      {CL_RGBA, CL_SIGNED_INT8, 1}};
  cl_program p[2];
  cl_int err;
  for (int b = 0; b < 2; b++) {
    p[b] = build_program(src, "", &err);
    REQUIRE(p[b] && err == CL_SUCCESS);
  }
  cl_sampler smp = clCreateSampler(context, CL_FALSE, CL_ADDRESS_CLAMP, CL_FILTER_LINEAR, &err);
  REQUIRE(smp);
  const size_t w = 64, h = 8;
  unsigned char in_data[64 * 8 * 16];
  for (size_t i = 0; i < sizeof in_data; i++)
    in_data[i] = (unsigned char)(i * 37 + (i >> 5));
  /* Half and float data: finite values only. */
  for (size_t f = 0; f < sizeof formats / sizeof formats[0]; f++) {
    cl_image_format fmt = {formats[f].order, formats[f].type};
    unsigned char data[sizeof in_data];
    memcpy(data, in_data, sizeof data);
    if (fmt.image_channel_data_type == CL_FLOAT)
      for (size_t i = 0; i < sizeof data / 4; i++)
        ((float *)data)[i] = (float)(i % 97) * 0.01f;
    if (fmt.image_channel_data_type == CL_HALF_FLOAT)
      for (size_t i = 0; i < sizeof data / 2; i++)
        ((unsigned short *)data)[i] = (unsigned short)(0x3000 + i % 1024);
    unsigned char result[2][sizeof in_data];
    for (int b = 0; b < 2; b++) {
      /* Machine code is made at a kernel's first launch, under the
       * environment of that moment: the second program's kernels run
       * with the vectorizer off. */
      if (b) setenv("AQUILA_VECTORIZE", "0", 1);
      cl_mem in = clCreateImage2D(context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, &fmt, w, h, 0,
                                  data, &err);
      cl_mem out = clCreateImage2D(context, CL_MEM_WRITE_ONLY, &fmt, w, h, 0, NULL, &err);
      REQUIRE(in && out);
      cl_kernel k = clCreateKernel(p[b], formats[f].integer ? "uimg" : "fimg", &err);
      clSetKernelArg(k, 0, sizeof in, &in);
      clSetKernelArg(k, 1, sizeof out, &out);
      clSetKernelArg(k, 2, sizeof smp, &smp);
      size_t global[2] = {w, h}, local[2] = {32, 2}, origin[3] = {0, 0, 0}, region[3] = {w, h, 1};
      CHECK_EQ_INT(clEnqueueNDRangeKernel(queue, k, 2, NULL, global, local, 0, NULL, NULL),
                   CL_SUCCESS);
      memset(result[b], 0, sizeof result[b]);
      CHECK_EQ_INT(
          clEnqueueReadImage(queue, out, CL_TRUE, origin, region, 0, 0, result[b], 0, NULL, NULL),
          CL_SUCCESS);
      clReleaseKernel(k);
      clReleaseMemObject(in);
      clReleaseMemObject(out);
      restore_vectorize();
    }
    if (memcmp(result[0], result[1], sizeof result[0])) {
      printf("  image format %#x/%#x: vectorized and scalar results differ\n",
             fmt.image_channel_order, fmt.image_channel_data_type);
      CHECK(0);
    }
  }
  clReleaseSampler(smp);
  clReleaseProgram(p[0]);
  clReleaseProgram(p[1]);
}

/* A kernel that writes far past its private array (undefined behaviour,
 * as in OpenCV's Canny) must not reach the compute unit's stack: the
 * process lives on and other work-items' results are right. */
/* Kernel k of src built with AQUILA_VECTORIZE set to vectorize (NULL: as
 * it is), the setting kept until the caller's restore_vectorize() after
 * the kernel has run: its machine code is made at its first launch, and
 * tiers may make more later. NULL (the setting restored) on failure. */
static cl_kernel kernel_with_vectorize(const char *src, const char *vectorize, cl_program *prog) {
  cl_int err;
  if (vectorize) setenv("AQUILA_VECTORIZE", vectorize, 1);
  *prog = build_program(src, "", &err);
  cl_kernel k = *prog ? clCreateKernel(*prog, "k", &err) : NULL;
  if (!k) restore_vectorize();
  return k;
}

static void private_overrun_is_contained_as(const char *vectorize) {
  const char *src = "__kernel void k(__global int *out, int n) {\n"
                    "  int a[4];\n"
                    "  int i = get_global_id(0);\n"
                    "  a[0] = a[1] = a[2] = a[3] = i;\n"
                    "  for (int j = 4; j < n + (i & 1); j++) a[j] = -1;\n"
                    "  out[i] = (i & 1) ? 7 : a[i & 3];\n"
                    "}\n";
  cl_int err;
  cl_program p = NULL;
  cl_kernel k = kernel_with_vectorize(src, vectorize, &p);
  REQUIRE(k);
  int n = 4; /* even work-items stay in bounds; odd ones write one past the end */
  int big = 100000;
  size_t global = 256, local = 64;
  cl_mem out = clCreateBuffer(context, CL_MEM_READ_WRITE, global * sizeof(int), NULL, &err);
  clSetKernelArg(k, 0, sizeof out, &out);
  for (int round = 0; round < 2; round++) {
    clSetKernelArg(k, 1, sizeof(int), round ? &big : &n);
    CHECK_EQ_INT(clEnqueueNDRangeKernel(queue, k, 1, NULL, &global, &local, 0, NULL, NULL),
                 CL_SUCCESS);
    int host[256];
    CHECK_EQ_INT(clEnqueueReadBuffer(queue, out, CL_TRUE, 0, sizeof host, host, 0, NULL, NULL),
                 CL_SUCCESS);
    for (int i = 0; i < 256 && round == 0; i++)
      if (host[i] != ((i & 1) ? 7 : i)) {
        printf("  out[%d] = %d\n", i, host[i]);
        CHECK(0);
        break;
      }
  }
  restore_vectorize();
  clReleaseMemObject(out);
  clReleaseKernel(k);
  clReleaseProgram(p);
}

/* Vectorized, and scalar (AQUILA_VECTORIZE=0; the scalar rest of a row and
 * kernels the vectorizer leaves alone take the same path): a write far past
 * a private array stays inside it, instead of overwriting the compute
 * unit's stack (the process died of it before). */
static void private_overrun_is_contained(void) {
  private_overrun_is_contained_as(NULL);
  private_overrun_is_contained_as("0");
}

/* An address into a private array made in steps, the first of which lies
 * past the array (p + 2 * k - e, John the Ripper's zip kernel: p + 32 in a
 * 20-byte array, then back by 20), is used where it ends: inside the array.
 * Clamping the first step gave the zip kernel's compare the array's last
 * byte, and its self-test found no password. */
static void private_address_steps_past_the_array_as(const char *vectorize) {
  const char *src = "int differ(const uchar *a, __global const uchar *b, uint n) {\n"
                    "  while (n--)\n"
                    "    if (*a++ != *b++) return 1;\n"
                    "  return 0;\n"
                    "}\n"
                    "__kernel void k(__global const uchar *in, __global int *out, __constant uchar *c) {\n"
                    "  uchar p[20];\n"
                    "  int i = get_global_id(0), s = i % 4, k = c[0], e = c[1];\n"
                    "  for (int j = 0; j < 20; j++) p[j] = in[i * 20 + j];\n"
                    "  const uchar *a = p + 2 * k + s - e;\n"
                    "  out[2 * i] = a[0] | a[1] << 8 | a[3] << 16;\n"
                    "  out[2 * i + 1] = differ(p + 2 * k - e, in + i * 20 + 12, 8);\n"
                    "}\n";
  cl_int err;
  cl_program p = NULL;
  cl_kernel k = kernel_with_vectorize(src, vectorize, &p);
  REQUIRE(k);
  enum { N = 64 };
  unsigned char bytes[N * 20];
  for (int i = 0; i < N * 20; i++) bytes[i] = (unsigned char)(i * 7 + 1);
  cl_mem in = clCreateBuffer(context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, sizeof bytes, bytes,
                             &err);
  cl_mem out = clCreateBuffer(context, CL_MEM_READ_WRITE, 2 * N * sizeof(int), NULL, &err);
  unsigned char steps[2] = {16, 20};
  cl_mem c = clCreateBuffer(context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, sizeof steps, steps,
                            &err);
  clSetKernelArg(k, 0, sizeof in, &in);
  clSetKernelArg(k, 1, sizeof out, &out);
  clSetKernelArg(k, 2, sizeof c, &c);
  size_t global = N, local = 16;
  CHECK_EQ_INT(clEnqueueNDRangeKernel(queue, k, 1, NULL, &global, &local, 0, NULL, NULL),
               CL_SUCCESS);
  int host[2 * N];
  CHECK_EQ_INT(clEnqueueReadBuffer(queue, out, CL_TRUE, 0, sizeof host, host, 0, NULL, NULL),
               CL_SUCCESS);
  for (int i = 0; i < N; i++) {
    const unsigned char *a = bytes + i * 20 + 12 + i % 4;
    int want = a[0] | a[1] << 8 | a[3] << 16;
    if (host[2 * i] != want || host[2 * i + 1] != 0) {
      printf("  work-item %d: %#x and %d, expected %#x and 0\n", i, host[2 * i], host[2 * i + 1],
             want);
      CHECK(0);
      break;
    }
  }
  restore_vectorize();
  clReleaseMemObject(in);
  clReleaseMemObject(out);
  clReleaseMemObject(c);
  clReleaseKernel(k);
  clReleaseProgram(p);
}

/* Lookups through pointers to parts of private arrays, as Blowfish's
 * S-boxes are read (S2 = S + 256, then S2[x & 0xff]), a pointer stepped
 * back, a field of a struct at a run-time index, and a write far past a
 * small array through a pointer into its middle: each access's offset is
 * the sum over its chain of GEPs, which keeps the in-range lookups'
 * values (and lets the compiler drop their clamps) and still keeps the
 * stray write inside its array. */
static void private_lookups_through_offset_pointers_as(const char *vectorize) {
  const char *src =
      "typedef struct { int a; short b; int c[3]; } rec;\n"
      "__kernel void k(__global const uint *in, __global uint *out) {\n"
      "  uint S[1024], junk[8];\n"
      "  rec r[4];\n"
      "  int i = get_global_id(0);\n"
      "  for (int j = 0; j < 1024; j++) S[j] = in[j] ^ (uint)i;\n"
      "  for (int j = 0; j < 4; j++) {\n"
      "    r[j].a = j + i; r[j].b = (short)(3 * j); r[j].c[0] = j; r[j].c[1] = 2 * j;\n"
      "    r[j].c[2] = 3 * j;\n"
      "  }\n"
      "  uint *S2 = S + 256, *S3 = S + 512, *S4 = S + 768, *back = S4 - 3, *mid = junk + 4;\n"
      "  uint x = in[i];\n"
      "  for (int n = 0; n < 16; n++)\n"
      "    x = (((S[x >> 24] + S2[(x >> 16) & 0xff]) ^ S3[(x >> 8) & 0xff]) + S4[x & 0xff]) + n;\n"
      "  int q = i & 3;\n"
      "  mid[x & 0xfff] = x;\n"
      "  out[i] = x ^ back[x & 0xff] ^ (uint)r[q].c[(x >> 3) % 3] ^ (uint)r[q].b ^ (uint)r[q].a;\n"
      "}\n";
  cl_int err;
  cl_program p = NULL;
  cl_kernel k = kernel_with_vectorize(src, vectorize, &p);
  REQUIRE(k);
  enum { N = 64 };
  static cl_uint words[1024];
  for (int j = 0; j < 1024; j++)
    words[j] = (cl_uint)j * 2654435761u + 12345u;
  cl_mem in =
      clCreateBuffer(context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, sizeof words, words, &err);
  cl_mem out = clCreateBuffer(context, CL_MEM_READ_WRITE, N * sizeof(cl_uint), NULL, &err);
  clSetKernelArg(k, 0, sizeof in, &in);
  clSetKernelArg(k, 1, sizeof out, &out);
  size_t global = N, local = 16;
  CHECK_EQ_INT(clEnqueueNDRangeKernel(queue, k, 1, NULL, &global, &local, 0, NULL, NULL),
               CL_SUCCESS);
  cl_uint host[N];
  CHECK_EQ_INT(clEnqueueReadBuffer(queue, out, CL_TRUE, 0, sizeof host, host, 0, NULL, NULL),
               CL_SUCCESS);
  for (int i = 0; i < N; i++) {
    cl_uint S[1024];
    for (int j = 0; j < 1024; j++)
      S[j] = words[j] ^ (cl_uint)i;
    cl_uint x = words[i];
    for (int n = 0; n < 16; n++)
      x = (((S[x >> 24] + S[256 + ((x >> 16) & 0xff)]) ^ S[512 + ((x >> 8) & 0xff)]) +
           S[768 + (x & 0xff)]) +
          (cl_uint)n;
    int q = i & 3, c[3] = {q, 2 * q, 3 * q};
    cl_uint want =
        x ^ S[765 + (x & 0xff)] ^ (cl_uint)c[(x >> 3) % 3] ^ (cl_uint)(3 * q) ^ (cl_uint)(q + i);
    if (host[i] != want) {
      printf("  work-item %d: %#x, expected %#x\n", i, host[i], want);
      CHECK(0);
      break;
    }
  }
  restore_vectorize();
  clReleaseMemObject(in);
  clReleaseMemObject(out);
  clReleaseKernel(k);
  clReleaseProgram(p);
}

static void private_lookups_through_offset_pointers(void) {
  private_lookups_through_offset_pointers_as(NULL);
  private_lookups_through_offset_pointers_as("0");
}

static void private_address_steps_past_the_array(void) {
  private_address_steps_past_the_array_as(NULL);
  private_address_steps_past_the_array_as("0");
}

/* The report in the build log (AQUILA_DEBUG=vectorize): a plain kernel is
 * vectorized; a work queue popped with atomics in a loop that work-items
 * leave at different times keeps work-item order (OpenCV's Canny hysteresis
 * marks shared cells without atomics and depends on it). */
static void report_and_work_queues(void) {
  const char *src = "__kernel void plain(__global float *x) { x[get_global_id(0)] *= 2.0f; }\n"
                    "__kernel void queue(__global int *map, __global const int *n) {\n"
                    "  __local int top;\n"
                    "  __local int stack[64];\n"
                    "  if (get_local_id(0) == 0) top = 0;\n"
                    "  barrier(CLK_LOCAL_MEM_FENCE);\n"
                    "  for (int i = 0; i < n[get_global_id(0)]; i++) {\n"
                    "    int at = atomic_inc(&top);\n"
                    "    if (at < 64) stack[at] = i;\n"
                    "  }\n"
                    "  barrier(CLK_LOCAL_MEM_FENCE);\n"
                    "  map[get_global_id(0)] = top;\n"
                    "}\n";
  char log[8192];
  cl_program p = build_program_reporting(src, log, sizeof log);
  REQUIRE(p);
  CHECK(strstr(log, "kernel 'plain': vectorized") != NULL);
  CHECK(strstr(log, "kernel 'queue': not vectorized") != NULL);
  CHECK(strstr(log, "work queue") != NULL);
  clReleaseProgram(p);
}

/* A work-item function over the size limit stays scalar (its build time
 * would grow faster than its size), says so, and computes the same. */
static void size_limit_keeps_kernel_scalar(void) {
  const char *src = "__kernel void plain(__global float *x) { x[get_global_id(0)] *= 2.0f; }\n";
  setenv("AQUILA_VECTORIZE_MAX_INSTRUCTIONS", "3", 1);
  char log[8192];
  cl_program p = build_program_reporting(src, log, sizeof log);
  unsetenv("AQUILA_VECTORIZE_MAX_INSTRUCTIONS");
  REQUIRE(p);
  CHECK(strstr(log, "kernel 'plain': not vectorized") != NULL);
  CHECK(strstr(log, "more than the vectorizer's limit of 3") != NULL);
  cl_int err;
  cl_kernel k = clCreateKernel(p, "plain", &err);
  REQUIRE(k);
  enum { N = 1000 };
  float host[N];
  for (int i = 0; i < N; i++)
    host[i] = (float)i;
  cl_mem m =
      clCreateBuffer(context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, sizeof host, host, &err);
  REQUIRE(m);
  CHECK_EQ_INT(clSetKernelArg(k, 0, sizeof m, &m), CL_SUCCESS);
  size_t global = N;
  CHECK_EQ_INT(clEnqueueNDRangeKernel(queue, k, 1, NULL, &global, NULL, 0, NULL, NULL), CL_SUCCESS);
  CHECK_EQ_INT(clEnqueueReadBuffer(queue, m, CL_TRUE, 0, sizeof host, host, 0, NULL, NULL),
               CL_SUCCESS);
  int wrong = 0;
  for (int i = 0; i < N; i++)
    wrong += host[i] != 2.0f * (float)i;
  CHECK_EQ_INT(wrong, 0);
  clReleaseMemObject(m);
  clReleaseKernel(k);
  clReleaseProgram(p);
}

/* ---- outputs larger than the cache --------------------------------------------------------- */

/* A dispatch that writes 16 MiB or more through one store writes with
 * non-temporal stores where the vector is aligned, and a store or load
 * under a mask (a bounds check) is a plain one where every lane is active:
 * each way against the host's answer, with the bounds check leaving a
 * partial last vector, a global offset that misaligns the vectors, local
 * sizes that leave scalar rests, and lanes turned off by the data. */
static void large_outputs_match_host(void) {
  const char *src = "__kernel void add(__global const float *a, __global const float *b,\n"
                    "                  __global float *c, uint n) {\n"
                    "  size_t i = get_global_id(0);\n"
                    "  if (i < n) c[i] = a[i] + b[i];\n"
                    "}\n"
                    "__kernel void pairs(__global const float *a, __global const float *b,\n"
                    "                    __global float2 *c, uint n) {\n"
                    "  size_t i = get_global_id(0);\n"
                    "  float x = a[i];\n"
                    "  if (x > 0.0f) c[i] = (float2)(x, b[i]);\n"
                    "}\n";
  enum { N = (1 << 22) + 5, PAD = 4096 };
  size_t bytes = (size_t)(N + PAD) * sizeof(float);
  float *a = malloc(bytes), *b = malloc(bytes), *c = malloc(2 * bytes);
  REQUIRE(a && b && c);
  for (int i = 0; i < N + PAD; i++) {
    a[i] = (float)(i % 1000) - (i % 7 == 0 ? 2000.0f : 0.0f);
    b[i] = (float)(i % 333) * 0.5f;
  }
  cl_int err;
  cl_program p = build_program(src, "", &err);
  REQUIRE(p);
  cl_kernel add = clCreateKernel(p, "add", &err), pairs = clCreateKernel(p, "pairs", &err);
  REQUIRE(add && pairs);
  cl_mem da = clCreateBuffer(context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, bytes, a, &err);
  cl_mem db = clCreateBuffer(context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, bytes, b, &err);
  cl_mem dc = clCreateBuffer(context, CL_MEM_READ_WRITE, 2 * bytes, NULL, &err);
  REQUIRE(da && db && dc);
  cl_uint n = N;
  const size_t locals[] = {256, 16, 7};
  const size_t offsets[] = {0, 3};
  for (int which = 0; which < 2; which++) {
    cl_kernel k = which ? pairs : add;
    clSetKernelArg(k, 0, sizeof da, &da);
    clSetKernelArg(k, 1, sizeof db, &db);
    clSetKernelArg(k, 2, sizeof dc, &dc);
    clSetKernelArg(k, 3, sizeof n, &n);
    for (size_t l = 0; l < sizeof locals / sizeof locals[0]; l++)
      for (size_t o = 0; o < sizeof offsets / sizeof offsets[0]; o++) {
        size_t local = locals[l], offset = offsets[o];
        /* add: a bounds check past n; pairs: every work-item in range. */
        size_t global = which ? (size_t)N - offset - PAD / 2 : (size_t)N + local - 1;
        global -= global % local;
        float minus = -1.0f;
        CHECK_EQ_INT(
            clEnqueueFillBuffer(queue, dc, &minus, sizeof minus, 0, 2 * bytes, 0, NULL, NULL),
            CL_SUCCESS);
        CHECK_EQ_INT(clEnqueueNDRangeKernel(queue, k, 1, &offset, &global, &local, 0, NULL, NULL),
                     CL_SUCCESS);
        CHECK_EQ_INT(clEnqueueReadBuffer(queue, dc, CL_TRUE, 0, 2 * bytes, c, 0, NULL, NULL),
                     CL_SUCCESS);
        long wrong = 0, first = -1;
        for (size_t i = 0; i < (size_t)2 * (N + PAD); i++) {
          float want = -1.0f;
          if (!which) {
            if (i >= offset && i < offset + global && i < N) want = a[i] + b[i];
          } else {
            size_t item = i / 2;
            if (item >= offset && item < offset + global && a[item] > 0.0f)
              want = i % 2 ? b[item] : a[item];
          }
          if (c[i] != want && !wrong++) first = (long)i;
        }
        if (wrong)
          printf("  %s, local %zu, offset %zu: %ld wrong, the first at %ld\n",
                 which ? "pairs" : "add", local, offset, wrong, first);
        CHECK_EQ_INT(wrong, 0);
      }
  }
  clReleaseMemObject(da);
  clReleaseMemObject(db);
  clReleaseMemObject(dc);
  clReleaseKernel(add);
  clReleaseKernel(pairs);
  clReleaseProgram(p);
  free(a);
  free(b);
  free(c);
}

int main(void) {
  initial_vectorize = getenv("AQUILA_VECTORIZE") ? strdup(getenv("AQUILA_VECTORIZE")) : NULL;
  api_setup();
  RUN(vectorized_matches_scalar);
  RUN(host_reference);
  RUN(private_vectors_match_scalar);
  RUN(vload3_private_host_reference);
  RUN(narrow_vector3_match_scalar);
  RUN(images_match_scalar);
  RUN(private_overrun_is_contained);
  RUN(private_address_steps_past_the_array);
  RUN(private_lookups_through_offset_pointers);
  RUN(report_and_work_queues);
  RUN(size_limit_keeps_kernel_scalar);
  RUN(large_outputs_match_host);
  api_teardown();
  CHECK_EXIT();
}
