/* Buffers across agents: where a buffer's bytes are valid and how they
 * move (runtime.h, "residency.c"). Only contexts with a remote device
 * track anything; there every root buffer has a validity mask (bit 0: the
 * host storage, bit 1 + r: remote agent r's copy) and the remote copies'
 * addresses. A command that runs on the host makes the host storage valid
 * first; a kernel on a remote device makes that device's copy valid (from
 * the host storage, fetching it first from another device when only that
 * one holds the bytes); a command that writes leaves only its own copy
 * valid. Transfers go through the HSA runtime's remote memory calls
 * (hsa_ext_aquila.h), ordered with the device's kernels by its daemon. */
#include <stdlib.h>
#include <string.h>

#include "aquila/hsa_ext_aquila.h"
#include "runtime.h"

#define VALID_HOST 1ull

struct mem_residency {
  pthread_mutex_t lock;
  uint64_t valid;
  uint64_t address[AQ_MAX_REMOTE_DEVICES];    /* 0: not allocated there */
  cl_device_id device[AQ_MAX_REMOTE_DEVICES]; /* whose agent holds address */
  uint32_t epoch[AQ_MAX_REMOTE_DEVICES];      /* the agent's epoch when allocated */
};

static uint32_t agent_epoch(cl_device_id d) {
  uint32_t e = 0;
  hsa_agent_get_info(d->agent, HSA_VEN_AQUILA_AGENT_INFO_EPOCH, &e);
  return e;
}

/* Forgets copies on agents that were lost and came back since they were
 * made (their memory went with the old connection). Caller holds r->lock. */
static void forget_stale(struct mem_residency *r) {
  for (int i = 0; i < AQ_MAX_REMOTE_DEVICES; i++)
    if (r->address[i] && agent_epoch(r->device[i]) != r->epoch[i]) {
      r->address[i] = 0;
      r->valid &= ~(2ull << i);
    }
}

static cl_mem root_of(cl_mem m) {
  while (m->parent)
    m = m->parent;
  return m;
}

static uint64_t device_bit(cl_device_id d) {
  return 2ull << device_root(d)->remote_index;
}

cl_int mem_residency_init(cl_mem m) {
  if (!m->context->has_remote || m->parent) return CL_SUCCESS;
  struct mem_residency *r = calloc(1, sizeof *r);
  if (!r) return CL_OUT_OF_HOST_MEMORY;
  pthread_mutex_init(&r->lock, NULL);
  r->valid = VALID_HOST;
  m->residency = r;
  return CL_SUCCESS;
}

void mem_residency_free(cl_mem m) {
  struct mem_residency *r = m->residency;
  if (!r) return;
  forget_stale(r);
  for (int i = 0; i < AQ_MAX_REMOTE_DEVICES; i++)
    if (r->address[i]) hsa_ven_aquila_agent_memory_free(r->device[i]->agent, r->address[i]);
  pthread_mutex_destroy(&r->lock);
  free(r);
  m->residency = NULL;
}

/* Copies a remote device's bytes into the host storage. Caller holds r->lock. */
static cl_int fetch_to_host(cl_mem root, struct mem_residency *r) {
  if (r->valid & VALID_HOST) return CL_SUCCESS;
  forget_stale(r);
  for (int i = 0; i < AQ_MAX_REMOTE_DEVICES; i++) {
    if (!(r->valid & (2ull << i))) continue;
    hsa_status_t st = hsa_ven_aquila_agent_memory_read(r->device[i]->agent, root->data,
                                                       r->address[i], root->size);
    if (st != HSA_STATUS_SUCCESS) {
      debug_log("buffer of %zu bytes: reading it back from %s failed (HSA status 0x%x): the "
                "command that needs it fails",
                root->size, r->device[i]->name, (unsigned)st);
      return CL_OUT_OF_RESOURCES;
    }
    r->valid |= VALID_HOST;
    return CL_SUCCESS;
  }
  debug_log("buffer of %zu bytes: no copy holds its bytes", root->size);
  return CL_OUT_OF_RESOURCES;
}

cl_int mem_make_host_valid(cl_mem m) {
  cl_mem root = root_of(m);
  struct mem_residency *r = root->residency;
  if (!r) return CL_SUCCESS;
  pthread_mutex_lock(&r->lock);
  cl_int err = fetch_to_host(root, r);
  pthread_mutex_unlock(&r->lock);
  return err;
}

void mem_host_wrote(cl_mem m) {
  struct mem_residency *r = root_of(m)->residency;
  if (!r) return;
  pthread_mutex_lock(&r->lock);
  r->valid = VALID_HOST;
  pthread_mutex_unlock(&r->lock);
}

