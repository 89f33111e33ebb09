/* The CPU agent's share of the machine (hsa/cpu_share.c): cgroup CPU
 * quotas read from fake trees of files (v2 with nested limits, v2 in a
 * container's own namespace, v1, a v1/v2 hybrid, none), and through the
 * loader: CL_DEVICE_MAX_COMPUTE_UNITS under an affinity mask of one CPU
 * (the units' threads pinned inside it), and in a cgroup with a quota of
 * one CPU that the test makes where the machine lets it (skipped with a
 * message where not). The stealing order and the NUMA nodes memory is
 * interleaved over, on a fake two-socket tree. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <linux/mempolicy.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../hsa/cpu_share.h"
#include "../../hsa/cpu_topology.h"
#include "api.h"

/* ---- fake trees ----------------------------------------------------------- */

static char root[256];

static void put(const char *path, const char *text) {
  char full[512];
  snprintf(full, sizeof full, "%s%s", root, path);
  for (char *p = full + strlen(root) + 1; *p; p++)
    if (*p == '/') {
      *p = 0;
      mkdir(full, 0755);
      *p = '/';
    }
  FILE *f = fopen(full, "w");
  if (!f) return;
  fputs(text, f);
  fclose(f);
}

static void new_root(const char *name) {
  snprintf(root, sizeof root, "/tmp/aquila-cpu-share-%d-%s", (int)getpid(), name);
  mkdir(root, 0755);
}

static void remove_root(void) {
  char command[300];
  snprintf(command, sizeof command, "rm -rf '%s'", root);
  if (system(command) != 0) printf("  could not remove %s\n", root);
}

/* A pod's container under nested v2 limits: the smallest binds (2.5 CPUs,
 * rounded up). */
static void v2_nested_limits(void) {
  new_root("v2");
  put("/proc/self/cgroup", "0::/kubepods/pod1/ctr\n");
  put("/sys/fs/cgroup/cgroup.controllers", "cpu memory\n");
  put("/sys/fs/cgroup/kubepods/cpu.max", "800000 100000\n");
  put("/sys/fs/cgroup/kubepods/pod1/cpu.max", "250000 100000\n");
  put("/sys/fs/cgroup/kubepods/pod1/ctr/cpu.max", "max 100000\n");
  CHECK_EQ_INT(aq_cpu_share_quota_cpus(root), 3);
  CHECK_EQ_INT(aq_cpu_share_units(root, 64), 3);
  CHECK_EQ_INT(aq_cpu_share_units(root, 2), 2); /* the mask binds first */
  remove_root();
}

/* docker --cpus=1.5 with a cgroup namespace: the path is "/", the limit at
 * the mount's top. */
static void v2_container_namespace(void) {
  new_root("v2ns");
  put("/proc/self/cgroup", "0::/\n");
  put("/sys/fs/cgroup/cpu.max", "150000 100000\n");
  CHECK_EQ_INT(aq_cpu_share_quota_cpus(root), 2);
  remove_root();
}

/* cgroup v1 (Docker on an older host): quota -1 above, 2 CPUs below. */
static void v1_cfs_quota(void) {
  new_root("v1");
  put("/proc/self/cgroup", "12:memory:/docker/abc\n4:cpu,cpuacct:/docker/abc\n1:name=systemd:/\n");
  put("/sys/fs/cgroup/cpu,cpuacct/docker/cpu.cfs_quota_us", "-1\n");
  put("/sys/fs/cgroup/cpu,cpuacct/docker/cpu.cfs_period_us", "100000\n");
  put("/sys/fs/cgroup/cpu,cpuacct/docker/abc/cpu.cfs_quota_us", "200000\n");
  put("/sys/fs/cgroup/cpu,cpuacct/docker/abc/cpu.cfs_period_us", "100000\n");
  CHECK_EQ_INT(aq_cpu_share_quota_cpus(root), 2);
  /* A quota below one CPU still gives one unit. */
  put("/sys/fs/cgroup/cpu,cpuacct/docker/abc/cpu.cfs_quota_us", "20000\n");
  CHECK_EQ_INT(aq_cpu_share_quota_cpus(root), 1);
  CHECK_EQ_INT(aq_cpu_share_units(root, 8), 1);
  remove_root();
}

