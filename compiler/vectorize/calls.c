/* Calls in a vectorized function: which callees have a vector form
 * (glibc's libmvec variants, LLVM intrinsics), which only inform the
 * optimizer, which are pure; and their emission: an intrinsic or libm
 * call on vectors, and anything else (atomics, printf, unknown functions)
 * run once per active lane, in lane order.
 *
 * Needs: masks and vector forms (build.c), packets' elements (packet.c),
 * call_intrinsic (address.c). */
#include "vectorize/internal.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* glibc's libmvec (2.35 and later) has vector variants of these, accurate
 * to 4 ulp, which OpenCL allows for them. Not used for the exponentials,
 * logarithms and cbrt (3 ulp or less in OpenCL; libmvec's double exp measured
 * 3.008): calls of those run once per lane. */
static const char *const libmvec_unary[] = {"acos",  "acosh", "asin", "asinh", "atan",
                                            "atanh", "cos",   "cosh", "erf",   "erfc",
                                            "sin",   "sinh",  "tan",  "tanh",  NULL};
static const char *const libmvec_binary[] = {"atan2", "hypot", "pow", NULL};

/* Returns 1 or 2 (arguments) when name is a libm function with vector
 * variants, and whether it is the float one. */
static int libm_function(const char *name, int *is_float, char base[16]) {
  size_t len = strlen(name);
  for (int arity = 1; arity <= 2; arity++) {
    const char *const *list = arity == 1 ? libmvec_unary : libmvec_binary;
    for (int i = 0; list[i]; i++) {
      size_t n = strlen(list[i]);
      if (strncmp(name, list[i], n) != 0) continue;
      if (len == n || (len == n + 1 && name[n] == 'f')) {
        *is_float = len == n + 1;
        snprintf(base, 16, "%s", list[i]);
        return arity;
      }
    }
  }
  return 0;
}

static const struct vector_intrinsic vector_intrinsics[] = {{"llvm.fabs", OV_RET, 0},
                                                            {"llvm.sqrt", OV_RET, 0},
                                                            {"llvm.sin", OV_RET, 0},
                                                            {"llvm.cos", OV_RET, 0},
                                                            {"llvm.tan", OV_RET, 0},
                                                            {"llvm.pow", OV_RET, 0},
                                                            {"llvm.floor", OV_RET, 0},
                                                            {"llvm.ceil", OV_RET, 0},
                                                            {"llvm.trunc", OV_RET, 0},
                                                            {"llvm.rint", OV_RET, 0},
                                                            {"llvm.nearbyint", OV_RET, 0},
                                                            {"llvm.round", OV_RET, 0},
                                                            {"llvm.roundeven", OV_RET, 0},
                                                            {"llvm.fma", OV_RET, 0},
                                                            {"llvm.fmuladd", OV_RET, 0},
                                                            {"llvm.minnum", OV_RET, 0},
                                                            {"llvm.maxnum", OV_RET, 0},
                                                            {"llvm.minimum", OV_RET, 0},
                                                            {"llvm.maximum", OV_RET, 0},
                                                            {"llvm.copysign", OV_RET, 0},
                                                            {"llvm.canonicalize", OV_RET, 0},
                                                            {"llvm.ctpop", OV_RET, 0},
                                                            {"llvm.bswap", OV_RET, 0},
                                                            {"llvm.bitreverse", OV_RET, 0},
                                                            {"llvm.fshl", OV_RET, 0},
                                                            {"llvm.fshr", OV_RET, 0},
                                                            {"llvm.smin", OV_RET, 0},
                                                            {"llvm.smax", OV_RET, 0},
                                                            {"llvm.umin", OV_RET, 0},
                                                            {"llvm.umax", OV_RET, 0},
                                                            {"llvm.sadd.sat", OV_RET, 0},
                                                            {"llvm.uadd.sat", OV_RET, 0},
                                                            {"llvm.ssub.sat", OV_RET, 0},
                                                            {"llvm.usub.sat", OV_RET, 0},
                                                            {"llvm.sshl.sat", OV_RET, 0},
                                                            {"llvm.ushl.sat", OV_RET, 0},
                                                            {"llvm.ctlz", OV_RET, 2},
                                                            {"llvm.cttz", OV_RET, 2},
                                                            {"llvm.abs", OV_RET, 2},
                                                            {"llvm.powi", OV_RET_ARG1, 2},
                                                            {"llvm.ldexp", OV_RET_ARG1, 0},
                                                            {"llvm.is.fpclass", OV_ARG0, 2},
                                                            {"llvm.fptosi.sat", OV_RET_ARG0, 0},
                                                            {"llvm.fptoui.sat", OV_RET_ARG0, 0},
                                                            {"llvm.lrint", OV_RET_ARG0, 0},
                                                            {"llvm.llrint", OV_RET_ARG0, 0},
                                                            {"llvm.lround", OV_RET_ARG0, 0},
                                                            {"llvm.llround", OV_RET_ARG0, 0},
                                                            {NULL, OV_RET, 0}};

