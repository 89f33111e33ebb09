/* Shared plumbing for the samples: command line, platform/device choice, program
 * creation (from source or from a prebuilt binary), timing and the result line.
 *
 * Everything here uses only the Khronos OpenCL 1.2 API, so the samples run on any
 * conforming platform. Errors are fatal: a sample prints what failed and exits 1. */
#ifndef SAMPLE_H
#define SAMPLE_H

#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <stddef.h>

/* Options every sample understands. */
struct sample_options {
  const char *platform;    /* --platform NAME: substring of CL_PLATFORM_NAME */
  cl_device_type device;   /* --device cpu|gpu|all */
  size_t size;             /* --size N (0: the sample's default) */
  int iterations;          /* --iterations N: timed repetitions */
  const char *binary;      /* --binary FILE: program binary instead of source */
  const char *save_binary; /* --save-binary FILE: write the built program's binary */
  const char *il;          /* --il FILE: a SPIR-V module instead of source (cl_khr_il_program) */
  const char *print_source; /* --print-source FILE: write the kernel source and its build
                               options (first line, a comment) to FILE and exit */
  int verify;              /* --verify / --no-verify */
  int quiet;               /* --quiet: print nothing on success */
  int json;                /* --json: one JSON object on stdout */
  int all_devices;         /* --all-devices: every device of the platform in the context */
};

/* A sample-specific option: flags set *int to 1; the others parse the next argument. */
enum sample_option_kind { SAMPLE_FLAG, SAMPLE_INT, SAMPLE_SIZE, SAMPLE_STRING };
struct sample_extra_option {
  const char *name; /* "--local" */
  enum sample_option_kind kind;
  void *value; /* int *, size_t *, or const char ** */
  const char *help;
};

struct sample_cl {
  cl_platform_id platform;
  cl_device_id device;
  cl_context context;
  cl_command_queue queue;
  char device_name[256];
  cl_uint num_devices; /* in the context (--all-devices: all of the platform's) */
  cl_device_id devices[16];
};

/* Parses argv; extra may be NULL or ends with a zeroed entry. Prints usage and exits 2
 * on a bad argument. */
void sample_parse(int argc, char **argv, const char *usage_line,
                  const struct sample_extra_option *extra, struct sample_options *opts);

/* Picks the first device of the requested type on the first matching platform and
 * creates a context and an in-order queue on it. */
void sample_init(const struct sample_options *opts, struct sample_cl *cl);
void sample_release(struct sample_cl *cl);

/* Creates and builds the program from source, opts->binary or opts->il; on a build
 * failure prints the build log and exits. *build_ms receives the build time. */
cl_program sample_build(const struct sample_options *opts, const struct sample_cl *cl,
                        const char *source, const char *build_options, double *build_ms);

cl_kernel sample_kernel(cl_program program, const char *name);
cl_mem sample_buffer(const struct sample_cl *cl, cl_mem_flags flags, size_t bytes, void *host);

/* Aborts with the call's text when err is not CL_SUCCESS. */
#define CHECK_CL(call) sample_check((call), #call, __FILE__, __LINE__)
void sample_check(cl_int err, const char *what, const char *file, int line);
const char *sample_error_name(cl_int err);

double sample_seconds(void);
/* Median of n values (reorders them). */
double sample_median(double *values, int n);

/* What a sample measured: time is the median of the timed iterations. */
struct sample_result {
  const char *name;      /* "NBody" */
  char size[64];         /* "16384 bodies" */
  double build_ms;       /* program build (or load) time */
  double time_ms;        /* median time of one iteration */
  double rate;           /* throughput in rate_unit, 0 if none */
  const char *rate_unit; /* "GFLOP/s", "GB/s", ... */
  int verified;          /* 1 verified, 0 mismatch, -1 not checked */
};

/* Prints the result (text or JSON per opts) and returns the process exit status. */
int sample_report(const struct sample_options *opts, const struct sample_cl *cl,
                  const struct sample_result *r);

/* Fills a with uniform values in [lo, hi) from a fixed seed, so runs are repeatable. */
void sample_fill_random(float *a, size_t n, float lo, float hi, unsigned seed);

/* Rounds x up to a multiple of m. */
static inline size_t sample_round_up(size_t x, size_t m) {
  return (x + m - 1) / m * m;
}

#endif
