/* AQUILA_TRACE: the timeline a program gets when it sets the variable.
 * The library reads it when it loads, so the traced program is a child
 * (this program again, run with the variable set and two compute units);
 * the parent checks the file the child left: valid JSON, one span per
 * command with its kernel's name and sizes, the build, and work-groups on
 * both compute units. */
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "api.h"

#define KERNEL_RUNS 5
#define GROUPS 512

static const char *src = "__kernel void trace_busy(__global float *a, int rounds) {\n"
                         "  size_t i = get_global_id(0);\n"
                         "  float x = a[i];\n"
                         "  for (int r = 0; r < rounds; r++) x = x * 0.999f + 0.5f;\n"
                         "  a[i] = x;\n"
                         "}\n";

/* ---- the traced child ---- */

static int run_child(void) {
  api_setup();
  cl_int err;
  /* Options as long as hashcat's (the build's span carries them, cut
   * short and escaped: the file must stay valid JSON). */
  cl_program p = build_program(src,
                               "-D KERNEL_STATIC -D INCLUDE_PATH=/usr/share/some/long/path/OpenCL "
                               "-D XM2S(x)=#x -D M2S(x)=XM2S(x) -D LOCAL_MEM_TYPE=2 "
                               "-D VENDOR_ID=214 -D CUDA_ARCH=0 -D HAS_ADD=0 -D HAS_ADDC=0 "
                               "-D QUOTED=\"a\\\"b\" -D ATTACK_EXEC=11 -D DGST_R0=0",
                               &err);
  if (!p) return 2;
  cl_kernel k = clCreateKernel(p, "trace_busy", &err);
  size_t n = GROUPS * 64;
  cl_mem a = clCreateBuffer(context, CL_MEM_READ_WRITE, n * sizeof(float), NULL, &err);
  cl_mem b = clCreateBuffer(context, CL_MEM_READ_WRITE, n * sizeof(float), NULL, &err);
  float *host = calloc(n, sizeof(float));
  if (!k || !a || !b || !host) return 3;
  clEnqueueWriteBuffer(queue, a, CL_FALSE, 0, n * sizeof(float), host, 0, NULL, NULL);
  int rounds = 2000;
  clSetKernelArg(k, 0, sizeof a, &a);
  clSetKernelArg(k, 1, sizeof rounds, &rounds);
  size_t global = n, local = 64;
  for (int r = 0; r < KERNEL_RUNS; r++)
    clEnqueueNDRangeKernel(queue, k, 1, NULL, &global, &local, 0, NULL, NULL);
  clEnqueueCopyBuffer(queue, a, b, 0, 0, n * sizeof(float), 0, NULL, NULL);
  void *mapped = clEnqueueMapBuffer(queue, b, CL_TRUE, CL_MAP_READ, 0, 64, 0, NULL, NULL, &err);
  if (mapped) clEnqueueUnmapMemObject(queue, b, mapped, 0, NULL, NULL);
  err = clEnqueueReadBuffer(queue, b, CL_TRUE, 0, n * sizeof(float), host, 0, NULL, NULL);
  clFinish(queue);
  free(host);
  clReleaseMemObject(a);
  clReleaseMemObject(b);
  clReleaseKernel(k);
  clReleaseProgram(p);
  api_teardown();
  return err == CL_SUCCESS ? 0 : 4;
}

/* ---- a strict JSON reader: whether text is one JSON value ---- */

static const char *json_value(const char *s, int depth);

static const char *json_space(const char *s) {
  while (*s == ' ' || *s == '\n' || *s == '\r' || *s == '\t')
    s++;
  return s;
}

static const char *json_string(const char *s) {
  if (*s++ != '"') return NULL;
  for (; *s && *s != '"'; s++) {
    if ((unsigned char)*s < 0x20) return NULL;
    if (*s == '\\') {
      s++;
      if (*s == 'u') {
        for (int i = 1; i <= 4; i++)
          if (!strchr("0123456789abcdefABCDEF", s[i]) || !s[i]) return NULL;
        s += 4;
      } else if (!*s || !strchr("\"\\/bfnrt", *s)) {
        return NULL;
      }
    }
  }
  return *s == '"' ? s + 1 : NULL;
}

