#include "sample.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char *program_name = "sample";

const char *sample_error_name(cl_int err) {
  switch (err) {
#define E(x)                                                                                       \
  case x:                                                                                          \
    return #x;
    E(CL_SUCCESS)
    E(CL_DEVICE_NOT_FOUND)
    E(CL_DEVICE_NOT_AVAILABLE)
    E(CL_COMPILER_NOT_AVAILABLE)
    E(CL_MEM_OBJECT_ALLOCATION_FAILURE)
    E(CL_OUT_OF_RESOURCES)
    E(CL_OUT_OF_HOST_MEMORY)
    E(CL_BUILD_PROGRAM_FAILURE)
    E(CL_INVALID_VALUE)
    E(CL_INVALID_DEVICE_TYPE)
    E(CL_INVALID_PLATFORM)
    E(CL_INVALID_DEVICE)
    E(CL_INVALID_CONTEXT)
    E(CL_INVALID_COMMAND_QUEUE)
    E(CL_INVALID_MEM_OBJECT)
    E(CL_INVALID_IMAGE_FORMAT_DESCRIPTOR)
    E(CL_INVALID_BINARY)
    E(CL_INVALID_BUILD_OPTIONS)
    E(CL_INVALID_PROGRAM)
    E(CL_INVALID_PROGRAM_EXECUTABLE)
    E(CL_INVALID_KERNEL_NAME)
    E(CL_INVALID_KERNEL)
    E(CL_INVALID_ARG_INDEX)
    E(CL_INVALID_ARG_VALUE)
    E(CL_INVALID_ARG_SIZE)
    E(CL_INVALID_KERNEL_ARGS)
    E(CL_INVALID_WORK_DIMENSION)
    E(CL_INVALID_WORK_GROUP_SIZE)
    E(CL_INVALID_WORK_ITEM_SIZE)
    E(CL_INVALID_GLOBAL_OFFSET)
    E(CL_INVALID_EVENT_WAIT_LIST)
    E(CL_INVALID_OPERATION)
    E(CL_INVALID_BUFFER_SIZE)
    E(CL_INVALID_GLOBAL_WORK_SIZE)
#undef E
  default:
    return "unknown error";
  }
}

void sample_check(cl_int err, const char *what, const char *file, int line) {
  if (err == CL_SUCCESS) return;
  fprintf(stderr, "%s: %s:%d: %s failed: %s (%d)\n", program_name, file, line, what,
          sample_error_name(err), err);
  exit(1);
}

static void usage(const char *usage_line, const struct sample_extra_option *extra) {
  fprintf(stderr,
          "usage: %s %s\n"
          "  --platform NAME       first platform whose name contains NAME\n"
          "  --device cpu|gpu|all  device type (default all: the platform's first device)\n"
          "  --size N              problem size\n"
          "  --iterations N        timed repetitions (the median is reported)\n"
          "  --binary FILE         create the program from this binary instead of source\n"
          "  --save-binary FILE    write the built program's binary to FILE\n"
          "  --il FILE             create the program from this SPIR-V module (cl_khr_il_program)\n"
          "  --print-source FILE   write the kernel source, its build options on the first\n"
          "                        line, to FILE and exit (to make SPIR-V of it elsewhere)\n"
          "  --verify/--no-verify  check against the host reference (default on)\n"
          "  --quiet               print nothing unless something fails\n"
          "  --json                print the result as one JSON object\n"
          "  --all-devices         a context of every device of the platform, the queue on the\n"
          "                        first: Aquila may spread a kernel over them (AQUILA_SPREAD=1)\n",
          program_name, usage_line);
  for (const struct sample_extra_option *o = extra; o && o->name; o++)
    fprintf(stderr, "  %-21s %s\n", o->name, o->help);
  exit(2);
}

