/* AQUILA_TRACE=file.json: a timeline of what ran, in the Trace Event format
 * (Perfetto, chrome://tracing). Internal to Aquila's libraries (the HSA
 * layer records what its compute units run, the OpenCL layer its commands
 * and builds); not an installed header.
 *
 * Off, every recording site costs one predictable branch on aq_trace_on.
 * On, records go to per-thread buffers without locks and are written as
 * JSON when the process exits. */
#ifndef AQUILA_TRACE_H
#define AQUILA_TRACE_H

#include <stddef.h>
#include <stdint.h>

/* Set once, when the library loads, from AQUILA_TRACE. */
extern int aq_trace_on;
#define AQ_TRACE_ON() __builtin_expect(aq_trace_on, 0)

/* A named row of the timeline; sort orders rows (smaller first). Spans on
 * one track that overlap are spread over lanes when written. Returns 0
 * (spans on it are dropped) when tracing is off or out of tracks. */
uint32_t aq_trace_track(uint32_t sort, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* A span [t0, t1] (aq_now_ns nanoseconds) on track. args: the members of a
 * JSON object ("\"bytes\": 64"), or NULL. */
void aq_trace_span(uint32_t track, const char *category, const char *name, uint64_t t0,
                   uint64_t t1, const char *args_fmt, ...) __attribute__((format(printf, 6, 7)));

/* A command of an OpenCL queue: when it was enqueued, became ready (its
 * dependencies complete), was submitted, started and ended, and what it
 * was. Written as a "waiting" span from queued to start and a "running"
 * span from start to end, both with all of it in their arguments. Kept as
 * numbers and formatted only when the trace is written, as a command's
 * recording is on the path of every enqueue. */
struct aq_trace_command {
  uint64_t queued, ready, submit, start, end;
  const char *type;   /* "NDRange kernel", "read buffer", ... (a string constant) */
  uint32_t dims;      /* a kernel's: global, local, work-groups, packet; else 0 */
  uint64_t global[3];
  uint32_t local[3];
  uint64_t groups, packet;
  uint64_t bytes;     /* a transfer's size, or 0 */
  int32_t status;     /* CL_COMPLETE (0), or the error it ended with */
};
void aq_trace_command(uint32_t track, const char *name, const struct aq_trace_command *command);

/* Work-groups [begin, end) (flat indices) of a dispatch that a compute
 * unit ran from t0 to t1: dispatch_key tells dispatches apart, packet is
 * its packet's id in its queue; stolen_from is the unit the range was
 * stolen from, or -1. Consecutive ranges of one dispatch that a unit runs
 * back to back are joined into one span. */
void aq_trace_groups(uint32_t track, const char *kernel, const void *dispatch_key,
                     uint64_t packet, uint64_t begin, uint64_t end, int32_t stolen_from,
                     uint64_t t0, uint64_t t1);

/* src as the inside of a JSON string, cut to fit n bytes. */
void aq_trace_escape(char *dst, size_t n, const char *src);

/* Writes the trace now (it is also written at exit). */
void aq_trace_write(void);

#endif