/* Caller holds r->lock. */
static cl_int allocate_on(cl_mem root, struct mem_residency *r, cl_device_id d) {
  d = device_root(d);
  uint32_t i = d->remote_index;
  forget_stale(r);
  if (r->address[i]) return CL_SUCCESS;
  hsa_status_t st = hsa_ven_aquila_agent_memory_allocate(d->agent, root->size, &r->address[i]);
  if (st != HSA_STATUS_SUCCESS) {
    r->address[i] = 0;
    debug_log("buffer of %zu bytes: no memory for it on %s (HSA status 0x%x)", root->size, d->name,
              (unsigned)st);
    return CL_MEM_OBJECT_ALLOCATION_FAILURE;
  }
  r->device[i] = d;
  r->epoch[i] = agent_epoch(d);
  return CL_SUCCESS;
}

/* From a remote device holding the bytes to d, directly. Caller holds r->lock. */
static cl_int copy_between_devices(cl_mem root, struct mem_residency *r, cl_device_id d) {
  for (int i = 0; i < AQ_MAX_REMOTE_DEVICES; i++) {
    if (!(r->valid & (2ull << i))) continue;
    hsa_status_t st = hsa_ven_aquila_agent_memory_copy(
        d->agent, r->address[d->remote_index], r->device[i]->agent, r->address[i], root->size);
    if (st == HSA_STATUS_SUCCESS) {
      debug_log("buffer of %zu bytes moved from %s to %s directly", root->size, r->device[i]->name,
                d->name);
      return CL_SUCCESS;
    }
    debug_log("buffer of %zu bytes: %s could not take it from %s directly (HSA status 0x%x): "
              "through this process instead",
              root->size, d->name, r->device[i]->name, (unsigned)st);
    return CL_OUT_OF_RESOURCES;
  }
  return CL_OUT_OF_RESOURCES;
}

cl_int mem_device_address(cl_mem m, cl_device_id d, uint64_t *address) {
  cl_mem root = root_of(m);
  struct mem_residency *r = root->residency;
  if (!r || !device_root(d)->remote) return CL_INVALID_OPERATION;
  pthread_mutex_lock(&r->lock);
  cl_int err = allocate_on(root, r, d);
  if (!err) *address = r->address[device_root(d)->remote_index] + (uint64_t)(m->data - root->data);
  pthread_mutex_unlock(&r->lock);
  return err;
}

cl_int mem_prepare_for_device(cl_mem m, cl_device_id d, int writes) {
  cl_mem root = root_of(m);
  struct mem_residency *r = root->residency;
  if (!r) return CL_SUCCESS;
  d = device_root(d);
  pthread_mutex_lock(&r->lock);
  forget_stale(r);
  cl_int err = CL_SUCCESS;
  if (writes == 2 && m == root) {
    /* Overwritten whole, never read: where the bytes were does not matter. */
    if (!d->remote) {
      r->valid = VALID_HOST;
    } else {
      uint64_t bit = device_bit(d);
      if (!(r->valid & bit)) err = allocate_on(root, r, d);
      if (!err) r->valid = bit;
    }
  } else if (!d->remote) {
    err = fetch_to_host(root, r);
    if (!err && writes) r->valid = VALID_HOST;
  } else {
    uint64_t bit = device_bit(d);
    if (!(r->valid & bit)) {
      err = allocate_on(root, r, d);
      /* Only another remote device holds the bytes: daemon to daemon. */
      if (!err && !(r->valid & VALID_HOST) && copy_between_devices(root, r, d) == CL_SUCCESS) {
        r->valid |= bit;
        if (writes) r->valid = bit;
        pthread_mutex_unlock(&r->lock);
        return CL_SUCCESS;
      }
      if (!err) err = fetch_to_host(root, r);
      if (!err) {
        hsa_status_t st = hsa_ven_aquila_agent_memory_write(d->agent, r->address[d->remote_index],
                                                            root->data, root->size);
        if (st != HSA_STATUS_SUCCESS) {
          debug_log("buffer of %zu bytes: sending it to %s failed (HSA status 0x%x)", root->size,
                    d->name, (unsigned)st);
          err = CL_OUT_OF_RESOURCES;
        }
      }
      if (!err) r->valid |= bit;
    }
    if (!err && writes) r->valid = bit;
  }
  pthread_mutex_unlock(&r->lock);
  return err;
}

cl_int mem_read_direct(cl_mem m, size_t offset, size_t size, void *dst) {
  cl_mem root = root_of(m);
  struct mem_residency *r = root->residency;
  if (!r) return 0;
  uint64_t at = (uint64_t)(m->data - root->data) + offset;
  cl_int result = 0;
  pthread_mutex_lock(&r->lock);
  forget_stale(r);
  if (!r->valid) result = CL_OUT_OF_RESOURCES; /* only a lost daemon had the bytes */
  for (int i = 0; !(r->valid & VALID_HOST) && i < AQ_MAX_REMOTE_DEVICES; i++) {
    if (!(r->valid & (2ull << i))) continue;
    hsa_status_t st =
        hsa_ven_aquila_agent_memory_read(r->device[i]->agent, dst, r->address[i] + at, size);
    if (st != HSA_STATUS_SUCCESS) {
      debug_log("reading %zu bytes back from %s failed (HSA status 0x%x)", size, r->device[i]->name,
                (unsigned)st);
      result = CL_OUT_OF_RESOURCES;
    } else {
      result = 1;
    }
    break;
  }
  pthread_mutex_unlock(&r->lock);
  return result;
}