void sample_parse(int argc, char **argv, const char *usage_line,
                  const struct sample_extra_option *extra, struct sample_options *opts) {
  const char *slash = strrchr(argv[0], '/');
  program_name = slash ? slash + 1 : argv[0];
  *opts = (struct sample_options){.device = CL_DEVICE_TYPE_ALL, .iterations = 1, .verify = 1};
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    const char *next = i + 1 < argc ? argv[i + 1] : NULL;
    if (!strcmp(a, "--verify"))
      opts->verify = 1;
    else if (!strcmp(a, "--no-verify"))
      opts->verify = 0;
    else if (!strcmp(a, "--quiet"))
      opts->quiet = 1;
    else if (!strcmp(a, "--json"))
      opts->json = 1;
    else if (!strcmp(a, "--all-devices"))
      opts->all_devices = 1;
    else if (!next) {
      /* Every remaining option takes a value; extra flags are checked below. */
      int matched = 0;
      for (const struct sample_extra_option *o = extra; o && o->name; o++)
        if (o->kind == SAMPLE_FLAG && !strcmp(a, o->name)) *(int *)o->value = matched = 1;
      if (!matched) usage(usage_line, extra);
    } else if (!strcmp(a, "--platform"))
      opts->platform = argv[++i];
    else if (!strcmp(a, "--binary"))
      opts->binary = argv[++i];
    else if (!strcmp(a, "--save-binary"))
      opts->save_binary = argv[++i];
    else if (!strcmp(a, "--il"))
      opts->il = argv[++i];
    else if (!strcmp(a, "--print-source"))
      opts->print_source = argv[++i];
    else if (!strcmp(a, "--size"))
      opts->size = strtoull(argv[++i], NULL, 0);
    else if (!strcmp(a, "--iterations"))
      opts->iterations = atoi(argv[++i]);
    else if (!strcmp(a, "--device")) {
      const char *d = argv[++i];
      if (!strcmp(d, "cpu"))
        opts->device = CL_DEVICE_TYPE_CPU;
      else if (!strcmp(d, "gpu"))
        opts->device = CL_DEVICE_TYPE_GPU;
      else if (!strcmp(d, "all"))
        opts->device = CL_DEVICE_TYPE_ALL;
      else
        usage(usage_line, extra);
    } else {
      const struct sample_extra_option *o = extra;
      while (o && o->name && strcmp(a, o->name))
        o++;
      if (!o || !o->name) usage(usage_line, extra);
      switch (o->kind) {
      case SAMPLE_FLAG:
        *(int *)o->value = 1;
        break;
      case SAMPLE_INT:
        *(int *)o->value = atoi(argv[++i]);
        break;
      case SAMPLE_SIZE:
        *(size_t *)o->value = strtoull(argv[++i], NULL, 0);
        break;
      case SAMPLE_STRING:
        *(const char **)o->value = argv[++i];
        break;
      }
    }
  }
  if (opts->iterations < 1) usage(usage_line, extra);
}

void sample_init(const struct sample_options *opts, struct sample_cl *cl) {
  memset(cl, 0, sizeof *cl);
  cl_uint num_platforms = 0;
  CHECK_CL(clGetPlatformIDs(0, NULL, &num_platforms));
  cl_platform_id *platforms = calloc(num_platforms, sizeof *platforms);
  CHECK_CL(clGetPlatformIDs(num_platforms, platforms, NULL));
  /* A platform without a device of the requested type is skipped, so --device gpu
   * finds a GPU wherever the loader lists one. */
  for (cl_uint i = 0; i < num_platforms && !cl->device; i++) {
    char name[256];
    CHECK_CL(clGetPlatformInfo(platforms[i], CL_PLATFORM_NAME, sizeof name, name, NULL));
    if (opts->platform && !strstr(name, opts->platform)) continue;
    if (clGetDeviceIDs(platforms[i], opts->device, 1, &cl->device, NULL) == CL_SUCCESS)
      cl->platform = platforms[i];
  }
  free(platforms);
  if (!cl->device) {
    fprintf(stderr, "%s: no %s device on %s\n", program_name,
            opts->device == CL_DEVICE_TYPE_CPU   ? "CPU"
            : opts->device == CL_DEVICE_TYPE_GPU ? "GPU"
                                                 : "OpenCL",
            opts->platform ? opts->platform : "any platform");
    exit(1);
  }
  CHECK_CL(
      clGetDeviceInfo(cl->device, CL_DEVICE_NAME, sizeof cl->device_name, cl->device_name, NULL));
  cl_int err;
  cl->devices[0] = cl->device;
  cl->num_devices = 1;
  if (opts->all_devices) {
    CHECK_CL(clGetDeviceIDs(cl->platform, opts->device, 16, cl->devices, &cl->num_devices));
    if (cl->num_devices > 16) cl->num_devices = 16;
    cl->device = cl->devices[0];
  }
  cl->context = clCreateContext(NULL, cl->num_devices, cl->devices, NULL, NULL, &err);
  CHECK_CL(err);
  cl->queue = clCreateCommandQueue(cl->context, cl->device, 0, &err);
  CHECK_CL(err);
}