/* A hybrid host (v1 cpu controller at /sys/fs/cgroup/cpu, v2 unified) with
 * no limit anywhere; and a machine without cgroup files at all. */
static void no_limit(void) {
  new_root("none");
  put("/proc/self/cgroup", "4:memory:/x\n1:cpu:/\n0::/\n");
  put("/sys/fs/cgroup/cpu/cpu.cfs_quota_us", "-1\n");
  put("/sys/fs/cgroup/cpu/cpu.cfs_period_us", "100000\n");
  CHECK_EQ_INT(aq_cpu_share_quota_cpus(root), 0);
  CHECK_EQ_INT(aq_cpu_share_units(root, 6), 6);
  remove_root();
  new_root("empty");
  CHECK_EQ_INT(aq_cpu_share_quota_cpus(root), 0);
  CHECK_EQ_INT(aq_cpu_share_units(root, 0), 1);
  put("/proc/self/cgroup", "garbage without colons\n0:\n::\n");
  CHECK_EQ_INT(aq_cpu_share_quota_cpus(root), 0);
  remove_root();
}

/* ---- topology -------------------------------------------------------------- */

/* CPU c's cache index's level, type and shared CPUs in the fake tree. */
static void put_cache(int c, int index, const char *level, const char *type, const char *list) {
  static const char *const files[] = {"level", "type", "shared_cpu_list"};
  const char *texts[] = {level, type, list};
  char path[160], text[160];
  for (int f = 0; f < 3; f++) {
    snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%d/cache/index%d/%s", c, index,
             files[f]);
    snprintf(text, sizeof text, "%s%s", texts[f], f < 2 ? "\n" : "");
    put(path, text);
  }
}

/* Two sockets (NUMA nodes) of 16 cores with 2 threads each, numbered as
 * Linux does: CPUs 0-15 and 32-47 on socket 0 (CPU c's SMT sibling is
 * c + 32), 16-31 and 48-63 on socket 1; an L2 per core; an L3 per 8 cores
 * (two per socket). */
static void two_socket_tree(void) {
  char path[160], text[64];
  for (int c = 0; c < 64; c++) {
    int core = c % 32, ccx = core / 8;
    snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%d/topology/core_cpus_list", c);
    snprintf(text, sizeof text, "%d,%d\n", core, core + 32);
    put(path, text);
    put_cache(c, 0, "1", "Data", text);
    put_cache(c, 1, "2", "Unified", text);
    snprintf(text, sizeof text, "%d-%d,%d-%d\n", ccx * 8, ccx * 8 + 7, ccx * 8 + 32,
             ccx * 8 + 39);
    put_cache(c, 2, "3", "Unified", text);
  }
  put("/sys/devices/system/node/node0/cpulist", "0-15,32-47\n");
  put("/sys/devices/system/node/node1/cpulist", "16-31,48-63\n");
}

/* Unit i pinned to CPU i of the 64: unit 0 steals from CPU 32 (its SMT
 * sibling) first, then from the 14 CPUs of its L3, then from the 16 of the
 * rest of its socket, then from socket 1's 32; each group in turn from
 * the next unit. A machine whose sysfs says nothing gives plain turns. */
static int all_64[64];

/* The places of CPUs 0-63 on the two-socket tree, under a new root. */
static void read_two_socket_tree(const char *name, struct aq_cpu_place places[64]) {
  new_root(name);
  two_socket_tree();
  for (int c = 0; c < 64; c++)
    all_64[c] = c;
  aq_cpu_topology_read(root, all_64, 64, places);
}