const struct vector_intrinsic *find_vector_intrinsic(const char *name) {
  for (int i = 0; vector_intrinsics[i].name; i++) {
    size_t n = strlen(vector_intrinsics[i].name);
    if (!strncmp(name, vector_intrinsics[i].name, n) && name[n] == '.')
      return &vector_intrinsics[i];
  }
  return NULL;
}

/* Intrinsics that only inform the optimizer: not carried over. */
int is_dropped_intrinsic(const char *name) {
  static const char *const prefixes[] = {"llvm.lifetime.",
                                         "llvm.dbg.",
                                         "llvm.assume",
                                         "llvm.experimental.noalias.scope.decl",
                                         "llvm.invariant.",
                                         "llvm.var.annotation",
                                         NULL};
  for (int i = 0; prefixes[i]; i++)
    if (!strncmp(name, prefixes[i], strlen(prefixes[i]))) return 1;
  return 0;
}

/* Intrinsics without side effects besides those with a vector form. */
static int is_pure_intrinsic(const char *name) {
  if (find_vector_intrinsic(name)) return 1;
  static const char *const prefixes[] = {"llvm.umul.with.overflow",
                                         "llvm.smul.with.overflow",
                                         "llvm.uadd.with.overflow",
                                         "llvm.sadd.with.overflow",
                                         "llvm.usub.with.overflow",
                                         "llvm.ssub.with.overflow",
                                         "llvm.frexp",
                                         "llvm.vector.reduce",
                                         NULL};
  for (int i = 0; prefixes[i]; i++)
    if (!strncmp(name, prefixes[i], strlen(prefixes[i]))) return 1;
  return 0;
}

enum call_class classify_call(LLVMValueRef call) {
  const char *name = callee_name(call);
  if (!name) return CALL_UNKNOWN;
  LLVMValueRef callee = LLVMGetCalledValue(call);
  /* The float builtins' rare slow paths (sin, cos, tan of huge arguments),
   * kept out of line like __outofline_: run for the lanes that take them. */
  if (!strncmp(name, "__aquila_vv_", 12)) return CALL_PER_LANE;
  if (!strncmp(name, "__aquila_", 9)) {
    if (!strcmp(name, "__aquila_local_id")) return CALL_LOCAL_ID;
    if (is_sub_group_primitive(name)) return CALL_SUB_GROUP;
    if (!strcmp(name, "__aquila_barrier")) return CALL_BARRIER;
    return CALL_WORKITEM;
  }
  if (LLVMGetIntrinsicID(callee)) {
    if (is_dropped_intrinsic(name)) return CALL_DROP;
    if (find_vector_intrinsic(name)) return CALL_VECTOR;
    if (is_pure_intrinsic(name)) return CALL_PURE;
    return CALL_PER_LANE;
  }
  /* The builtin library's rarely taken paths, kept out of line: called
   * once per lane. */
  if (!strncmp(name, "__outofline_", 12)) return CALL_PER_LANE;
  if (!LLVMIsDeclaration(callee)) return CALL_UNKNOWN;
  int is_float;
  char base[16];
  if (libm_function(name, &is_float, base)) return CALL_LIBM;
  return CALL_PER_LANE;
}

/* ---- one lane at a time ------------------------------------------------------------------ */

