/* Sub-devices (clCreateSubDevices): a sub-device is a subset of its root
 * device's compute units, which are the CPU agent's worker threads. It is a
 * cl_device_id of its own (reference counted, unlike root devices) that
 * shares the root's agent, code target, watcher and signal pool; a command
 * queue on it sets its AQL queue's CU mask (hsa_amd_queue_cu_set_mask), so
 * its kernels run only on its units.
 *
 * Affinity domains come from sysfs (NUMA nodes, and the caches each CPU
 * shares). Compute unit i stands for the i-th CPU of the process's
 * affinity mask (modulo their count when AQUILA_CPU_UNITS asks for more
 * units than CPUs), where the agent pins its thread when there is one unit
 * per CPU, so the domains group units as the CPUs they run on are grouped. */
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hsa/hsa_ext_amd.h>

#include "runtime.h"

#define MAX_UNITS 1024u /* the bits of unit_mask */

/* The agent's compute units that d runs on, in increasing order. */
static uint32_t device_units(cl_device_id d, uint32_t *units) {
  uint32_t n = 0;
  if (!d->parent) {
    for (uint32_t i = 0; i < d->compute_units && i < MAX_UNITS; i++)
      units[n++] = i;
    return n;
  }
  for (uint32_t i = 0; i < MAX_UNITS; i++)
    if ((d->unit_mask[i / 32] >> (i % 32)) & 1u) units[n++] = i;
  return n;
}

/* ---- topology ---------------------------------------------------------- */

/* Parses a sysfs CPU list ("0-3,8,10-11") into a bit set of CPUs below max. */
static int read_cpu_list(const char *path, unsigned char *set, int max) {
  FILE *f = fopen(path, "r");
  if (!f) return 0;
  char buf[4096];
  int ok = fgets(buf, sizeof buf, f) != NULL;
  fclose(f);
  if (!ok) return 0;
  memset(set, 0, (size_t)max);
  for (char *p = buf; *p && *p != '\n';) {
    char *end;
    long lo = strtol(p, &end, 10), hi = lo;
    if (end == p) return 0;
    p = end;
    if (*p == '-') {
      hi = strtol(p + 1, &end, 10);
      if (end == p + 1) return 0;
      p = end;
    }
    for (long c = lo; c <= hi && c < max; c++)
      if (c >= 0) set[c] = 1;
    if (*p == ',') p++;
  }
  return 1;
}

static int read_text(const char *path, char *buf, size_t size) {
  FILE *f = fopen(path, "r");
  if (!f) return 0;
  int ok = fgets(buf, (int)size, f) != NULL;
  fclose(f);
  if (ok) buf[strcspn(buf, "\n")] = 0;
  return ok;
}

#define MAX_CPUS 4096

/* The CPU that compute unit u stands for: the u-th of the process's
 * affinity mask, where the agent pins unit u's thread (hsa/cpu_agent.c). */
static int unit_cpu(uint32_t u) {
  static unsigned char online[MAX_CPUS];
  static int cpus[MAX_CPUS], count = -1;
  static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
  pthread_mutex_lock(&lock);
  if (count < 0) {
    count = 0;
    cpu_set_t allowed;
    if (sched_getaffinity(0, sizeof allowed, &allowed) == 0) {
      for (int c = 0; c < MAX_CPUS && c < CPU_SETSIZE; c++)
        if (CPU_ISSET(c, &allowed)) cpus[count++] = c;
    } else if (read_cpu_list("/sys/devices/system/cpu/online", online, MAX_CPUS)) {
      for (int c = 0; c < MAX_CPUS; c++)
        if (online[c]) cpus[count++] = c;
    }
  }
  int cpu = count ? cpus[u % (uint32_t)count] : -1;
  pthread_mutex_unlock(&lock);
  return cpu;
}

/* An id of cpu's domain (equal ids: same domain), or -1 when sysfs does not
 * say. Caches: the first CPU sharing the data or unified cache of that level. */