static void stealing_order_knows_the_machine(void) {
  struct aq_cpu_place places[64];
  int *cpus = all_64;
  read_two_socket_tree("topology", places);
  CHECK_EQ_INT(places[33].core, 1);
  CHECK_EQ_INT(places[33].l3, 0);
  CHECK_EQ_INT(places[40].l3, 8);
  CHECK_EQ_INT(places[40].node, 0);
  CHECK_EQ_INT(places[50].node, 1);
  uint32_t order[63];
  aq_cpu_topology_victims(places, 64, 0, order);
  CHECK_EQ_INT(order[0], 32);
  int bad = 0;
  for (int k = 1; k < 15; k++) /* its L3: 1-7 and 33-39 */
    bad += !((order[k] >= 1 && order[k] <= 7) || (order[k] >= 33 && order[k] <= 39));
  for (int k = 15; k < 31; k++) /* its socket's other L3: 8-15 and 40-47 */
    bad += !((order[k] >= 8 && order[k] <= 15) || (order[k] >= 40 && order[k] <= 47));
  for (int k = 31; k < 63; k++) /* the other socket */
    bad += !((order[k] >= 16 && order[k] <= 31) || order[k] >= 48);
  CHECK_EQ_INT(bad, 0);
  CHECK_EQ_INT(order[1], 1); /* within a group, from the next unit on */
  /* Unit 63 (socket 1's last thread): its sibling is CPU 31. */
  aq_cpu_topology_victims(places, 64, 63, order);
  CHECK_EQ_INT(order[0], 31);
  CHECK(order[62] < 16 || (order[62] >= 32 && order[62] < 48));
  remove_root();
  /* Nothing known: every other unit in turn. */
  new_root("notopology");
  aq_cpu_topology_read(root, cpus, 8, places);
  aq_cpu_topology_victims(places, 8, 5, order);
  for (int k = 0; k < 7; k++)
    CHECK_EQ_INT(order[k], (5 + k + 1) % 8);
  remove_root();
}

/* Placement: the units' CPUs span both nodes of the two-socket tree, or
 * one where the process may run on socket 0's CPUs alone (nothing to
 * interleave then). And the mechanism itself, on this machine's node 0:
 * untouched pages interleaved, which the kernel then reports for them. */