void sample_release(struct sample_cl *cl) {
  clReleaseCommandQueue(cl->queue);
  clReleaseContext(cl->context);
}

static unsigned char *read_file(const char *path, size_t *size) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    perror(path);
    exit(1);
  }
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  unsigned char *data = malloc(n > 0 ? (size_t)n : 1);
  if (n < 0 || fread(data, 1, (size_t)n, f) != (size_t)n) {
    fprintf(stderr, "%s: cannot read %s\n", program_name, path);
    exit(1);
  }
  fclose(f);
  *size = (size_t)n;
  return data;
}

static void save_binary(cl_program program, const char *path) {
  /* One device in the context, so one binary. */
  size_t size = 0;
  CHECK_CL(clGetProgramInfo(program, CL_PROGRAM_BINARY_SIZES, sizeof size, &size, NULL));
  unsigned char *data = malloc(size ? size : 1);
  CHECK_CL(clGetProgramInfo(program, CL_PROGRAM_BINARIES, sizeof data, &data, NULL));
  FILE *f = fopen(path, "wb");
  if (!f || fwrite(data, 1, size, f) != size || fclose(f)) {
    fprintf(stderr, "%s: cannot write %s\n", program_name, path);
    exit(1);
  }
  free(data);
}

cl_program sample_build(const struct sample_options *opts, const struct sample_cl *cl,
                        const char *source, const char *build_options, double *build_ms) {
  cl_int err;
  cl_program program;
  if (opts->print_source) {
    FILE *f = fopen(opts->print_source, "w");
    if (!f || fprintf(f, "// options: %s\n%s", build_options ? build_options : "", source) < 0 ||
        fclose(f)) {
      fprintf(stderr, "%s: cannot write %s\n", program_name, opts->print_source);
      exit(1);
    }
    exit(0);
  }
  double t0 = sample_seconds();
  if (opts->il) {
    /* Through the extension's entry point: the samples keep to the 1.2 API. */
    typedef cl_program(CL_API_CALL * create_with_il_fn)(cl_context, const void *, size_t,
                                                         cl_int *);
    create_with_il_fn create_with_il = (create_with_il_fn)clGetExtensionFunctionAddressForPlatform(
        cl->platform, "clCreateProgramWithILKHR");
    if (!create_with_il) {
      fprintf(stderr, "%s: %s does not take SPIR-V (no cl_khr_il_program)\n", program_name,
              cl->device_name);
      exit(1);
    }
    size_t size;
    unsigned char *data = read_file(opts->il, &size);
    program = create_with_il(cl->context, data, size, &err);
    free(data);
    if (err != CL_SUCCESS) {
      fprintf(stderr, "%s: %s is not a SPIR-V module %s takes: %s\n", program_name, opts->il,
              cl->device_name, sample_error_name(err));
      exit(1);
    }
  } else if (opts->binary) {
    size_t size;
    unsigned char *data = read_file(opts->binary, &size);
    cl_int status;
    program = clCreateProgramWithBinary(cl->context, 1, &cl->device, &size,
                                        (const unsigned char **)&data, &status, &err);
    if (err == CL_SUCCESS) err = status;
    free(data);
    if (err != CL_SUCCESS) {
      fprintf(stderr, "%s: %s is not a program binary for %s: %s\n", program_name, opts->binary,
              cl->device_name, sample_error_name(err));
      exit(1);
    }
  } else {
    program = clCreateProgramWithSource(cl->context, 1, &source, NULL, &err);
    CHECK_CL(err);
  }
  /* A binary still needs clBuildProgram: the platform may finish code generation here. */
  err = opts->binary
            ? clBuildProgram(program, 1, &cl->device, build_options, NULL, NULL)
            : clBuildProgram(program, cl->num_devices, cl->devices, build_options, NULL, NULL);
  if (build_ms) *build_ms = (sample_seconds() - t0) * 1e3;
  if (err != CL_SUCCESS) {
    size_t size = 0;
    clGetProgramBuildInfo(program, cl->device, CL_PROGRAM_BUILD_LOG, 0, NULL, &size);
    char *log = calloc(size + 1, 1);
    clGetProgramBuildInfo(program, cl->device, CL_PROGRAM_BUILD_LOG, size, log, NULL);
    fprintf(stderr, "%s: build failed: %s\n%s\n", program_name, sample_error_name(err), log);
    exit(1);
  }
  if (opts->save_binary) save_binary(program, opts->save_binary);
  return program;
}