/* Runs in (an atomic, a call) once per lane, lane after lane: only lanes
 * on in mask unless all_lanes. Returns the vector of results (NULL for
 * void); a result of an OpenCL vector type goes to elems instead, one
 * vector per element. Emission continues in a new block. */
LLVMValueRef emit_per_lane(struct vec *v, LLVMValueRef in, LLVMValueRef mask, int all_lanes,
                           LLVMValueRef *elems) {
  LLVMValueRef fn = v->vfn;
  LLVMBasicBlockRef from = LLVMGetInsertBlock(v->b);
  LLVMBasicBlockRef head = LLVMAppendBasicBlockInContext(v->ctx, fn, "lane");
  LLVMBasicBlockRef body = LLVMAppendBasicBlockInContext(v->ctx, fn, "lane.on");
  LLVMBasicBlockRef next = LLVMAppendBasicBlockInContext(v->ctx, fn, "lane.next");
  LLVMBasicBlockRef done = LLVMAppendBasicBlockInContext(v->ctx, fn, "lane.done");
  LLVMTypeRef t = LLVMTypeOf(in);
  int has_result = LLVMGetTypeKind(t) != LLVMVoidTypeKind;
  int vec_result = has_result && LLVMGetTypeKind(t) == LLVMVectorTypeKind;
  unsigned nres = vec_result ? LLVMGetVectorSize(t) : 1;
  LLVMTypeRef vt = has_result ? vector_of(v, vec_result ? LLVMGetElementType(t) : t) : NULL;
  /* Operands: vectors made before the loop (an OpenCL vector operand: one
   * per element). */
  int n = LLVMGetNumOperands(in);
  LLVMValueRef **ops = xcalloc((size_t)n, sizeof *ops);
  unsigned char *per_lane = xcalloc((size_t)n, 1);
  int is_call = LLVMIsACallInst(in) != NULL;
  for (int k = 0; k < n; k++) {
    LLVMValueRef o = LLVMGetOperand(in, (unsigned)k);
    LLVMTypeRef ot = LLVMTypeOf(o);
    int vec = LLVMGetTypeKind(ot) == LLVMVectorTypeKind;
    unsigned parts = vec ? LLVMGetVectorSize(ot) : 1;
    ops[k] = xcalloc(parts, sizeof *ops[k]);
    if ((is_call && k == n - 1) || is_uniform(v, o)) {
      ops[k][0] = is_call && k == n - 1 ? o : scalar_of(v, o); /* the callee, or uniform */
      continue;
    }
    per_lane[k] = 1;
    for (unsigned e = 0; e < parts; e++)
      ops[k][e] = LLVMBuildFreeze(v->b, vec ? packet_element(v, o, e) : vector_of_value(v, o), "");
  }
  LLVMBuildBr(v->b, head);

  LLVMPositionBuilderAtEnd(v->b, head);
  LLVMValueRef lane = LLVMBuildPhi(v->b, v->i32, "lane");
  LLVMValueRef acc[MAX_MEMBERS] = {0};
  for (unsigned e = 0; has_result && e < nres; e++)
    acc[e] = LLVMBuildPhi(v->b, vt, "lanes");
  LLVMValueRef on = all_lanes || !mask ? LLVMConstInt(v->i1, 1, 0)
                                       : LLVMBuildExtractElement(v->b, mask, lane, "");
  LLVMBuildCondBr(v->b, on, body, next);

  LLVMPositionBuilderAtEnd(v->b, body);
  LLVMValueRef c = LLVMInstructionClone(in);
  for (int k = 0; k < n; k++) {
    LLVMValueRef x = ops[k][0];
    if (per_lane[k]) {
      LLVMTypeRef ot = LLVMTypeOf(LLVMGetOperand(in, (unsigned)k));
      if (LLVMGetTypeKind(ot) == LLVMVectorTypeKind) {
        x = LLVMGetPoison(ot);
        for (unsigned e = 0; e < LLVMGetVectorSize(ot); e++)
          x = LLVMBuildInsertElement(v->b, x, LLVMBuildExtractElement(v->b, ops[k][e], lane, ""),
                                     LLVMConstInt(v->i32, e, 0), "");
      } else {
        x = LLVMBuildExtractElement(v->b, ops[k][0], lane, "");
      }
    }
    LLVMSetOperand(c, (unsigned)k, x);
  }
  LLVMInsertIntoBuilder(v->b, c);
  LLVMValueRef acc_on[MAX_MEMBERS] = {0};
  for (unsigned e = 0; has_result && e < nres; e++) {
    LLVMValueRef x =
        vec_result ? LLVMBuildExtractElement(v->b, c, LLVMConstInt(v->i32, e, 0), "") : c;
    acc_on[e] = LLVMBuildInsertElement(v->b, acc[e], x, lane, "");
  }
  LLVMBuildBr(v->b, next);

  LLVMPositionBuilderAtEnd(v->b, next);
  LLVMValueRef acc_next[MAX_MEMBERS] = {0};
  for (unsigned e = 0; has_result && e < nres; e++) {
    acc_next[e] = LLVMBuildPhi(v->b, vt, "");
    LLVMValueRef in_vals[2] = {acc_on[e], acc[e]};
    LLVMBasicBlockRef in_blocks[2] = {body, head};
    LLVMAddIncoming(acc_next[e], in_vals, in_blocks, 2);
  }
  LLVMValueRef lane_next = LLVMBuildAdd(v->b, lane, LLVMConstInt(v->i32, 1, 0), "");
  LLVMBuildCondBr(v->b,
                  LLVMBuildICmp(v->b, LLVMIntULT, lane_next, LLVMConstInt(v->i32, v->W, 0), ""),
                  head, done);
  LLVMValueRef lane_in[2] = {LLVMConstInt(v->i32, 0, 0), lane_next};
  LLVMBasicBlockRef lane_from[2] = {from, next};
  LLVMAddIncoming(lane, lane_in, lane_from, 2);
  for (unsigned e = 0; has_result && e < nres; e++) {
    LLVMValueRef acc_in[2] = {LLVMGetPoison(vt), acc_next[e]};
    LLVMAddIncoming(acc[e], acc_in, lane_from, 2);
  }
  LLVMPositionBuilderAtEnd(v->b, done);
  for (int k = 0; k < n; k++)
    free(ops[k]);
  free(ops);
  free(per_lane);
  if (vec_result) {
    for (unsigned e = 0; e < nres; e++)
      elems[e] = acc_next[e];
    return NULL;
  }
  return has_result ? acc_next[0] : NULL;
}