cl_int mem_write_direct(cl_mem m, cl_device_id d, size_t offset, size_t size, const void *src) {
  cl_mem root = root_of(m);
  struct mem_residency *r = root->residency;
  d = device_root(d);
  if (!r || !d->remote) return 0;
  uint64_t at = (uint64_t)(m->data - root->data) + offset;
  uint64_t bit = device_bit(d);
  pthread_mutex_lock(&r->lock);
  cl_int err = allocate_on(root, r, d);
  /* The rest of the buffer must be current there first, unless the write
   * covers all of it. */
  if (!err && !(r->valid & bit) && !(at == 0 && size == root->size)) {
    err = fetch_to_host(root, r);
    if (!err && hsa_ven_aquila_agent_memory_write(d->agent, r->address[d->remote_index], root->data,
                                                  root->size) != HSA_STATUS_SUCCESS)
      err = CL_OUT_OF_RESOURCES;
  }
  if (!err && hsa_ven_aquila_agent_memory_write(d->agent, r->address[d->remote_index] + at, src,
                                                size) != HSA_STATUS_SUCCESS) {
    debug_log("writing %zu bytes to %s failed", size, d->name);
    err = CL_OUT_OF_RESOURCES;
  }
  if (!err) r->valid = bit;
  pthread_mutex_unlock(&r->lock);
  return err ? err : 1;
}

/* Makes d's copy of root current for an operation there on [at, at + size)
 * that overwrites it (whole: nothing to send first). Caller holds r->lock. */
static cl_int current_on(cl_mem root, struct mem_residency *r, cl_device_id d, uint64_t at,
                         uint64_t size, int overwrites) {
  cl_int err = allocate_on(root, r, d);
  uint64_t bit = device_bit(d);
  if (err || (r->valid & bit) || (overwrites && at == 0 && size == root->size)) return err;
  if (!(r->valid & VALID_HOST) && copy_between_devices(root, r, d) == CL_SUCCESS) {
    r->valid |= bit;
    return CL_SUCCESS;
  }
  err = fetch_to_host(root, r);
  if (!err && hsa_ven_aquila_agent_memory_write(d->agent, r->address[d->remote_index], root->data,
                                                root->size) != HSA_STATUS_SUCCESS)
    err = CL_OUT_OF_RESOURCES;
  if (!err) r->valid |= bit;
  return err;
}

cl_int mem_fill_direct(cl_mem m, cl_device_id d, size_t offset, size_t size, const void *pattern,
                       size_t pattern_size) {
  cl_mem root = root_of(m);
  struct mem_residency *r = root->residency;
  d = device_root(d);
  if (!r || !d->remote || pattern_size > 128) return 0;
  uint64_t at = (uint64_t)(m->data - root->data) + offset;
  pthread_mutex_lock(&r->lock);
  cl_int err = current_on(root, r, d, at, size, 1);
  if (!err &&
      hsa_ven_aquila_agent_memory_fill(d->agent, r->address[d->remote_index] + at, size, pattern,
                                       (uint32_t)pattern_size) != HSA_STATUS_SUCCESS)
    err = CL_OUT_OF_RESOURCES;
  if (!err) r->valid = device_bit(d);
  pthread_mutex_unlock(&r->lock);
  return err ? err : 1;
}

cl_int mem_copy_direct(cl_mem dst, size_t dst_offset, cl_mem src, size_t src_offset, size_t size,
                       cl_device_id d) {
  cl_mem droot = root_of(dst), sroot = root_of(src);
  struct mem_residency *dr = droot->residency, *sr = sroot->residency;
  d = device_root(d);
  if (!dr || !sr || !d->remote) return 0;
  uint64_t dat = (uint64_t)(dst->data - droot->data) + dst_offset;
  uint64_t sat = (uint64_t)(src->data - sroot->data) + src_offset;
  /* Both locks, in a fixed order (one, when both are views of one buffer). */
  struct mem_residency *first = dr < sr ? dr : sr, *second = dr < sr ? sr : dr;
  pthread_mutex_lock(&first->lock);
  if (second != first) pthread_mutex_lock(&second->lock);
  cl_int err = current_on(sroot, sr, d, sat, size, 0);
  if (!err) err = current_on(droot, dr, d, dat, size, 1);
  if (!err && hsa_ven_aquila_agent_memory_copy(d->agent, dr->address[d->remote_index] + dat,
                                               d->agent, sr->address[d->remote_index] + sat,
                                               size) != HSA_STATUS_SUCCESS)
    err = CL_OUT_OF_RESOURCES;
  if (!err) dr->valid = device_bit(d);
  if (second != first) pthread_mutex_unlock(&second->lock);
  pthread_mutex_unlock(&first->lock);
  return err ? err : 1;
}
