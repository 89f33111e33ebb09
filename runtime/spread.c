/* One NDRange spread over every device of its context (AQUILA_SPREAD=1):
 * the local CPU device and remote ones take chunks of its work-groups
 * from one pool as they finish the previous ones (each runs only its
 * chunk of the whole grid: hsa_ext_aquila.h's group range), and the
 * buffers the kernel writes are merged.
 *
 * Each device works on its own copy of every buffer, made current before
 * the first chunk; the local device's copy is the host storage. The
 * compiler's footprint (compiler/analysis/footprint_analysis.c,
 * launch_footprint.c) gives, for
 * each chunk, the range of each buffer its work-groups may write: where
 * those ranges of different chunks are disjoint, a chunk that ran on a
 * remote device sends back its range as it ends, while the devices go on.
 * Other written buffers are merged at the end: from each remote copy,
 * every byte that differs from the buffer as it was before the kernel.
 * Both are exact for kernels whose work-groups do not communicate through
 * global memory: OpenCL 1.2 gives work-groups of one NDRange no order and
 * no way to wait for each other without atomics, so a byte two work-groups
 * both write is a race whose outcome is any one of the writes, and a
 * work-group's reads of bytes others write are races too. Kernels that may
 * use atomics on global memory, or print (the footprint says so), run
 * whole on one device, as do kernels without a footprint (from a binary of
 * an older format), with image arguments, or with small grids. */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aquila/hsa_ext_aquila.h"
#include "runtime.h"

#define MAX_SPREAD_DEVICES 16
#define CHUNKS_PER_DEVICE 8 /* the pool's granularity: about this many chunks each */
#define SLOTS 2             /* chunks a device has in flight: the next is queued */

static int spread_enabled(void) {
  /* Read once; threads that enqueue at the same time may both read it. */
  static atomic_int enabled = -1;
  int v = atomic_load_explicit(&enabled, memory_order_relaxed);
  if (v < 0) {
    const char *e = getenv("AQUILA_SPREAD");
    v = e && !strcmp(e, "1");
    atomic_store_explicit(&enabled, v, memory_order_relaxed);
  }
  return v;
}

int spread_eligible(cl_command_queue q, cl_kernel k, uint64_t groups) {
  if (!spread_enabled() || !q->context->has_remote || vector_check_enabled()) return 0;
  cl_program p = k->program;
  /* The compiler's footprint says that its work-groups share nothing they
   * write: no atomics on global memory, no printf. */
  if (!footprint_spreadable(k->meta)) return 0;
  for (uint32_t i = 0; i < k->meta->num_args; i++)
    if (k->meta->args[i].kind == AQUILA_ARG_IMAGE || k->meta->args[i].kind == AQUILA_ARG_SAMPLER)
      return 0;
  uint32_t devices = 0;
  for (cl_uint i = 0; i < p->num_devices; i++)
    if (!p->devices[i]->parent && kernel_code_ready(k, i) == CL_SUCCESS) devices++;
  return devices >= 2 && devices <= MAX_SPREAD_DEVICES && groups >= 2 * devices &&
         groups <= UINT32_MAX;
}

/* The queue a device's chunks go to (made on first use, kept with it). */
static hsa_queue_t *spread_queue(cl_device_id d) {
  pthread_mutex_lock(&d->spread_lock);
  if (!d->spread_queue &&
      hsa_queue_create(d->agent, 256, HSA_QUEUE_TYPE_MULTI, NULL, NULL, UINT32_MAX, UINT32_MAX,
                       &d->spread_queue) != HSA_STATUS_SUCCESS)
    d->spread_queue = NULL;
  hsa_queue_t *q = d->spread_queue;
  pthread_mutex_unlock(&d->spread_lock);
  return q;
}

struct spread_device {
  cl_device_id device;
  uint64_t kernel_object;
  unsigned char *kernarg;
  hsa_queue_t *queue;
  uint64_t groups_done;
};

struct slot {
  int busy;
  struct spread_device *dev;
  uint64_t begin, end;
};