static long domain_id(cl_device_affinity_domain domain, int cpu) {
  char path[256], text[64];
  static unsigned char set[MAX_CPUS];
  if (cpu < 0) return -1;
  if (domain == CL_DEVICE_AFFINITY_DOMAIN_NUMA) {
    for (int node = 0; node < MAX_CPUS; node++) {
      snprintf(path, sizeof path, "/sys/devices/system/node/node%d/cpulist", node);
      if (!read_cpu_list(path, set, MAX_CPUS)) {
        /* Node numbers may have holes; stop at the first long gap. */
        if (node > 64) break;
        continue;
      }
      if (set[cpu]) return node;
    }
    return -1;
  }
  int level = domain == CL_DEVICE_AFFINITY_DOMAIN_L4_CACHE   ? 4
              : domain == CL_DEVICE_AFFINITY_DOMAIN_L3_CACHE ? 3
              : domain == CL_DEVICE_AFFINITY_DOMAIN_L2_CACHE ? 2
                                                             : 1;
  for (int index = 0; index < 16; index++) {
    snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%d/cache/index%d/level", cpu, index);
    if (!read_text(path, text, sizeof text)) break;
    if (atoi(text) != level) continue;
    snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%d/cache/index%d/type", cpu, index);
    if (read_text(path, text, sizeof text) && strcmp(text, "Instruction") == 0) continue;
    snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%d/cache/index%d/shared_cpu_list", cpu,
             index);
    if (!read_cpu_list(path, set, MAX_CPUS)) return -1;
    for (int c = 0; c < MAX_CPUS; c++)
      if (set[c]) return c;
    return -1;
  }
  return -1;
}

static const cl_device_affinity_domain domain_order[] = {
    CL_DEVICE_AFFINITY_DOMAIN_NUMA,     CL_DEVICE_AFFINITY_DOMAIN_L4_CACHE,
    CL_DEVICE_AFFINITY_DOMAIN_L3_CACHE, CL_DEVICE_AFFINITY_DOMAIN_L2_CACHE,
    CL_DEVICE_AFFINITY_DOMAIN_L1_CACHE,
};

/* Groups units[0..n) by domain: group[i] is unit i's group (numbered in order
 * of first appearance). Returns the number of groups, 0 when the topology of
 * some unit's CPU is unknown. Only reads sysfs, so it is called outside locks. */
static uint32_t group_by_domain(cl_device_affinity_domain domain, const uint32_t *units, uint32_t n,
                                uint32_t *group) {
  long *ids = malloc((size_t)n * sizeof *ids);
  if (!ids) return 0;
  uint32_t groups = 0;
  for (uint32_t i = 0; i < n; i++) {
    long id = domain_id(domain, unit_cpu(units[i]));
    if (id < 0) {
      groups = 0;
      break;
    }
    ids[i] = id;
    group[i] = groups;
    for (uint32_t j = 0; j < i; j++)
      if (ids[j] == id) {
        group[i] = group[j];
        break;
      }
    if (group[i] == groups) groups++;
  }
  free(ids);
  return groups;
}

/* The domains the topology describes for every unit of d. */
static cl_device_affinity_domain supported_domains(cl_device_id d) {
  uint32_t *units = malloc(MAX_UNITS * 2 * sizeof *units);
  if (!units) return 0;
  uint32_t n = device_units(d, units);
  cl_device_affinity_domain mask = 0;
  /* Only domains that split d into at least two sub-devices. */
  for (size_t k = 0; k < sizeof domain_order / sizeof domain_order[0]; k++)
    if (n && group_by_domain(domain_order[k], units, n, units + MAX_UNITS) >= 2)
      mask |= domain_order[k];
  free(units);
  if (mask) mask |= CL_DEVICE_AFFINITY_DOMAIN_NEXT_PARTITIONABLE;
  return mask;
}

/* ---- queries and references ------------------------------------------- */

int device_own_info(cl_device_id d, cl_device_info param_name, size_t param_value_size,
                    void *param_value, size_t *param_value_size_ret, cl_int *err) {
#define OWN_VALUE(type, v)                                                                         \
  do {                                                                                             \
    type own_v_ = (v);                                                                             \
    *err = info_copy(&own_v_, sizeof own_v_, param_value_size, param_value, param_value_size_ret); \
    return 1;                                                                                      \
  } while (0)
  switch (param_name) {
  case CL_DEVICE_MAX_COMPUTE_UNITS:
    OWN_VALUE(cl_uint, d->compute_units);
  case CL_DEVICE_PARENT_DEVICE:
    OWN_VALUE(cl_device_id, d->parent);
  case CL_DEVICE_PARTITION_MAX_SUB_DEVICES:
    /* A remote device is not partitioned (its units are the daemon's). */
    OWN_VALUE(cl_uint, device_root(d)->remote ? 0 : d->compute_units);
  case CL_DEVICE_PARTITION_PROPERTIES: {
    /* The specification: a single 0 when no scheme gives two sub-devices. */
    cl_device_partition_property props[3] = {0};
    size_t n = 0;
    if (d->compute_units > 1 && !device_root(d)->remote) {
      props[n++] = CL_DEVICE_PARTITION_EQUALLY;
      props[n++] = CL_DEVICE_PARTITION_BY_COUNTS;
      if (supported_domains(d)) props[n++] = CL_DEVICE_PARTITION_BY_AFFINITY_DOMAIN;
    }
    *err = info_copy(props, (n ? n : 1) * sizeof props[0], param_value_size, param_value,
                     param_value_size_ret);
    return 1;
  }
  case CL_DEVICE_PARTITION_AFFINITY_DOMAIN:
    OWN_VALUE(cl_device_affinity_domain,
              d->compute_units > 1 && !device_root(d)->remote ? supported_domains(d) : 0);
  case CL_DEVICE_PARTITION_TYPE:
    /* A root device answers with nothing (size 0), as the specification allows. */
    *err = info_copy(d->partition_type, d->partition_type_len * sizeof d->partition_type[0],
                     param_value_size, param_value, param_value_size_ret);
    return 1;
  case CL_DEVICE_REFERENCE_COUNT:
    OWN_VALUE(cl_uint, d->parent ? atomic_load(&d->header.refcount) : 1);
  default:
    return 0;
  }
#undef OWN_VALUE
}