static void placement_knows_the_nodes(void) {
  struct aq_cpu_place places[64];
  int *cpus = all_64;
  read_two_socket_tree("placement", places);
  uint64_t mask[4];
  CHECK_EQ_INT(aq_cpu_topology_nodes(places, 64, mask, 4), 2);
  CHECK(mask[0] == 3 && mask[1] == 0 && mask[2] == 0 && mask[3] == 0);
  int socket0[] = {0, 1, 2, 3, 32, 33, 34, 35};
  aq_cpu_topology_read(root, socket0, 8, places);
  CHECK_EQ_INT(aq_cpu_topology_nodes(places, 8, mask, 4), 1);
  CHECK(mask[0] == 1);
  int socket1[] = {16, 48, 17, 49};
  aq_cpu_topology_read(root, socket1, 4, places);
  CHECK_EQ_INT(aq_cpu_topology_nodes(places, 4, mask, 4), 1);
  CHECK(mask[0] == 2);
  remove_root();
  new_root("noplacement");
  aq_cpu_topology_read(root, cpus, 8, places);
  CHECK_EQ_INT(aq_cpu_topology_nodes(places, 8, mask, 4), 0);
  remove_root();

  size_t length = 4u << 20;
  void *p = mmap(NULL, length, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  CHECK(p != MAP_FAILED);
  uint64_t node0[4] = {1, 0, 0, 0};
  if (!aq_cpu_topology_interleave(p, length, node0, 4)) {
    printf("  (mbind refused here: %s; the policy is not checked)\n", strerror(errno));
  } else {
    int policy = -1;
    unsigned long nodes[4] = {0};
    CHECK(syscall(SYS_get_mempolicy, &policy, nodes, 64 * 4 + 1, p, MPOL_F_ADDR) == 0);
    CHECK_EQ_INT(policy, MPOL_INTERLEAVE);
    CHECK(nodes[0] == 1);
    memset(p, 1, length); /* pages placed by the policy, not by this thread */
    CHECK(((char *)p)[length - 1] == 1);
  }
  munmap(p, length);
}

/* ---- through the loader --------------------------------------------------- */

/* Threads of this process allowed on a single CPU. */
static int pinned_threads(void) {
  int pinned = 0;
  char path[300], line[256];
  DIR *tasks = opendir("/proc/self/task");
  for (struct dirent *e; tasks && (e = readdir(tasks));) {
    if (e->d_name[0] == '.') continue;
    snprintf(path, sizeof path, "/proc/self/task/%s/status", e->d_name);
    FILE *f = fopen(path, "r");
    if (!f) continue;
    while (fgets(line, sizeof line, f)) {
      if (strncmp(line, "Cpus_allowed_list:", 18)) continue;
      /* One CPU: a number alone, no range or list. */
      pinned += strspn(line + 18, " \t0123456789") == strlen(line + 18) - 1;
      break;
    }
    fclose(f);
  }
  if (tasks) closedir(tasks);
  return pinned;
}

/* The child's report: compute units, then how many of its threads are
 * pinned to a single CPU, on standard output. */
static int print_units(void) {
  api_setup();
  cl_uint units = 0;
  clGetDeviceInfo(device, CL_DEVICE_MAX_COMPUTE_UNITS, sizeof units, &units, NULL);
  /* A kernel runs, so the units' threads are up. */
  cl_int err;
  cl_program p =
      build_program("__kernel void k(__global int *a) { a[get_global_id(0)] = 1; }", "", &err);
  cl_kernel k = p ? clCreateKernel(p, "k", &err) : NULL;
  cl_mem m = clCreateBuffer(context, CL_MEM_READ_WRITE, 4096, NULL, &err);
  size_t global = 1024;
  if (k && m) {
    clSetKernelArg(k, 0, sizeof m, &m);
    clEnqueueNDRangeKernel(queue, k, 1, NULL, &global, NULL, 0, NULL, NULL);
    clFinish(queue);
  }
  /* Each unit pins itself when its thread starts: bounded, 2 s. */
  int pinned = pinned_threads();
  for (int i = 0; i < 40 && pinned < (int)units; i++) {
    usleep(50000);
    pinned = pinned_threads();
  }
  printf("units %u pinned %d\n", units, pinned);
  if (m) clReleaseMemObject(m);
  if (k) clReleaseKernel(k);
  if (p) clReleaseProgram(p);
  api_teardown();
  return 0;
}

/* Runs this program with --print-units in a child that first calls
 * prepare(arg); returns the units (-1 on failure) and the pinned threads. */
static int child_units(int (*prepare)(void *), void *arg, int *pinned) {
  int out[2];
  if (pipe(out) != 0) return -1;
  pid_t pid = fork();
  if (pid < 0) return -1;
  if (pid == 0) {
    dup2(out[1], 1);
    if (prepare && prepare(arg) != 0) _exit(3);
    execl("/proc/self/exe", "test_cpu_share", "--print-units", (char *)NULL);
    _exit(127);
  }
  close(out[1]);
  char text[128] = "";
  size_t got = 0;
  ssize_t n;
  while (got < sizeof text - 1 && (n = read(out[0], text + got, sizeof text - 1 - got)) > 0)
    got += (size_t)n;
  text[got] = 0;
  close(out[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  unsigned units = 0;
  *pinned = -1;
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 ||
      sscanf(strstr(text, "units") ? strstr(text, "units") : "", "units %u pinned %d", &units,
             pinned) != 2) {
    printf("  child: status %d, said '%s'\n", status, text);
    return -1;
  }
  return (int)units;
}

static int one_cpu(void *arg) {
  int cpu = *(int *)arg;
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  return sched_setaffinity(0, sizeof set, &set);
}

static int allowed_cpus(int *first) {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) != 0) return 0;
  *first = -1;
  for (int c = 0; c < CPU_SETSIZE; c++)
    if (CPU_ISSET(c, &set) && *first < 0) *first = c;
  return CPU_COUNT(&set);
}