static void write_packet(struct spread_device *sd, cl_event ev, hsa_signal_t signal, uint64_t begin,
                         uint64_t end) {
  uint64_t index;
  hsa_kernel_dispatch_packet_t *pkt =
      ndrange_packet(sd->queue, ev, sd->kernel_object, sd->kernarg, signal,
                     HSA_VEN_AQUILA_GROUP_RANGE(begin, end), &index);
  /* The barrier bit: a device's chunks one after the other. */
  ndrange_publish(sd->queue, pkt, index, 1, ev->u.ndrange.dims);
}

/* Takes from each remote copy of root the bytes it changed against orig. */
static cl_int merge_remote(cl_mem root, const unsigned char *orig, cl_device_id d,
                           unsigned char *scratch) {
  uint64_t address = 0;
  cl_int err = mem_device_address(root, d, &address);
  if (err) return err;
  if (hsa_ven_aquila_agent_memory_read(d->agent, scratch, address, root->size) !=
      HSA_STATUS_SUCCESS)
    return CL_OUT_OF_RESOURCES;
  unsigned char *host = (unsigned char *)root->data;
  size_t n = root->size, i = 0;
  /* Word by word where nothing changed; byte by byte where something did. */
  for (; i + 8 <= n; i += 8) {
    uint64_t a, b;
    memcpy(&a, scratch + i, 8);
    memcpy(&b, orig + i, 8);
    if (a == b) continue;
    for (size_t j = i; j < i + 8; j++)
      if (scratch[j] != orig[j]) host[j] = scratch[j];
  }
  for (; i < n; i++)
    if (scratch[i] != orig[i]) host[i] = scratch[i];
  return CL_SUCCESS;
}

static cl_mem root_of(cl_mem m) {
  while (m->parent)
    m = m->parent;
  return m;
}

/* Where m starts in its root buffer. */
static size_t origin_in_root(cl_mem m) {
  size_t origin = 0;
  for (; m->parent; m = m->parent)
    origin += m->offset;
  return origin;
}

/* The work-groups [begin, end) (flat, x fastest) lie in the box
 * first..last: exactly when they are whole rows (or part of one row). */
static void chunk_box(const uint64_t groups[3], uint64_t begin, uint64_t end, uint64_t first[3],
                      uint64_t last[3]) {
  uint64_t r0 = begin / groups[0], r1 = (end - 1) / groups[0];
  first[0] = r0 == r1 ? begin % groups[0] : 0;
  last[0] = r0 == r1 ? (end - 1) % groups[0] : groups[0] - 1;
  uint64_t p0 = r0 / groups[1], p1 = r1 / groups[1];
  first[1] = p0 == p1 ? r0 % groups[1] : 0;
  last[1] = p0 == p1 ? r1 % groups[1] : groups[1] - 1;
  first[2] = p0;
  last[2] = p1;
}

/* A buffer the kernel writes: either each chunk's range of it is known
 * and no two chunks' ranges meet (the bytes of a chunk run on a remote
 * device come back as it ends), or the bytes from before the kernel are
 * kept and each remote copy gives back what it changed. */
struct written {
  cl_mem root;
  int64_t *ranges;     /* [lo, hi) per chunk in the root, lo >= hi: none; or NULL */
  unsigned char *orig; /* without ranges: the bytes before the kernel */
};

static int compare_starts(const void *a, const void *b) {
  int64_t x = ((const int64_t *)a)[0], y = ((const int64_t *)b)[0];
  return x < y ? -1 : x > y;
}

/* Each chunk's range of root, from the footprints of the arguments that
 * write it: 1 when known for every chunk and disjoint, else 0. */