static const char *json_number(const char *s) {
  const char *start = s;
  if (*s == '-') s++;
  if (*s < '0' || *s > '9') return NULL;
  while (*s >= '0' && *s <= '9')
    s++;
  if (*s == '.') {
    s++;
    if (*s < '0' || *s > '9') return NULL;
    while (*s >= '0' && *s <= '9')
      s++;
  }
  if (*s == 'e' || *s == 'E') {
    s++;
    if (*s == '+' || *s == '-') s++;
    if (*s < '0' || *s > '9') return NULL;
    while (*s >= '0' && *s <= '9')
      s++;
  }
  return s > start ? s : NULL;
}

static const char *json_list(const char *s, char close, int depth, int members) {
  s = json_space(s + 1);
  if (*s == close) return s + 1;
  for (;;) {
    if (members) {
      s = json_string(s);
      if (!s || *(s = json_space(s)) != ':') return NULL;
      s = json_space(s + 1);
    }
    s = json_value(s, depth + 1);
    if (!s) return NULL;
    s = json_space(s);
    if (*s == close) return s + 1;
    if (*s != ',') return NULL;
    s = json_space(s + 1);
  }
}

static const char *json_value(const char *s, int depth) {
  if (depth > 64) return NULL;
  s = json_space(s);
  switch (*s) {
  case '{':
    return json_list(s, '}', depth, 1);
  case '[':
    return json_list(s, ']', depth, 0);
  case '"':
    return json_string(s);
  case 't':
    return strncmp(s, "true", 4) ? NULL : s + 4;
  case 'f':
    return strncmp(s, "false", 5) ? NULL : s + 5;
  case 'n':
    return strncmp(s, "null", 4) ? NULL : s + 4;
  default:
    return json_number(s);
  }
}

static int count_of(const char *text, const char *needle) {
  int n = 0;
  for (const char *p = strstr(text, needle); p; p = strstr(p + 1, needle))
    n++;
  return n;
}

/* The row (tid) whose thread_name is name, or 0. */
static unsigned row_named(const char *text, const char *name) {
  char key[160];
  snprintf(key, sizeof key, "\"name\":\"thread_name\",\"args\":{\"name\":\"%s\"}", name);
  const char *hit = strstr(text, key);
  if (!hit) return 0;
  const char *tid = hit;
  while (tid > text && strncmp(tid, "\"tid\":", 6) != 0)
    tid--;
  return tid > text ? (unsigned)strtoul(tid + 6, NULL, 10) : 0;
}

/* ---- the parent ---- */

static char trace_path[256];
static char *trace_text;

static void test_child_writes_a_trace(void) {
  snprintf(trace_path, sizeof trace_path, "/tmp/aquila-test-trace-%d.json", (int)getpid());
  unlink(trace_path);
  pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    setenv("AQUILA_TRACE", trace_path, 1);
    setenv("AQUILA_CPU_UNITS", "2", 1);
    execl("/proc/self/exe", "test_trace", "--traced-child", (char *)NULL);
    _exit(127);
  }
  /* Bounded: a child that hangs is killed and fails the case. */
  int status = 0;
  pid_t done = 0;
  for (int i = 0; i < 1200 && (done = waitpid(pid, &status, WNOHANG)) == 0; i++) {
    struct timespec ts = {0, 100 * 1000 * 1000};
    nanosleep(&ts, NULL);
  }
  if (done == 0) {
    kill(pid, SIGKILL);
    waitpid(pid, &status, 0);
  }
  REQUIRE(done == pid);
  CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  FILE *f = fopen(trace_path, "r");
  REQUIRE(f);
  fseek(f, 0, SEEK_END);
  long size = ftell(f);
  fseek(f, 0, SEEK_SET);
  trace_text = calloc(1, (size_t)size + 1);
  REQUIRE(trace_text && fread(trace_text, 1, (size_t)size, f) == (size_t)size);
  fclose(f);
  unlink(trace_path);
}