cl_kernel sample_kernel(cl_program program, const char *name) {
  cl_int err;
  cl_kernel kernel = clCreateKernel(program, name, &err);
  CHECK_CL(err);
  return kernel;
}

cl_mem sample_buffer(const struct sample_cl *cl, cl_mem_flags flags, size_t bytes, void *host) {
  cl_int err;
  cl_mem mem = clCreateBuffer(cl->context, flags, bytes, host, &err);
  CHECK_CL(err);
  return mem;
}

double sample_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int compare_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

double sample_median(double *values, int n) {
  qsort(values, (size_t)n, sizeof *values, compare_double);
  return n % 2 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

static void json_string(const char *s) {
  putchar('"');
  for (; *s; s++) {
    if (*s == '"' || *s == '\\')
      printf("\\%c", *s);
    else if ((unsigned char)*s < 0x20)
      printf("\\u%04x", *s);
    else
      putchar(*s);
  }
  putchar('"');
}

int sample_report(const struct sample_options *opts, const struct sample_cl *cl,
                  const struct sample_result *r) {
  const char *status = r->verified > 0 ? "verified" : r->verified == 0 ? "FAILED" : "unchecked";
  if (opts->json) {
    printf("{\"sample\": ");
    json_string(r->name);
    printf(", \"device\": ");
    json_string(cl->device_name);
    printf(", \"size\": ");
    json_string(r->size);
    printf(", \"iterations\": %d, \"build_ms\": %.3f, \"time_ms\": %.4f", opts->iterations,
           r->build_ms, r->time_ms);
    if (r->rate_unit) {
      printf(", \"rate\": %.4f, \"rate_unit\": ", r->rate);
      json_string(r->rate_unit);
    }
    printf(", \"status\": \"%s\"}\n", status);
  } else if (!opts->quiet || r->verified == 0) {
    printf("%s: %s on %s: build %.1f ms, time %.3f ms", r->name, r->size, cl->device_name,
           r->build_ms, r->time_ms);
    if (r->rate_unit) printf(" (%.2f %s)", r->rate, r->rate_unit);
    printf(": %s\n", status);
  }
  return r->verified == 0 ? 1 : 0;
}

void sample_fill_random(float *a, size_t n, float lo, float hi, unsigned seed) {
  /* A small LCG rather than rand(): the same data on every C library. */
  unsigned long long s = seed * 6364136223846793005ULL + 1442695040888963407ULL;
  for (size_t i = 0; i < n; i++) {
    s = s * 6364136223846793005ULL + 1442695040888963407ULL;
    a[i] = lo + (hi - lo) * (float)((s >> 40) * (1.0 / 16777216.0));
  }
}