static int chunk_ranges(cl_event ev, const struct footprint_launch *fl, cl_mem root,
                        const uint64_t groups[3], uint64_t total, uint64_t chunk, uint64_t nchunks,
                        int64_t *ranges) {
  const struct aquila_fatbin_kernel *meta = ev->kernel->meta;
  for (uint64_t c = 0; c < nchunks; c++) {
    uint64_t first[3], last[3];
    uint64_t end = (c + 1) * chunk < total ? (c + 1) * chunk : total;
    chunk_box(groups, c * chunk, end, first, last);
    int64_t lo = INT64_MAX, hi = INT64_MIN;
    for (size_t j = 0; j < ev->num_retained_mems; j++) {
      cl_mem m = ev->retained_mems[j];
      if (!ev->mem_writes[j] || root_of(m) != root) continue;
      uint32_t offset = ev->u.ndrange.mem_arg_offset[j], arg = 0;
      while (arg < meta->num_args &&
             !(meta->args[arg].kind == AQUILA_ARG_GLOBAL_PTR && meta->args[arg].offset == offset))
        arg++;
      if (arg == meta->num_args) return 0;
      int64_t alo, ahi;
      int r = footprint_range(fl, arg, first, last, &alo, &ahi);
      if (r < 0) return 0;
      if (r == 0) continue;
      /* Bytes past the buffer are no write of a correct kernel. */
      if (alo < 0) alo = 0;
      if (ahi > (int64_t)m->size) ahi = (int64_t)m->size;
      if (alo >= ahi) continue;
      int64_t origin = (int64_t)origin_in_root(m);
      if (origin + alo < lo) lo = origin + alo;
      if (origin + ahi > hi) hi = origin + ahi;
    }
    ranges[2 * c] = lo;
    ranges[2 * c + 1] = hi;
  }
  int64_t *sorted = malloc(2 * nchunks * sizeof *sorted);
  if (!sorted) return 0;
  uint64_t n = 0;
  for (uint64_t c = 0; c < nchunks; c++)
    if (ranges[2 * c] < ranges[2 * c + 1]) {
      sorted[2 * n] = ranges[2 * c];
      sorted[2 * n + 1] = ranges[2 * c + 1];
      n++;
    }
  qsort(sorted, n, 2 * sizeof *sorted, compare_starts);
  int disjoint = 1;
  for (uint64_t i = 1; i < n && disjoint; i++)
    disjoint = sorted[2 * i - 1] <= sorted[2 * i];
  free(sorted);
  return disjoint;
}

/* The bytes a chunk run on remote device d wrote, into the host storage. */
static cl_int read_back_chunk(struct written *w, size_t nw, cl_device_id d, uint64_t c) {
  for (size_t x = 0; x < nw; x++) {
    if (!w[x].ranges) continue;
    int64_t lo = w[x].ranges[2 * c], hi = w[x].ranges[2 * c + 1];
    if (lo >= hi) continue;
    uint64_t address = 0;
    cl_int err = mem_device_address(w[x].root, d, &address);
    if (err) return err;
    if (hsa_ven_aquila_agent_memory_read(d->agent, w[x].root->data + lo, address + (uint64_t)lo,
                                         (size_t)(hi - lo)) != HSA_STATUS_SUCCESS)
      return CL_OUT_OF_RESOURCES;
  }
  return CL_SUCCESS;
}

/* Gives each idle slot the next chunk of the pool; returns how many. */
static uint32_t fill_slots(cl_event ev, struct slot *slots, const hsa_signal_t *signals,
                           uint32_t nslots, uint64_t chunk, uint64_t total, uint64_t *next) {
  uint32_t filled = 0;
  for (uint32_t s = 0; s < nslots && *next < total; s++) {
    if (slots[s].busy) continue;
    uint64_t end = *next + chunk < total ? *next + chunk : total;
    slots[s].busy = 1;
    slots[s].begin = *next;
    slots[s].end = end;
    hsa_signal_store_relaxed(signals[s], 1);
    write_packet(slots[s].dev, ev, signals[s], *next, end);
    *next = end;
    filled++;
  }
  return filled;
}

/* Whether retained buffer j is one the kernel overwrites whole, read back
 * chunk by chunk (its copies need not be current before the kernel). */