static void test_trace_is_json(void) {
  REQUIRE(trace_text);
  const char *end = json_value(trace_text, 0);
  CHECK(end && *json_space(end) == '\0');
  CHECK(strncmp(trace_text, "{\"traceEvents\":[", 16) == 0);
  CHECK(strstr(trace_text, "\"dropped_records\":0}"));
}

static void test_one_span_per_command(void) {
  REQUIRE(trace_text);
  /* Each command: a running span and a waiting one. */
  CHECK_EQ_INT(count_of(trace_text, "\"cat\":\"command\",\"name\":\"trace_busy\""), KERNEL_RUNS);
  CHECK_EQ_INT(count_of(trace_text, "\"cat\":\"command waiting\",\"name\":\"trace_busy\""),
               KERNEL_RUNS);
  CHECK_EQ_INT(
      count_of(trace_text, "\"global\":[32768,1,1],\"local\":[64,1,1],\"work_groups\":512"),
      2 * KERNEL_RUNS);
  CHECK_EQ_INT(count_of(trace_text, "\"cat\":\"command\",\"name\":\"write buffer\""), 1);
  CHECK_EQ_INT(count_of(trace_text, "\"cat\":\"command\",\"name\":\"copy buffer\""), 1);
  CHECK_EQ_INT(count_of(trace_text, "\"cat\":\"command\",\"name\":\"read buffer\""), 1);
  CHECK_EQ_INT(count_of(trace_text, "\"cat\":\"command\",\"name\":\"map buffer\""), 1);
  CHECK_EQ_INT(count_of(trace_text, "\"cat\":\"command\",\"name\":\"unmap\""), 1);
  CHECK(count_of(trace_text, "\"bytes\":131072") >= 2 * 3);
  CHECK(row_named(trace_text, "queue 1 (in-order) on Aquila CPU"));
}

static void test_build_and_units(void) {
  REQUIRE(trace_text);
  CHECK_EQ_INT(count_of(trace_text, "\"cat\":\"build\",\"name\":\"clBuildProgram: compile\""), 1);
  /* One code generation (named for its tier when it was the quick one,
   * as with AQUILA_QUICK_TIER_MIN_INSTRUCTIONS=0), and one more load for
   * each vector version built in the background. */
  int background =
      count_of(trace_text, "\"cat\":\"build\",\"name\":\"code generation in the background");
  CHECK_EQ_INT(count_of(trace_text, "\"cat\":\"build\",\"name\":\"load code object\""),
               1 + background);
  CHECK_EQ_INT(count_of(trace_text, "\"cat\":\"build\",\"name\":\"code generation on demand"), 1);
  /* Both units ran work-groups of the kernel: 5 x 512 groups of 2000
   * rounds a work-item are far more than one unit takes before the other
   * wakes. */
  for (int u = 0; u < 2; u++) {
    char name[32], key[64];
    snprintf(name, sizeof name, "CPU unit %d", u);
    unsigned tid = row_named(trace_text, name);
    CHECK(tid != 0);
    snprintf(key, sizeof key, "\"tid\":%u,", tid);
    int spans = count_of(trace_text, key) - 2; /* less its two metadata lines */
    if (spans < 1) printf("  %s ran no work-groups\n", name);
    CHECK(spans >= 1);
  }
  CHECK(count_of(trace_text, "\"cat\":\"work-groups\",\"name\":\"trace_busy\"") >= 2);
  /* The groups the spans cover add up to every group of every run. */
  long groups = 0;
  for (const char *p = strstr(trace_text, "\"cat\":\"work-groups\""); p;
       p = strstr(p + 1, "\"cat\":\"work-groups\"")) {
    const char *g = strstr(p, "\"groups\":");
    if (g) groups += strtol(g + 9, NULL, 10);
  }
  CHECK_EQ_INT(groups, (long)KERNEL_RUNS * GROUPS);
}

int main(int argc, char **argv) {
  if (argc > 1 && !strcmp(argv[1], "--traced-child")) return run_child();
  RUN(test_child_writes_a_trace);
  RUN(test_trace_is_json);
  RUN(test_one_span_per_command);
  RUN(test_build_and_units);
  free(trace_text);
  CHECK_EXIT();
}