void device_retain_internal(cl_device_id d) {
  if (d->parent) object_retain(&d->header);
}

void device_release_internal(cl_device_id d) {
  while (d && d->parent && object_release(&d->header)) {
    cl_device_id parent = d->parent;
    free(d->partition_type);
    object_free(d);
    d = parent; /* a sub-device holds a reference on its parent */
  }
}

AQUILA_API cl_int clRetainDevice(cl_device_id device) {
  if (!device_is_valid(device)) return CL_INVALID_DEVICE;
  device_retain_internal(device); /* root devices are not counted */
  return CL_SUCCESS;
}

AQUILA_API cl_int clReleaseDevice(cl_device_id device) {
  if (!device_is_valid(device)) return CL_INVALID_DEVICE;
  device_release_internal(device);
  return CL_SUCCESS;
}

/* ---- partitioning ------------------------------------------------------- */

AQUILA_API cl_int clCreateSubDevices(cl_device_id in_device,
                                     const cl_device_partition_property *properties,
                                     cl_uint num_devices, cl_device_id *out_devices,
                                     cl_uint *num_devices_ret) {
  if (!device_is_valid(in_device)) return CL_INVALID_DEVICE;
  if (!properties) return CL_INVALID_VALUE;
  /* The list is one scheme: its name, its values, 0. */
  cl_device_partition_property scheme = properties[0];
  size_t num_counts = 0;
  switch (scheme) {
  case CL_DEVICE_PARTITION_EQUALLY:
  case CL_DEVICE_PARTITION_BY_AFFINITY_DOMAIN:
    if (properties[2] != 0) return CL_INVALID_VALUE;
    break;
  case CL_DEVICE_PARTITION_BY_COUNTS:
    while (properties[1 + num_counts] != CL_DEVICE_PARTITION_BY_COUNTS_LIST_END)
      num_counts++;
    if (num_counts == 0 || properties[2 + num_counts] != 0) return CL_INVALID_VALUE;
    break;
  default:
    return CL_INVALID_VALUE;
  }
  /* A remote device supports no scheme (CL_DEVICE_PARTITION_PROPERTIES). */
  if (device_root(in_device)->remote) return CL_INVALID_VALUE;
  /* The schemes are supported, but one unit cannot be split any further. */
  if (in_device->compute_units < 2) return CL_DEVICE_PARTITION_FAILED;
  cl_device_affinity_domain domain = 0;
  if (scheme == CL_DEVICE_PARTITION_BY_AFFINITY_DOMAIN) {
    domain = (cl_device_affinity_domain)properties[1];
    cl_device_affinity_domain supported = supported_domains(in_device);
    if (!supported) return CL_INVALID_VALUE;
    if (domain == 0 || (domain & (domain - 1)) || !(domain & supported)) return CL_INVALID_VALUE;
  }
  if (scheme == CL_DEVICE_PARTITION_EQUALLY &&
      (properties[1] <= 0 || (uint64_t)properties[1] > UINT32_MAX))
    return CL_INVALID_VALUE;

  uint32_t *units = malloc(MAX_UNITS * 2 * sizeof *units);
  if (!units) return CL_OUT_OF_HOST_MEMORY;
  uint32_t *group = units + MAX_UNITS; /* group[i]: the sub-device unit i goes to */
  uint32_t n_units = device_units(in_device, units), n_sub = 0;
  cl_int err = CL_SUCCESS;
  switch (scheme) {
  case CL_DEVICE_PARTITION_EQUALLY: {
    uint32_t per = (uint32_t)properties[1];
    if (per > n_units) {
      /* More units per sub-device than the device has. */
      err = CL_INVALID_DEVICE_PARTITION_COUNT;
      break;
    }
    n_sub = n_units / per; /* the remaining units are not used */
    for (uint32_t i = 0; i < n_units; i++)
      group[i] = i / per < n_sub ? i / per : UINT32_MAX;
    if (n_sub == 0) err = CL_DEVICE_PARTITION_FAILED;
    break;
  }
  case CL_DEVICE_PARTITION_BY_COUNTS: {
    n_sub = (uint32_t)(num_counts < UINT32_MAX ? num_counts : UINT32_MAX);
    if (out_devices && num_devices < n_sub) {
      err = CL_INVALID_VALUE;
      break;
    }
    uint64_t total = 0;
    for (size_t k = 0; k < num_counts; k++) {
      cl_device_partition_property c = properties[1 + k];
      if (c <= 0)
        err = CL_INVALID_DEVICE_PARTITION_COUNT;
      else
        total += (uint64_t)c;
    }
    if (num_counts > n_units || total > n_units) err = CL_INVALID_DEVICE_PARTITION_COUNT;
    if (err != CL_SUCCESS) break;
    uint32_t i = 0;
    for (uint32_t k = 0; k < n_sub; k++)
      for (cl_device_partition_property c = 0; c < properties[1 + k]; c++)
        group[i++] = k;
    for (; i < n_units; i++)
      group[i] = UINT32_MAX;
    break;
  }
  default: /* CL_DEVICE_PARTITION_BY_AFFINITY_DOMAIN */
    if (domain == CL_DEVICE_AFFINITY_DOMAIN_NEXT_PARTITIONABLE) {
      /* The first level, from NUMA down to L1, that splits this device. */
      for (size_t k = 0; k < sizeof domain_order / sizeof domain_order[0] && n_sub < 2; k++) {
        n_sub = group_by_domain(domain_order[k], units, n_units, group);
        domain = domain_order[k];
      }
    } else {
      n_sub = group_by_domain(domain, units, n_units, group);
    }
    if (n_sub < 2) err = CL_DEVICE_PARTITION_FAILED;
    break;
  }
  /* One sub-device holding every unit would be the device itself: the
   * device cannot be partitioned that way (the CTS expects this too). */
  if (err == CL_SUCCESS && n_sub == 1) {
    uint32_t used = 0;
    for (uint32_t i = 0; i < n_units; i++) used += group[i] == 0;
    if (used == n_units) err = CL_DEVICE_PARTITION_FAILED;
  }
  if (err == CL_SUCCESS && out_devices && num_devices < n_sub) err = CL_INVALID_VALUE;
  if (err != CL_SUCCESS || !out_devices) {
    free(units);
    if (err == CL_SUCCESS && num_devices_ret) *num_devices_ret = n_sub;
    return err;
  }

  cl_device_id root = device_root(in_device);
  cl_uint made = 0;
  for (; made < n_sub; made++) {
    /* CL_DEVICE_PARTITION_TYPE: the properties as given, except that
     * NEXT_PARTITIONABLE becomes the domain it chose. */
    size_t len = scheme == CL_DEVICE_PARTITION_BY_COUNTS ? num_counts + 3 : 3;
    cl_device_partition_property *type = malloc(len * sizeof *type);
    cl_device_id d = type ? malloc(sizeof *d) : NULL;
    if (!d) {
      free(type);
      break;
    }
    memcpy(type, properties, len * sizeof *type);
    if (scheme == CL_DEVICE_PARTITION_BY_AFFINITY_DOMAIN)
      type[1] = (cl_device_partition_property)domain;
    /* The root's description (name, memory, limits, target); the watcher
     * and signal pool fields are never used through a sub-device. */
    memcpy(d, root, sizeof *d);
    object_init(&d->header, OBJECT_DEVICE);
    d->parent = in_device;
    d->root = root;
    memset(d->unit_mask, 0, sizeof d->unit_mask);
    d->compute_units = 0;
    for (uint32_t i = 0; i < n_units; i++)
      if (group[i] == made) {
        d->unit_mask[units[i] / 32] |= 1u << (units[i] % 32);
        d->compute_units++;
      }
    d->partition_type = type;
    d->partition_type_len = len;
    device_retain_internal(in_device);
    out_devices[made] = d;
  }
  free(units);
  if (made < n_sub) {
    for (cl_uint k = 0; k < made; k++)
      device_release_internal(out_devices[k]);
    return CL_OUT_OF_HOST_MEMORY;
  }
  if (num_devices_ret) *num_devices_ret = n_sub;
  debug_log("clCreateSubDevices: %u sub-device(s) of %u unit(s)", n_sub, in_device->compute_units);
  return CL_SUCCESS;
}
