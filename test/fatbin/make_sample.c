/* Writes sample fat binaries for the clfatbin shell test and the fuzzer's
 * seed corpus, without needing the compiler:
 *   make_sample program OUT [TARGET...]   the sample program (default targets)
 *   make_sample other OUT [TARGET...]     a different program
 *   make_sample corpus DIR                good and bad images, one per file */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "sample.h"

static int write_file(const char *path, const void *data, size_t size) {
  FILE *f = fopen(path, "wb");
  if (!f) {
    fprintf(stderr, "make_sample: %s: %s\n", path, strerror(errno));
    return -1;
  }
  int ok = (size == 0 || fwrite(data, 1, size, f) == size);
  if (fclose(f) != 0) ok = 0;
  if (!ok) fprintf(stderr, "make_sample: %s: write failed\n", path);
  return ok ? 0 : -1;
}

static int write_program(const char *path, char **targets, int num_targets, int other) {
  struct aquila_fatbin *fb =
      sample_program(num_targets ? (const char *const *)targets : NULL, (size_t)num_targets, other);
  void *data = NULL;
  size_t size = 0;
  if (!fb || aquila_fatbin_write(fb, &data, &size)) {
    fprintf(stderr, "make_sample: cannot make the sample program\n");
    aquila_fatbin_destroy(fb);
    return 1;
  }
  int rc = write_file(path, data, size) ? 1 : 0;
  free(data);
  aquila_fatbin_destroy(fb);
  return rc;
}

static int write_corpus(const char *dir) {
  if (mkdir(dir, 0755) != 0 && errno != EEXIST) {
    fprintf(stderr, "make_sample: %s: %s\n", dir, strerror(errno));
    return 1;
  }
  void *good = NULL;
  size_t good_size = 0;
  if (sample_image(&good, &good_size)) return 1;
  char path[4096];
  snprintf(path, sizeof path, "%s/good.fatbin", dir);
  int rc = write_file(path, good, good_size) ? 1 : 0;
  unsigned char *img = malloc(good_size);
  for (size_t i = 0; img && i < SAMPLE_NUM_BAD_CASES; i++) {
    memcpy(img, good, good_size);
    size_t size = good_size;
    if (sample_bad_cases[i].make(img, &size)) {
      fprintf(stderr, "make_sample: cannot make bad case %s\n", sample_bad_cases[i].name);
      rc = 1;
      continue;
    }
    snprintf(path, sizeof path, "%s/bad-%s.fatbin", dir, sample_bad_cases[i].name);
    if (write_file(path, img, size)) rc = 1;
  }
  if (!img) rc = 1;
  free(img);
  free(good);
  return rc;
}

int main(int argc, char **argv) {
  if (argc >= 3 && strcmp(argv[1], "program") == 0)
    return write_program(argv[2], argv + 3, argc - 3, 0);
  if (argc >= 3 && strcmp(argv[1], "other") == 0)
    return write_program(argv[2], argv + 3, argc - 3, 1);
  if (argc == 3 && (strcmp(argv[1], "corpus") == 0 || strcmp(argv[1], "--corpus") == 0))
    return write_corpus(argv[2]);
  fprintf(stderr, "usage: make_sample program|other OUT [TARGET...] | corpus DIR\n");
  return 2;
}