/* As taskset -c N gives it: one unit, its thread pinned to that CPU; and
 * the whole mask: one unit per CPU, each pinned. */
static void affinity_mask_is_the_share(void) {
  int first, count = allowed_cpus(&first);
  REQUIRE(count >= 1);
  int pinned;
  CHECK_EQ_INT(child_units(one_cpu, &first, &pinned), 1);
  CHECK(pinned >= 1);
  CHECK_EQ_INT(child_units(NULL, NULL, &pinned), count > 1024 ? 1024 : count);
  if (count <= 1024) CHECK(pinned >= count);
}

/* ---- a real cgroup -------------------------------------------------------- */

static char cgroup_dir[256];

static int write_file(const char *dir, const char *name, const char *text) {
  char path[512];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  int fd = open(path, O_WRONLY);
  if (fd < 0) return -1;
  ssize_t n = write(fd, text, strlen(text));
  close(fd);
  return n == (ssize_t)strlen(text) ? 0 : -1;
}

static int enter_cgroup(void *arg) {
  char pid[32];
  snprintf(pid, sizeof pid, "%d\n", (int)getpid());
  return write_file(cgroup_dir, "cgroup.procs", pid);
}

/* A cgroup of this test with a quota of one CPU, v1 or v2: true when made. */
static bool make_cgroup(void) {
  struct stat st;
  /* v2: the root's cpu controller must be on for its children. */
  if (stat("/sys/fs/cgroup/cgroup.controllers", &st) == 0) {
    snprintf(cgroup_dir, sizeof cgroup_dir, "/sys/fs/cgroup/aquila-test-%d", (int)getpid());
    write_file("/sys/fs/cgroup", "cgroup.subtree_control", "+cpu");
    if (mkdir(cgroup_dir, 0755) == 0) {
      if (write_file(cgroup_dir, "cpu.max", "100000 100000") == 0) return true;
      rmdir(cgroup_dir);
    }
  }
  if (stat("/sys/fs/cgroup/cpu/cpu.cfs_quota_us", &st) == 0) {
    snprintf(cgroup_dir, sizeof cgroup_dir, "/sys/fs/cgroup/cpu/aquila-test-%d", (int)getpid());
    if (mkdir(cgroup_dir, 0755) == 0) {
      if (write_file(cgroup_dir, "cpu.cfs_period_us", "100000") == 0 &&
          write_file(cgroup_dir, "cpu.cfs_quota_us", "100000") == 0)
        return true;
      rmdir(cgroup_dir);
    }
  }
  return false;
}

/* docker --cpus=1 on a machine of several CPUs: one unit, and its thread
 * not pinned (the scheduler places it within the quota). */
static void cgroup_quota_is_the_share(void) {
  int first, count = allowed_cpus(&first);
  if (count < 2) {
    printf("  skipped: one CPU only, a quota of one changes nothing\n");
    return;
  }
  if (!make_cgroup()) {
    printf("  skipped: this machine lets the test make no cgroup with a CPU quota (%s)\n",
           strerror(errno));
    return;
  }
  int pinned;
  CHECK_EQ_INT(child_units(enter_cgroup, NULL, &pinned), 1);
  CHECK_EQ_INT(pinned, 0);
  /* The child has ended: the cgroup is empty again. */
  for (int i = 0; i < 50 && rmdir(cgroup_dir) != 0; i++)
    usleep(100000);
}

int main(int argc, char **argv) {
  if (argc > 1 && !strcmp(argv[1], "--print-units")) {
    unsetenv("AQUILA_CPU_UNITS");
    return print_units();
  }
  unsetenv("AQUILA_CPU_UNITS");
  RUN(v2_nested_limits);
  RUN(v2_container_namespace);
  RUN(v1_cfs_quota);
  RUN(no_limit);
  RUN(stealing_order_knows_the_machine);
  RUN(placement_knows_the_nodes);
  RUN(affinity_mask_is_the_share);
  RUN(cgroup_quota_is_the_share);
  CHECK_EXIT();
}
