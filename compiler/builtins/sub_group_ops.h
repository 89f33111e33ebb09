/* The operations of the sub-group primitives (__aquila_sg_reduce_T,
 * __aquila_sg_scan_inclusive_T, __aquila_sg_scan_exclusive_T): their first
 * argument, a constant. Shared by the builtin library (subgroups.cl), which
 * calls them, and the compiler, which lowers them: over a vector's lanes in
 * the vectorizer (compiler/vectorize/sub_groups.c), as a sub-group of one
 * work-item in scalar code (compiler/workgroup/workitem.c). */
#ifndef AQUILA_BUILTINS_SUB_GROUP_OPS_H
#define AQUILA_BUILTINS_SUB_GROUP_OPS_H

#define AQ_SG_ADD 0
#define AQ_SG_MUL 1
#define AQ_SG_SMIN 2
#define AQ_SG_UMIN 3
#define AQ_SG_FMIN 4
#define AQ_SG_SMAX 5
#define AQ_SG_UMAX 6
#define AQ_SG_FMAX 7
#define AQ_SG_AND 8
#define AQ_SG_OR 9
#define AQ_SG_XOR 10
#define AQ_SG_OPS 11

#endif