static int overwritten(cl_event ev, const struct written *w, size_t nw, size_t j) {
  if (ev->mem_writes[j] != 2) return 0;
  for (size_t x = 0; x < nw; x++)
    if (w[x].root == ev->retained_mems[j]) return w[x].ranges != NULL;
  return 0;
}

static void *spread_run(void *arg) {
  cl_event ev = arg;
  uint64_t t_begin = now_ns();
  cl_kernel k = ev->kernel;
  cl_program p = k->program;
  struct spread_device devs[MAX_SPREAD_DEVICES];
  uint32_t ndev = 0;
  cl_int err = CL_SUCCESS;
  size_t kernarg_size = (size_t)k->meta->kernarg_size;
  size_t align = k->meta->kernarg_alignment < 16 ? 16 : k->meta->kernarg_alignment;
  size_t kernarg_alloc = (kernarg_size + align - 1) / align * align;
  struct written written[64];
  size_t nwritten = 0, nranged = 0;
  unsigned char *scratch = NULL;
  memset(written, 0, sizeof written);

  for (cl_uint i = 0; i < p->num_devices && ndev < MAX_SPREAD_DEVICES; i++) {
    cl_device_id d = p->devices[i];
    if (d->parent || kernel_code_ready(k, i) != CL_SUCCESS) continue;
    devs[ndev] = (struct spread_device){d, kernel_object_now(k, i), NULL, NULL, 0};
    devs[ndev].queue = spread_queue(d);
    if (!devs[ndev].queue) err = CL_OUT_OF_RESOURCES;
    ndev++;
  }

  /* The pool's chunks: about CHUNKS_PER_DEVICE each, whole rows of
   * work-groups where there are rows enough, so that a chunk of a 2D
   * kernel writes one band of its output, not a strip of several. */
  uint64_t groups[3], total = 1;
  for (int d = 0; d < 3; d++) {
    groups[d] =
        (ev->u.ndrange.grid[d] + ev->u.ndrange.workgroup[d] - 1) / ev->u.ndrange.workgroup[d];
    total *= groups[d];
  }
  uint64_t chunk = total / (ndev * CHUNKS_PER_DEVICE);
  if (chunk == 0) chunk = 1;
  if (total / groups[0] >= 4 * (uint64_t)ndev)
    chunk = (chunk > groups[0] ? chunk / groups[0] : 1) * groups[0];
  uint64_t nchunks = (total + chunk - 1) / chunk;
  struct footprint_launch fl;
  footprint_launch_init(&fl, k->meta, ev->u.ndrange.kernarg, ev->u.ndrange.dims, ev->u.ndrange.grid,
                        ev->u.ndrange.workgroup);

  /* For each written buffer, its chunks' ranges, else its bytes as they
   * were (the host's current first); every other buffer current on the
   * host. A buffer the kernel overwrites whole (mem_writes 2, its chunks'
   * ranges disjoint, so each chunk writes all of its range) moves nowhere
   * before the kernel. */
  for (size_t j = 0; !err && j < ev->num_retained_mems; j++) {
    cl_mem m = ev->retained_mems[j];
    if (!ev->mem_writes[j]) continue;
    cl_mem r = root_of(m);
    size_t x = 0;
    while (x < nwritten && written[x].root != r)
      x++;
    if (x < nwritten) continue;
    if (nwritten == 64) {
      err = CL_OUT_OF_RESOURCES;
      break;
    }
    struct written *w = &written[nwritten++];
    w->root = r;
    w->ranges = malloc(2 * nchunks * sizeof *w->ranges);
    if (!w->ranges) {
      err = CL_OUT_OF_HOST_MEMORY;
      break;
    }
    if (chunk_ranges(ev, &fl, r, groups, total, chunk, nchunks, w->ranges)) {
      nranged++;
      continue;
    }
    free(w->ranges);
    w->ranges = NULL;
    err = mem_make_host_valid(r);
    w->orig = err ? NULL : malloc(r->size);
    if (!err && !w->orig) err = CL_OUT_OF_HOST_MEMORY;
    if (!err) memcpy(w->orig, r->data, r->size);
  }
  for (size_t j = 0; !err && j < ev->num_retained_mems; j++)
    if (!overwritten(ev, written, nwritten, j)) err = mem_make_host_valid(ev->retained_mems[j]);
  /* Each device's kernarg segment (its own buffer addresses), and its
   * copies current. */
  for (uint32_t i = 0; !err && i < ndev; i++) {
    struct spread_device *sd = &devs[i];
    sd->kernarg = aligned_alloc(align, kernarg_alloc);
    if (!sd->kernarg) {
      err = CL_OUT_OF_HOST_MEMORY;
      break;
    }
    memcpy(sd->kernarg, ev->u.ndrange.kernarg, kernarg_alloc);
    for (size_t j = 0; !err && j < ev->num_retained_mems; j++) {
      cl_mem m = ev->retained_mems[j];
      uint32_t offset = ev->u.ndrange.mem_arg_offset[j];
      uint64_t address = (uint64_t)(uintptr_t)m->data;
      if (device_root(sd->device)->remote) {
        if (!overwritten(ev, written, nwritten, j)) err = mem_prepare_for_device(m, sd->device, 0);
        if (!err) err = mem_device_address(m, sd->device, &address);
      }
      if (!err && offset != UINT32_MAX) memcpy(sd->kernarg + offset, &address, sizeof address);
    }
  }
  uint64_t t_prepared = now_ns();

  /* The pool: each device holds up to SLOTS chunks; a finished one is
   * replaced by the next of the pool before its bytes come back. */
  struct slot slots[MAX_SPREAD_DEVICES * SLOTS];
  hsa_signal_t signals[MAX_SPREAD_DEVICES * SLOTS];
  uint32_t nslots = ndev * SLOTS, created = 0;
  hsa_signal_group_t group = {0};
  for (uint32_t s = 0; !err && s < nslots; s++) {
    if (hsa_signal_create(1, 0, NULL, &signals[s]) != HSA_STATUS_SUCCESS) {
      err = CL_OUT_OF_RESOURCES;
      break;
    }
    created++;
    slots[s] = (struct slot){0, &devs[s / SLOTS], 0, 0};
  }
  if (!err && hsa_signal_group_create(nslots, signals, 0, NULL, &group) != HSA_STATUS_SUCCESS)
    err = CL_OUT_OF_RESOURCES;
  if (queue_takes_times(ev->queue)) ev->t_start = now_ns();
  uint64_t next = 0, read_back_ns = 0;
  uint32_t busy = 0;
  hsa_signal_condition_t conditions[MAX_SPREAD_DEVICES * SLOTS];
  hsa_signal_value_t zeros[MAX_SPREAD_DEVICES * SLOTS];
  for (uint32_t s = 0; s < nslots; s++) {
    conditions[s] = HSA_SIGNAL_CONDITION_EQ;
    zeros[s] = 0;
  }
  while (!err && (next < total || busy)) {
    busy += fill_slots(ev, slots, signals, nslots, chunk, total, &next);
    hsa_signal_t done;
    hsa_signal_value_t value;
    if (hsa_signal_group_wait_any_scacquire(group, conditions, zeros, HSA_WAIT_STATE_BLOCKED, &done,
                                            &value) != HSA_STATUS_SUCCESS) {
      err = CL_OUT_OF_RESOURCES;
      break;
    }
    struct slot ended[MAX_SPREAD_DEVICES * SLOTS];
    uint32_t nended = 0;
    for (uint32_t s = 0; s < nslots; s++) {
      if (!slots[s].busy || signals[s].handle != done.handle) continue;
      if (hsa_ven_aquila_signal_dispatch_status(signals[s], NULL) != HSA_STATUS_SUCCESS) {
        debug_log("kernel '%s' spread over %u devices: its work-groups [%llu, %llu) on %s "
                  "faulted: its command ends with CL_OUT_OF_RESOURCES",
                  k->meta->name, ndev, (unsigned long long)slots[s].begin,
                  (unsigned long long)slots[s].end, slots[s].dev->device->name);
        err = CL_OUT_OF_RESOURCES;
      }
      slots[s].dev->groups_done += slots[s].end - slots[s].begin;
      slots[s].busy = 0;
      hsa_signal_store_relaxed(signals[s], 1); /* idle slots never reach 0 */
      busy--;
      ended[nended++] = slots[s];
    }
    /* The next chunk out first: the device works while its bytes come. */
    if (!err) busy += fill_slots(ev, slots, signals, nslots, chunk, total, &next);
    uint64_t t0 = now_ns();
    for (uint32_t e = 0; !err && nranged && e < nended; e++)
      if (device_root(ended[e].dev->device)->remote)
        err = read_back_chunk(written, nwritten, ended[e].dev->device, ended[e].begin / chunk);
    read_back_ns += now_ns() - t0;
  }
  /* On an error, the chunks still out must end before their memory goes. */
  for (uint32_t s = 0; s < nslots && s < created; s++)
    if (slots[s].busy)
      hsa_signal_wait_scacquire(signals[s], HSA_SIGNAL_CONDITION_EQ, 0, UINT64_MAX,
                                HSA_WAIT_STATE_BLOCKED);
  uint64_t t_ran = now_ns();
  /* The rest of the merge: the host storage has the local device's writes
   * and the ranges' bytes; each remote copy adds what it changed of the
   * other written buffers. */
  for (size_t x = 0; !err && x < nwritten; x++) {
    if (written[x].orig) {
      free(scratch);
      scratch = malloc(written[x].root->size);
      if (!scratch) {
        err = CL_OUT_OF_HOST_MEMORY;
        break;
      }
      for (uint32_t i = 0; !err && i < ndev; i++)
        if (device_root(devs[i].device)->remote && devs[i].groups_done)
          err = merge_remote(written[x].root, written[x].orig, devs[i].device, scratch);
    }
    if (!err) mem_host_wrote(written[x].root);
  }
  if (!err) {
    char split[256] = "";
    size_t at = 0;
    for (uint32_t i = 0; i < ndev && at < sizeof split - 64; i++)
      at += (size_t)snprintf(split + at, sizeof split - at, "%s%llu on %s", i ? ", " : "",
                             (unsigned long long)devs[i].groups_done, devs[i].device->name);
    debug_log("kernel '%s' spread: %llu work-groups in chunks of %llu: %s; copies %.1f ms, "
              "work-groups %.1f ms (of which %.1f reading back %zu of %zu written buffers by "
              "their footprint), merge %.1f ms",
              k->meta->name, (unsigned long long)total, (unsigned long long)chunk, split,
              (double)(t_prepared - t_begin) / 1e6, (double)(t_ran - t_prepared) / 1e6,
              (double)read_back_ns / 1e6, nranged, nwritten, (double)(now_ns() - t_ran) / 1e6);
  }
  if (group.handle) hsa_signal_group_destroy(group);
  for (uint32_t s = 0; s < created; s++)
    hsa_signal_destroy(signals[s]);
  for (uint32_t i = 0; i < ndev; i++)
    free(devs[i].kernarg);
  for (size_t x = 0; x < nwritten; x++) {
    free(written[x].ranges);
    free(written[x].orig);
  }
  free(scratch);
  runtime_busy_begin(); /* as the watcher completes kernels (fork.c) */
  event_complete(ev, err ? err : CL_COMPLETE);
  event_release_internal(ev);
  runtime_busy_end();
  return NULL;
}

void spread_start(cl_event ev) {
  event_set_status(ev, CL_SUBMITTED);
  event_set_status(ev, CL_RUNNING);
  object_retain(&ev->header);
  pthread_t t;
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
  if (pthread_create(&t, &attr, spread_run, ev) != 0) {
    event_release_internal(ev);
    event_complete(ev, CL_OUT_OF_HOST_MEMORY);
  }
  pthread_attr_destroy(&attr);
}