/* ---- calls -------------------------------------------------------------------------------- */

/* A call of an intrinsic with a vector form, on vectors: element -1 for a
 * scalar intrinsic on varying values, k for element k of an intrinsic on
 * OpenCL vectors. */
LLVMValueRef emit_vector_intrinsic_on(struct vec *v, LLVMValueRef in, int element) {
  const char *name = callee_name(in);
  const struct vector_intrinsic *vi = find_vector_intrinsic(name);
  unsigned nargs = (unsigned)LLVMGetNumArgOperands(in);
  LLVMValueRef args[8];
  if (nargs > 8) {
    fail(v, VECTORIZE_UNSUPPORTED, "an intrinsic with too many arguments", in);
    return LLVMGetPoison(LLVMTypeOf(in));
  }
  for (unsigned k = 0; k < nargs; k++) {
    LLVMValueRef o = LLVMGetOperand(in, k);
    if (vi->scalar_args >> k & 1)
      args[k] = scalar_of(v, o);
    else if (element >= 0 && LLVMGetTypeKind(LLVMTypeOf(o)) == LLVMVectorTypeKind)
      args[k] = packet_element(v, o, (unsigned)element);
    else
      args[k] = vector_of_value(v, o);
  }
  LLVMTypeRef types[2];
  unsigned nt = 0;
  LLVMTypeRef rt = LLVMTypeOf(in);
  if (element >= 0) rt = LLVMGetElementType(rt);
  switch (vi->overload) {
  case OV_RET:
    types[nt++] = vector_of(v, rt);
    break;
  case OV_RET_ARG1:
    types[nt++] = vector_of(v, rt);
    types[nt++] = LLVMTypeOf(args[1]);
    break;
  case OV_ARG0:
    types[nt++] = LLVMTypeOf(args[0]);
    break;
  case OV_RET_ARG0:
    types[nt++] = vector_of(v, rt);
    types[nt++] = LLVMTypeOf(args[0]);
    break;
  }
  char base[64];
  snprintf(base, sizeof base, "%s", vi->name);
  LLVMValueRef r = call_intrinsic(v, v->b, base, types, nt, args, nargs);
  copy_safe_fmf(in, r);
  return r;
}

/* A libm call as calls of glibc's vector variants, as wide as the ISA has
 * them, on pieces of the vector. */
LLVMValueRef emit_libm(struct vec *v, LLVMValueRef in) {
  int is_float;
  char base[16];
  int arity = libm_function(callee_name(in), &is_float, base);
  LLVMTypeRef t = LLVMTypeOf(in);
  unsigned bits = v->isa == 'e' ? 512 : v->isa == 'd' ? 256 : 128;
  unsigned elem_bits = is_float ? 32 : 64;
  /* The widest variant the ISA has, but no wider than the vector: a
   * narrower vector on an AVX-512 machine takes the AVX2 or SSE one. */
  while (bits > 128 && bits / elem_bits > v->W)
    bits /= 2;
  unsigned piece = bits / elem_bits;
  if (piece > v->W) piece = v->W;
  char isa = bits == 512 ? 'e' : bits == 256 ? 'd' : 'b';
  char name[64];
  char vlen[8];
  snprintf(vlen, sizeof vlen, "%u", piece);
  snprintf(name, sizeof name, "_ZGV%cN%s%s_%s%s", isa, vlen, arity == 1 ? "v" : "vv", base,
           is_float ? "f" : "");
  LLVMTypeRef pt = LLVMVectorType(t, piece);
  LLVMTypeRef params[2] = {pt, pt};
  LLVMTypeRef ft = LLVMFunctionType(pt, params, (unsigned)arity, 0);
  LLVMValueRef f = LLVMGetNamedFunction(v->m, name);
  if (!f) {
    f = LLVMAddFunction(v->m, name, ft);
    LLVMAddAttributeAtIndex(
        f, LLVMAttributeFunctionIndex,
        LLVMCreateEnumAttribute(v->ctx, LLVMGetEnumAttributeKindForName("nounwind", 8), 0));
  }
  LLVMValueRef x[2];
  for (int k = 0; k < arity; k++)
    x[k] = vector_of_value(v, LLVMGetOperand(in, (unsigned)k));
  LLVMValueRef result = NULL;
  for (unsigned at = 0; at < v->W; at += piece) {
    LLVMValueRef idx[64];
    for (unsigned i = 0; i < piece; i++)
      idx[i] = LLVMConstInt(v->i32, at + i, 0);
    LLVMValueRef sel = LLVMConstVector(idx, piece);
    LLVMValueRef args[2];
    for (int k = 0; k < arity; k++)
      args[k] = piece == v->W
                    ? x[k]
                    : LLVMBuildShuffleVector(v->b, x[k], LLVMGetPoison(LLVMTypeOf(x[k])), sel, "");
    LLVMValueRef r = LLVMBuildCall2(v->b, ft, f, args, (unsigned)arity, "");
    if (piece == v->W) return r;
    /* Put the piece in place: widen it, then blend. */
    LLVMValueRef widen_idx[64], blend_idx[64];
    for (unsigned i = 0; i < v->W; i++) {
      widen_idx[i] =
          i >= at && i < at + piece ? LLVMConstInt(v->i32, i - at, 0) : LLVMGetPoison(v->i32);
      blend_idx[i] = LLVMConstInt(v->i32, i >= at && i < at + piece ? v->W + i : i, 0);
    }
    LLVMValueRef wide =
        LLVMBuildShuffleVector(v->b, r, LLVMGetPoison(pt), LLVMConstVector(widen_idx, v->W), "");
    result = result
                 ? LLVMBuildShuffleVector(v->b, result, wide, LLVMConstVector(blend_idx, v->W), "")
                 : wide;
  }
  return result;
}
