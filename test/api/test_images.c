/* Images and samplers on the CPU device: device limits, formats, creation
 * of every geometry with its errors, clGetImageInfo, host pointers and
 * pitches, read/write/copy/fill/map, image <-> buffer copies, 1D buffer
 * images, samplers, and kernels that sample, read without a sampler, write
 * and query images (compared with host references). */
#include <math.h>

#include "api.h"

static const cl_image_format rgba8 = {CL_RGBA, CL_UNORM_INT8};
static const cl_image_format rgbaf = {CL_RGBA, CL_FLOAT};
static const cl_image_format rgbaui = {CL_RGBA, CL_UNSIGNED_INT32};

static cl_mem make_image(cl_mem_object_type type, const cl_image_format *f, size_t w, size_t h,
                         size_t d, size_t layers, cl_mem_flags flags, void *host, size_t row,
                         size_t slice, cl_int *err) {
  cl_image_desc desc = {0};
  desc.image_type = type;
  desc.image_width = w;
  desc.image_height = h;
  desc.image_depth = d;
  desc.image_array_size = layers;
  desc.image_row_pitch = row;
  desc.image_slice_pitch = slice;
  return clCreateImage(context, flags, f, &desc, host, err);
}

static size_t image_info(cl_mem m, cl_image_info p) {
  size_t v = 12345;
  clGetImageInfo(m, p, sizeof v, &v, NULL);
  return v;
}

static void device_queries(void) {
  cl_bool b = CL_FALSE;
  clGetDeviceInfo(device, CL_DEVICE_IMAGE_SUPPORT, sizeof b, &b, NULL);
  CHECK_EQ_INT(b, CL_TRUE);
  /* The specification's minimums for a device with images. */
  static const struct {
    cl_device_info p;
    size_t min;
  } sizes[] = {
      {CL_DEVICE_IMAGE2D_MAX_WIDTH, 8192},    {CL_DEVICE_IMAGE2D_MAX_HEIGHT, 8192},
      {CL_DEVICE_IMAGE3D_MAX_WIDTH, 2048},    {CL_DEVICE_IMAGE3D_MAX_HEIGHT, 2048},
      {CL_DEVICE_IMAGE3D_MAX_DEPTH, 2048},    {CL_DEVICE_IMAGE_MAX_BUFFER_SIZE, 65536},
      {CL_DEVICE_IMAGE_MAX_ARRAY_SIZE, 2048},
  };
  for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
    size_t v = 0;
    CHECK_EQ_INT(clGetDeviceInfo(device, sizes[i].p, sizeof v, &v, NULL), CL_SUCCESS);
    CHECK(v >= sizes[i].min);
  }
  cl_uint n = 0;
  clGetDeviceInfo(device, CL_DEVICE_MAX_READ_IMAGE_ARGS, sizeof n, &n, NULL);
  CHECK(n >= 128);
  clGetDeviceInfo(device, CL_DEVICE_MAX_WRITE_IMAGE_ARGS, sizeof n, &n, NULL);
  CHECK(n >= 8);
  clGetDeviceInfo(device, CL_DEVICE_MAX_SAMPLERS, sizeof n, &n, NULL);
  CHECK(n >= 16);
  char ext[2048] = "";
  clGetDeviceInfo(device, CL_DEVICE_EXTENSIONS, sizeof ext, ext, NULL);
  CHECK(strstr(ext, "cl_khr_3d_image_writes") != NULL);
}

static int has_format(const cl_image_format *list, cl_uint n, cl_channel_order o,
                      cl_channel_type t) {
  for (cl_uint i = 0; i < n; i++)
    if (list[i].image_channel_order == o && list[i].image_channel_data_type == t) return 1;
  return 0;
}

static void supported_formats(void) {
  static const cl_mem_object_type types[] = {
      CL_MEM_OBJECT_IMAGE1D, CL_MEM_OBJECT_IMAGE1D_BUFFER, CL_MEM_OBJECT_IMAGE1D_ARRAY,
      CL_MEM_OBJECT_IMAGE2D, CL_MEM_OBJECT_IMAGE2D_ARRAY,  CL_MEM_OBJECT_IMAGE3D};
  static const cl_mem_flags flags[] = {CL_MEM_READ_WRITE, CL_MEM_READ_ONLY, CL_MEM_WRITE_ONLY};
  /* The formats every image device supports (OpenCL 1.2 table 5.8). */
  static const cl_channel_type rgba_types[] = {
      CL_UNORM_INT8,    CL_UNORM_INT16,    CL_SIGNED_INT8,    CL_SIGNED_INT16, CL_SIGNED_INT32,
      CL_UNSIGNED_INT8, CL_UNSIGNED_INT16, CL_UNSIGNED_INT32, CL_HALF_FLOAT,   CL_FLOAT};
  for (size_t t = 0; t < 6; t++)
    for (size_t f = 0; f < 3; f++) {
      cl_uint n = 0;
      CHECK_EQ_INT(clGetSupportedImageFormats(context, flags[f], types[t], 0, NULL, &n),
                   CL_SUCCESS);
      REQUIRE(n > 0 && n < 1000);
      cl_image_format *list = calloc(n, sizeof *list);
      cl_uint n2 = 0;
      CHECK_EQ_INT(clGetSupportedImageFormats(context, flags[f], types[t], n, list, &n2),
                   CL_SUCCESS);
      CHECK_EQ_INT(n2, n);
      for (size_t i = 0; i < sizeof rgba_types / sizeof rgba_types[0]; i++)
        CHECK(has_format(list, n, CL_RGBA, rgba_types[i]));
      CHECK(has_format(list, n, CL_BGRA, CL_UNORM_INT8));
      /* Invalid combinations are never listed. */
      CHECK(!has_format(list, n, CL_BGRA, CL_FLOAT));
      CHECK(!has_format(list, n, CL_RGB, CL_UNORM_INT8));
      /* Every listed format can be created. */
      for (cl_uint i = 0; i < n; i++) {
        cl_int err = 1;
        cl_mem m = NULL;
        if (types[t] == CL_MEM_OBJECT_IMAGE1D_BUFFER) {
          cl_mem b = clCreateBuffer(context, CL_MEM_READ_WRITE, 256, NULL, &err);
          cl_image_desc d = {.image_type = types[t], .image_width = 4, .buffer = b};
          m = clCreateImage(context, flags[f], &list[i], &d, NULL, &err);
          clReleaseMemObject(b);
        } else {
          m = make_image(types[t], &list[i], 4, 3, 2, 2, flags[f], NULL, 0, 0, &err);
        }
        if (err != CL_SUCCESS)
          printf("  type 0x%x format 0x%x/0x%x: %d\n", (unsigned)types[t],
                 list[i].image_channel_order, list[i].image_channel_data_type, err);
        CHECK_EQ_INT(err, CL_SUCCESS);
        if (m) clReleaseMemObject(m);
      }
      free(list);
    }
  cl_uint n = 0;
  cl_image_format one;
  CHECK_EQ_INT(clGetSupportedImageFormats(NULL, 0, CL_MEM_OBJECT_IMAGE2D, 0, NULL, &n),
               CL_INVALID_CONTEXT);
  CHECK_EQ_INT(
      clGetSupportedImageFormats(context, CL_MEM_READ_WRITE, CL_MEM_OBJECT_BUFFER, 0, NULL, &n),
      CL_INVALID_VALUE);
  CHECK_EQ_INT(clGetSupportedImageFormats(context, CL_MEM_READ_ONLY | CL_MEM_WRITE_ONLY,
                                          CL_MEM_OBJECT_IMAGE2D, 0, NULL, &n),
               CL_INVALID_VALUE);
  CHECK_EQ_INT(clGetSupportedImageFormats(context, 0, CL_MEM_OBJECT_IMAGE2D, 0, &one, &n),
               CL_INVALID_VALUE);
}

/* Every geometry: creation and what clGetImageInfo / clGetMemObjectInfo say. */
static void create_and_info(void) {
  static const struct {
    cl_mem_object_type type;
    size_t w, h, d, layers;          /* given */
    size_t ih, id, ia, slice, total; /* expected height/depth/array size/slice pitch/size */
  } cases[] = {
      {CL_MEM_OBJECT_IMAGE1D, 17, 0, 0, 0, 0, 0, 0, 0, 17 * 4},
      {CL_MEM_OBJECT_IMAGE1D_ARRAY, 17, 0, 0, 3, 0, 0, 3, 17 * 4, 17 * 4 * 3},
      {CL_MEM_OBJECT_IMAGE2D, 17, 5, 0, 0, 5, 0, 0, 0, 17 * 4 * 5},
      {CL_MEM_OBJECT_IMAGE2D_ARRAY, 17, 5, 0, 3, 5, 0, 3, 17 * 4 * 5, 17 * 4 * 5 * 3},
      {CL_MEM_OBJECT_IMAGE3D, 17, 5, 2, 0, 5, 2, 0, 17 * 4 * 5, 17 * 4 * 5 * 2},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    cl_int err = 1;
    cl_mem m = make_image(cases[i].type, &rgba8, cases[i].w, cases[i].h, cases[i].d,
                          cases[i].layers, CL_MEM_READ_WRITE, NULL, 0, 0, &err);
    CHECK_EQ_INT(err, CL_SUCCESS);
    if (!m) continue;
    cl_image_format f = {0, 0};
    CHECK_EQ_INT(clGetImageInfo(m, CL_IMAGE_FORMAT, sizeof f, &f, NULL), CL_SUCCESS);
    CHECK(f.image_channel_order == CL_RGBA && f.image_channel_data_type == CL_UNORM_INT8);
    CHECK_EQ_INT(image_info(m, CL_IMAGE_ELEMENT_SIZE), 4);
    CHECK_EQ_INT(image_info(m, CL_IMAGE_ROW_PITCH), 17 * 4);
    CHECK_EQ_INT(image_info(m, CL_IMAGE_SLICE_PITCH), cases[i].slice);
    CHECK_EQ_INT(image_info(m, CL_IMAGE_WIDTH), 17);
    CHECK_EQ_INT(image_info(m, CL_IMAGE_HEIGHT), cases[i].ih);
    CHECK_EQ_INT(image_info(m, CL_IMAGE_DEPTH), cases[i].id);
    CHECK_EQ_INT(image_info(m, CL_IMAGE_ARRAY_SIZE), cases[i].ia);
    cl_mem buf = (cl_mem)1;
    CHECK_EQ_INT(clGetImageInfo(m, CL_IMAGE_BUFFER, sizeof buf, &buf, NULL), CL_SUCCESS);
    CHECK(buf == NULL);
    cl_uint u = 7;
    CHECK_EQ_INT(clGetImageInfo(m, CL_IMAGE_NUM_MIP_LEVELS, sizeof u, &u, NULL), CL_SUCCESS);
    CHECK_EQ_INT(u, 0);
    CHECK_EQ_INT(clGetImageInfo(m, CL_IMAGE_NUM_SAMPLES, sizeof u, &u, NULL), CL_SUCCESS);
    CHECK_EQ_INT(u, 0);
    size_t sz = 0;
    CHECK_EQ_INT(clGetImageInfo(m, CL_IMAGE_WIDTH, 0, NULL, &sz), CL_SUCCESS);
    CHECK_EQ_INT(sz, sizeof(size_t));
    CHECK_EQ_INT(clGetImageInfo(m, CL_IMAGE_WIDTH, 1, &sz, NULL), CL_INVALID_VALUE);
    CHECK_EQ_INT(clGetImageInfo(m, CL_MEM_TYPE, sizeof sz, &sz, NULL), CL_INVALID_VALUE);
    cl_mem_object_type type = 0;
    clGetMemObjectInfo(m, CL_MEM_TYPE, sizeof type, &type, NULL);
    CHECK_EQ_INT(type, cases[i].type);
    clGetMemObjectInfo(m, CL_MEM_SIZE, sizeof sz, &sz, NULL);
    CHECK_EQ_INT(sz, cases[i].total);
    cl_mem_flags fl = 0;
    clGetMemObjectInfo(m, CL_MEM_FLAGS, sizeof fl, &fl, NULL);
    CHECK_EQ_INT(fl, CL_MEM_READ_WRITE);
    cl_context c = NULL;
    clGetMemObjectInfo(m, CL_MEM_CONTEXT, sizeof c, &c, NULL);
    CHECK(c == context);
    CHECK_EQ_INT(ref_count_of_mem(m), 1);
    CHECK_EQ_INT(clReleaseMemObject(m), CL_SUCCESS);
  }
  /* Buffers are not images. */
  cl_int err;
  cl_mem b = clCreateBuffer(context, CL_MEM_READ_WRITE, 64, NULL, &err);
  size_t v;
  CHECK_EQ_INT(clGetImageInfo(b, CL_IMAGE_WIDTH, sizeof v, &v, NULL), CL_INVALID_MEM_OBJECT);
  CHECK_EQ_INT(clGetImageInfo(NULL, CL_IMAGE_WIDTH, sizeof v, &v, NULL), CL_INVALID_MEM_OBJECT);
  clReleaseMemObject(b);
}

#define EXPECT_CREATE(expr, code)                                                                  \
  do {                                                                                             \
    cl_int e_ = 1;                                                                                 \
    cl_mem m_ = (expr);                                                                            \
    (void)e_;                                                                                      \
    CHECK(m_ == NULL);                                                                             \
    if (m_) clReleaseMemObject(m_);                                                                \
    CHECK_EQ_INT(err, code);                                                                       \
  } while (0)

static void create_errors(void) {
  cl_int err;
  char host[4096];
  cl_image_desc d2 = {.image_type = CL_MEM_OBJECT_IMAGE2D, .image_width = 4, .image_height = 4};
  cl_image_format bad_order = {0x1234, CL_UNORM_INT8}, bad_type = {CL_RGBA, 0x1234},
                  rgb8 = {CL_RGB, CL_UNORM_INT8}, bgra_f = {CL_BGRA, CL_FLOAT},
                  int_i = {CL_INTENSITY, CL_SIGNED_INT8}, r565 = {CL_R, CL_UNORM_SHORT_565};
  EXPECT_CREATE(clCreateImage(NULL, 0, &rgba8, &d2, NULL, &err), CL_INVALID_CONTEXT);
  EXPECT_CREATE(clCreateImage((cl_context)queue, 0, &rgba8, &d2, NULL, &err), CL_INVALID_CONTEXT);
  EXPECT_CREATE(
      clCreateImage(context, CL_MEM_READ_ONLY | CL_MEM_WRITE_ONLY, &rgba8, &d2, NULL, &err),
      CL_INVALID_VALUE);
  EXPECT_CREATE(clCreateImage(context, (cl_mem_flags)1 << 40, &rgba8, &d2, NULL, &err),
                CL_INVALID_VALUE);
  /* Flags come before the format, the format before the descriptor. */
  EXPECT_CREATE(
      clCreateImage(context, CL_MEM_READ_ONLY | CL_MEM_WRITE_ONLY, NULL, NULL, NULL, &err),
      CL_INVALID_VALUE);
  EXPECT_CREATE(clCreateImage(context, 0, NULL, &d2, NULL, &err),
                CL_INVALID_IMAGE_FORMAT_DESCRIPTOR);
  const cl_image_format *bad_formats[] = {&bad_order, &bad_type, &rgb8, &bgra_f, &int_i, &r565};
  for (size_t i = 0; i < 6; i++)
    EXPECT_CREATE(clCreateImage(context, 0, bad_formats[i], NULL, NULL, &err),
                  CL_INVALID_IMAGE_FORMAT_DESCRIPTOR);
  EXPECT_CREATE(clCreateImage(context, 0, &rgba8, NULL, NULL, &err), CL_INVALID_IMAGE_DESCRIPTOR);
  /* Descriptor errors. */
  struct {
    cl_image_desc d;
    void *host;
  } bad_desc[] = {
      {{.image_type = CL_MEM_OBJECT_BUFFER, .image_width = 4, .image_height = 4}, NULL},
      {{.image_type = CL_MEM_OBJECT_IMAGE2D, .image_width = 0, .image_height = 4}, NULL},
      {{.image_type = CL_MEM_OBJECT_IMAGE2D, .image_width = 4, .image_height = 0}, NULL},
      {{.image_type = CL_MEM_OBJECT_IMAGE3D, .image_width = 4, .image_height = 4}, NULL},
      {{.image_type = CL_MEM_OBJECT_IMAGE2D_ARRAY, .image_width = 4, .image_height = 4}, NULL},
      {{.image_type = CL_MEM_OBJECT_IMAGE1D_ARRAY, .image_width = 4}, NULL},
      {{.image_type = CL_MEM_OBJECT_IMAGE1D_BUFFER, .image_width = 4}, NULL},
      {{.image_type = CL_MEM_OBJECT_IMAGE2D,
        .image_width = 4,
        .image_height = 4,
        .num_mip_levels = 1},
       NULL},
      {{.image_type = CL_MEM_OBJECT_IMAGE2D, .image_width = 4, .image_height = 4, .num_samples = 2},
       NULL},
      /* pitches without a host pointer */
      {{.image_type = CL_MEM_OBJECT_IMAGE2D,
        .image_width = 4,
        .image_height = 4,
        .image_row_pitch = 64},
       NULL},
      /* a row pitch under a row, or not a multiple of the element size */
      {{.image_type = CL_MEM_OBJECT_IMAGE2D,
        .image_width = 4,
        .image_height = 4,
        .image_row_pitch = 12},
       host},
      {{.image_type = CL_MEM_OBJECT_IMAGE2D,
        .image_width = 4,
        .image_height = 4,
        .image_row_pitch = 18},
       host},
      /* a slice pitch under a slice, or not a multiple of the row pitch */
      {{.image_type = CL_MEM_OBJECT_IMAGE3D,
        .image_width = 4,
        .image_height = 4,
        .image_depth = 2,
        .image_slice_pitch = 60},
       host},
      {{.image_type = CL_MEM_OBJECT_IMAGE3D,
        .image_width = 4,
        .image_height = 4,
        .image_depth = 2,
        .image_slice_pitch = 68},
       host},
      {{.image_type = CL_MEM_OBJECT_IMAGE1D_ARRAY,
        .image_width = 4,
        .image_array_size = 2,
        .image_slice_pitch = 8},
       host},
  };
  for (size_t i = 0; i < sizeof bad_desc / sizeof bad_desc[0]; i++) {
    cl_mem_flags f = bad_desc[i].host ? CL_MEM_USE_HOST_PTR : 0;
    EXPECT_CREATE(clCreateImage(context, f, &rgba8, &bad_desc[i].d, bad_desc[i].host, &err),
                  CL_INVALID_IMAGE_DESCRIPTOR);
    if (err != CL_INVALID_IMAGE_DESCRIPTOR) printf("  descriptor case %zu\n", i);
  }
  /* A buffer image wider than its buffer, or over a non-buffer. */
  cl_mem b = clCreateBuffer(context, CL_MEM_READ_WRITE, 64, NULL, &err);
  cl_image_desc db = {.image_type = CL_MEM_OBJECT_IMAGE1D_BUFFER, .image_width = 17, .buffer = b};
  EXPECT_CREATE(clCreateImage(context, 0, &rgba8, &db, NULL, &err), CL_INVALID_IMAGE_DESCRIPTOR);
  /* The buffer's row pitch may come along with a buffer image (as the CTS
   * passes it); it describes the buffer, not host memory. */
  db.image_width = 16;
  db.image_row_pitch = 64;
  cl_mem pitched = clCreateImage(context, 0, &rgba8, &db, NULL, &err);
  CHECK_EQ_INT(err, CL_SUCCESS);
  size_t pitch = 0;
  if (pitched) {
    CHECK_EQ_INT(clGetImageInfo(pitched, CL_IMAGE_ROW_PITCH, sizeof pitch, &pitch, NULL),
                 CL_SUCCESS);
    CHECK_EQ_INT(pitch, 64);
    clReleaseMemObject(pitched);
  }
  db.image_row_pitch = 0;
  cl_mem img = make_image(CL_MEM_OBJECT_IMAGE2D, &rgba8, 4, 4, 0, 0, 0, NULL, 0, 0, &err);
  db.image_width = 4;
  db.buffer = img;
  EXPECT_CREATE(clCreateImage(context, 0, &rgba8, &db, NULL, &err), CL_INVALID_IMAGE_DESCRIPTOR);
  /* A buffer only for buffer images: a 2D image over one (optional in
   * OpenCL 3.0, CL_DEVICE_IMAGE_PITCH_ALIGNMENT 0 here) is an operation
   * this device does not have, as the CTS's test_api expects. */
  cl_image_desc d2b = d2;
  d2b.buffer = b;
  EXPECT_CREATE(clCreateImage(context, 0, &rgba8, &d2b, NULL, &err), CL_INVALID_OPERATION);
  /* Sizes over the device's limits. */
  size_t max2d = 0, max3d = 0, max_array = 0, max_buf = 0;
  clGetDeviceInfo(device, CL_DEVICE_IMAGE2D_MAX_WIDTH, sizeof max2d, &max2d, NULL);
  clGetDeviceInfo(device, CL_DEVICE_IMAGE3D_MAX_DEPTH, sizeof max3d, &max3d, NULL);
  clGetDeviceInfo(device, CL_DEVICE_IMAGE_MAX_ARRAY_SIZE, sizeof max_array, &max_array, NULL);
  clGetDeviceInfo(device, CL_DEVICE_IMAGE_MAX_BUFFER_SIZE, sizeof max_buf, &max_buf, NULL);
  EXPECT_CREATE(make_image(CL_MEM_OBJECT_IMAGE2D, &rgba8, max2d + 1, 1, 0, 0, 0, NULL, 0, 0, &err),
                CL_INVALID_IMAGE_SIZE);
  EXPECT_CREATE(make_image(CL_MEM_OBJECT_IMAGE1D, &rgba8, max2d + 1, 0, 0, 0, 0, NULL, 0, 0, &err),
                CL_INVALID_IMAGE_SIZE);
  EXPECT_CREATE(make_image(CL_MEM_OBJECT_IMAGE3D, &rgba8, 1, 1, max3d + 1, 0, 0, NULL, 0, 0, &err),
                CL_INVALID_IMAGE_SIZE);
  EXPECT_CREATE(
      make_image(CL_MEM_OBJECT_IMAGE2D_ARRAY, &rgba8, 1, 1, 0, max_array + 1, 0, NULL, 0, 0, &err),
      CL_INVALID_IMAGE_SIZE);
  /* Host pointer rules. */
  EXPECT_CREATE(clCreateImage(context, CL_MEM_USE_HOST_PTR, &rgba8, &d2, NULL, &err),
                CL_INVALID_HOST_PTR);
  EXPECT_CREATE(clCreateImage(context, CL_MEM_COPY_HOST_PTR, &rgba8, &d2, NULL, &err),
                CL_INVALID_HOST_PTR);
  EXPECT_CREATE(clCreateImage(context, 0, &rgba8, &d2, host, &err), CL_INVALID_HOST_PTR);
  /* A float image's memory must hold aligned floats. */
  EXPECT_CREATE(clCreateImage(context, CL_MEM_USE_HOST_PTR, &rgbaf, &d2, host + 1, &err),
                CL_INVALID_HOST_PTR);
  /* Buffer images: no host pointer flags, no access wider than the buffer's. */
  db.buffer = b;
  EXPECT_CREATE(clCreateImage(context, CL_MEM_ALLOC_HOST_PTR, &rgba8, &db, NULL, &err),
                CL_INVALID_VALUE);
  cl_mem rob = clCreateBuffer(context, CL_MEM_READ_ONLY, 64, NULL, &err);
  db.buffer = rob;
  EXPECT_CREATE(clCreateImage(context, CL_MEM_WRITE_ONLY, &rgba8, &db, NULL, &err),
                CL_INVALID_VALUE);
  clReleaseMemObject(rob);
  clReleaseMemObject(img);
  clReleaseMemObject(b);
}

static void legacy_entry_points(void) {
  cl_int err = 1;
  cl_mem m = clCreateImage2D(context, CL_MEM_READ_WRITE, &rgba8, 8, 4, 0, NULL, &err);
  CHECK_EQ_INT(err, CL_SUCCESS);
  if (m) {
    CHECK_EQ_INT(image_info(m, CL_IMAGE_HEIGHT), 4);
    clReleaseMemObject(m);
  }
  m = clCreateImage3D(context, CL_MEM_READ_WRITE, &rgba8, 8, 4, 3, 0, 0, NULL, &err);
  CHECK_EQ_INT(err, CL_SUCCESS);
  if (m) {
    CHECK_EQ_INT(image_info(m, CL_IMAGE_DEPTH), 3);
    CHECK_EQ_INT(image_info(m, CL_IMAGE_SLICE_PITCH), 8 * 4 * 4);
    clReleaseMemObject(m);
  }
  /* OpenCL 1.1 reports sizes and pitches as CL_INVALID_IMAGE_SIZE. */
  EXPECT_CREATE(clCreateImage2D(context, 0, &rgba8, 0, 4, 0, NULL, &err), CL_INVALID_IMAGE_SIZE);
  EXPECT_CREATE(clCreateImage3D(context, 0, &rgba8, 4, 4, 1, 0, 0, NULL, &err),
                CL_INVALID_IMAGE_SIZE);
  char host[256];
  EXPECT_CREATE(clCreateImage2D(context, CL_MEM_USE_HOST_PTR, &rgba8, 4, 4, 8, host, &err),
                CL_INVALID_IMAGE_SIZE);
  EXPECT_CREATE(clCreateImage2D(context, 0, NULL, 4, 4, 0, NULL, &err),
                CL_INVALID_IMAGE_FORMAT_DESCRIPTOR);
}

/* Fills a host array with a recognizable pattern. */
static void pattern(unsigned char *p, size_t n, unsigned seed) {
  for (size_t i = 0; i < n; i++)
    p[i] = (unsigned char)(i * 7 + seed * 13 + (i >> 8));
}

static void host_ptr_modes(void) {
  /* A 2D image over host memory with a padded row pitch. */
  enum { W = 5, H = 3, ROW = 32 };
  cl_int err;
  _Alignas(16) unsigned char host[ROW * H];
  pattern(host, sizeof host, 1);
  cl_mem m = make_image(CL_MEM_OBJECT_IMAGE2D, &rgba8, W, H, 0, 0, CL_MEM_USE_HOST_PTR, host, ROW,
                        0, &err);
  REQUIRE(m);
  CHECK_EQ_INT(image_info(m, CL_IMAGE_ROW_PITCH), ROW);
  void *hp = NULL;
  clGetMemObjectInfo(m, CL_MEM_HOST_PTR, sizeof hp, &hp, NULL);
  CHECK(hp == host);
  unsigned char packed[W * 4 * H];
  size_t origin[3] = {0, 0, 0}, region[3] = {W, H, 1};
  CHECK_EQ_INT(clEnqueueReadImage(queue, m, CL_TRUE, origin, region, 0, 0, packed, 0, NULL, NULL),
               CL_SUCCESS);
  int same = 1;
  for (int y = 0; y < H; y++)
    same &= !memcmp(packed + y * W * 4, host + y * ROW, W * 4);
  CHECK(same);
  /* Writes land in the caller's memory, padding untouched. */
  unsigned char pad_before = host[W * 4];
  unsigned char px[4] = {1, 2, 3, 4};
  size_t o2[3] = {2, 1, 0}, r1[3] = {1, 1, 1};
  CHECK_EQ_INT(clEnqueueWriteImage(queue, m, CL_TRUE, o2, r1, 0, 0, px, 0, NULL, NULL), CL_SUCCESS);
  CHECK(!memcmp(host + ROW + 8, px, 4));
  CHECK_EQ_INT(host[W * 4], pad_before);
  clReleaseMemObject(m);

  /* COPY_HOST_PTR of a 3D image with pitches: stored packed. */
  enum { D = 2, SLICE = ROW * (H + 1) };
  unsigned char host3[SLICE * D];
  pattern(host3, sizeof host3, 2);
  m = make_image(CL_MEM_OBJECT_IMAGE3D, &rgba8, W, H, D, 0, CL_MEM_COPY_HOST_PTR | CL_MEM_READ_ONLY,
                 host3, ROW, SLICE, &err);
  REQUIRE(m);
  CHECK_EQ_INT(image_info(m, CL_IMAGE_ROW_PITCH), W * 4);
  CHECK_EQ_INT(image_info(m, CL_IMAGE_SLICE_PITCH), W * 4 * H);
  unsigned char back[W * 4 * H * D];
  size_t r3[3] = {W, H, D};
  CHECK_EQ_INT(clEnqueueReadImage(queue, m, CL_TRUE, origin, r3, 0, 0, back, 0, NULL, NULL),
               CL_SUCCESS);
  same = 1;
  for (int z = 0; z < D; z++)
    for (int y = 0; y < H; y++)
      same &= !memcmp(back + (z * H + y) * W * 4, host3 + z * SLICE + y * ROW, W * 4);
  CHECK(same);
  clReleaseMemObject(m);

  /* ALLOC_HOST_PTR and host access flags. */
  m = make_image(CL_MEM_OBJECT_IMAGE2D, &rgba8, W, H, 0, 0,
                 CL_MEM_ALLOC_HOST_PTR | CL_MEM_HOST_NO_ACCESS, NULL, 0, 0, &err);
  REQUIRE(m);
  CHECK_EQ_INT(clEnqueueReadImage(queue, m, CL_TRUE, origin, region, 0, 0, back, 0, NULL, NULL),
               CL_INVALID_OPERATION);
  CHECK_EQ_INT(clEnqueueWriteImage(queue, m, CL_TRUE, origin, region, 0, 0, back, 0, NULL, NULL),
               CL_INVALID_OPERATION);
  clReleaseMemObject(m);
}

/* Write a sub-region with host pitches, read it back with other pitches,
 * and compare with a host model of the image, for every geometry. */
static void read_write_pitches(void) {
  static const struct {
    cl_mem_object_type type;
    size_t w, h, d, layers;
    size_t origin[3], region[3];
  } cases[] = {
      {CL_MEM_OBJECT_IMAGE1D, 40, 0, 0, 0, {3, 0, 0}, {30, 1, 1}},
      {CL_MEM_OBJECT_IMAGE1D_ARRAY, 40, 0, 0, 5, {3, 1, 0}, {30, 3, 1}},
      {CL_MEM_OBJECT_IMAGE2D, 40, 9, 0, 0, {3, 2, 0}, {30, 6, 1}},
      {CL_MEM_OBJECT_IMAGE2D_ARRAY, 40, 9, 0, 4, {3, 2, 1}, {30, 6, 2}},
      {CL_MEM_OBJECT_IMAGE3D, 40, 9, 5, 0, {3, 2, 1}, {30, 6, 3}},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    cl_int err;
    cl_mem m = make_image(cases[i].type, &rgbaui, cases[i].w, cases[i].h, cases[i].d,
                          cases[i].layers, 0, NULL, 0, 0, &err);
    CHECK_EQ_INT(err, CL_SUCCESS);
    if (!m) continue;
    const size_t *o = cases[i].origin, *r = cases[i].region;
    int is_1da = cases[i].type == CL_MEM_OBJECT_IMAGE1D_ARRAY;
    int sliced = is_1da || cases[i].type == CL_MEM_OBJECT_IMAGE2D_ARRAY ||
                 cases[i].type == CL_MEM_OBJECT_IMAGE3D;
    /* The whole image first, packed, so that everything is known. */
    size_t ext[3] = {cases[i].w,
                     is_1da       ? cases[i].layers
                     : cases[i].h ? cases[i].h
                                  : 1,
                     cases[i].d                   ? cases[i].d
                     : cases[i].layers && !is_1da ? cases[i].layers
                                                  : 1};
    size_t total = ext[0] * ext[1] * ext[2] * 16;
    unsigned char *model = malloc(total), *back = malloc(total);
    pattern(model, total, (unsigned)i);
    size_t zero[3] = {0, 0, 0};
    CHECK_EQ_INT(clEnqueueWriteImage(queue, m, CL_TRUE, zero, ext, 0, 0, model, 0, NULL, NULL),
                 CL_SUCCESS);
    /* The region from host memory with padded pitches. */
    size_t row = r[0] * 16 + 48, slice = sliced ? row * (is_1da ? 1 : r[1]) + 80 : 0;
    size_t layers = is_1da ? r[1] : r[2], rows = is_1da ? 1 : r[1];
    unsigned char *src = malloc((slice ? slice : row * rows) * layers);
    pattern(src, (slice ? slice : row * rows) * layers, 99);
    CHECK_EQ_INT(clEnqueueWriteImage(queue, m, CL_FALSE, o, r, row, slice, src, 0, NULL, NULL),
                 CL_SUCCESS);
    for (size_t z = 0; z < layers; z++)
      for (size_t y = 0; y < rows; y++) {
        size_t mz = (is_1da ? 0 : o[2] + z), my = is_1da ? o[1] + z : o[1] + y;
        memcpy(model + ((mz * ext[1] + my) * ext[0] + o[0]) * 16,
               src + z * (slice ? slice : row * rows) + y * row, r[0] * 16);
      }
    memset(back, 0, total);
    CHECK_EQ_INT(clEnqueueReadImage(queue, m, CL_TRUE, zero, ext, 0, 0, back, 0, NULL, NULL),
                 CL_SUCCESS);
    CHECK(!memcmp(back, model, total));
    /* Reading the region back with pitches again. */
    unsigned char *dst = calloc((slice ? slice : row * rows) * layers, 1);
    CHECK_EQ_INT(clEnqueueReadImage(queue, m, CL_TRUE, o, r, row, slice, dst, 0, NULL, NULL),
                 CL_SUCCESS);
    int same = 1;
    for (size_t z = 0; z < layers; z++)
      for (size_t y = 0; y < rows; y++)
        same &= !memcmp(dst + z * (slice ? slice : row * rows) + y * row,
                        src + z * (slice ? slice : row * rows) + y * row, r[0] * 16);
    CHECK(same);
    /* Geometry rules: unused coordinates must be 0 / 1, regions inside. */
    size_t bad_o[3] = {o[0], o[1], o[2]}, bad_r[3] = {r[0], r[1], r[2]};
    bad_r[0] = cases[i].w - o[0] + 1;
    CHECK_EQ_INT(clEnqueueReadImage(queue, m, CL_TRUE, o, bad_r, 0, 0, dst, 0, NULL, NULL),
                 CL_INVALID_VALUE);
    bad_r[0] = 0;
    CHECK_EQ_INT(clEnqueueReadImage(queue, m, CL_TRUE, o, bad_r, 0, 0, dst, 0, NULL, NULL),
                 CL_INVALID_VALUE);
    if (!sliced || is_1da) {
      bad_o[2] = 1;
      CHECK_EQ_INT(clEnqueueReadImage(queue, m, CL_TRUE, bad_o, r, 0, 0, dst, 0, NULL, NULL),
                   CL_INVALID_VALUE);
    }
    if (!sliced) /* 1D and 2D images take no slice pitch */
      CHECK_EQ_INT(clEnqueueReadImage(queue, m, CL_TRUE, o, r, 0, 4096, dst, 0, NULL, NULL),
                   CL_INVALID_VALUE);
    CHECK_EQ_INT(clEnqueueReadImage(queue, m, CL_TRUE, o, r, 8, 0, dst, 0, NULL, NULL),
                 CL_INVALID_VALUE);
    CHECK_EQ_INT(clEnqueueReadImage(queue, m, CL_TRUE, o, r, 0, 0, NULL, 0, NULL, NULL),
                 CL_INVALID_VALUE);
    CHECK_EQ_INT(clEnqueueReadImage(queue, m, CL_TRUE, NULL, r, 0, 0, dst, 0, NULL, NULL),
                 CL_INVALID_VALUE);
    free(model);
    free(back);
    free(src);
    free(dst);
    clReleaseMemObject(m);
  }
  /* Handles: queue, then the image, then the wait list. */
  cl_int err;
  cl_mem m = make_image(CL_MEM_OBJECT_IMAGE2D, &rgba8, 4, 4, 0, 0, 0, NULL, 0, 0, &err);
  cl_mem b = clCreateBuffer(context, CL_MEM_READ_WRITE, 64, NULL, &err);
  unsigned char buf[64];
  size_t o[3] = {0, 0, 0}, r[3] = {4, 4, 1};
  CHECK_EQ_INT(clEnqueueReadImage(NULL, m, CL_TRUE, o, r, 0, 0, buf, 0, NULL, NULL),
               CL_INVALID_COMMAND_QUEUE);
  CHECK_EQ_INT(clEnqueueReadImage(queue, b, CL_TRUE, o, r, 0, 0, buf, 0, NULL, NULL),
               CL_INVALID_MEM_OBJECT);
  CHECK_EQ_INT(clEnqueueWriteImage(queue, NULL, CL_TRUE, o, r, 0, 0, buf, 0, NULL, NULL),
               CL_INVALID_MEM_OBJECT);
  CHECK_EQ_INT(clEnqueueReadImage(queue, m, CL_TRUE, o, r, 0, 0, buf, 1, NULL, NULL),
               CL_INVALID_EVENT_WAIT_LIST);
  CHECK_EQ_INT(clEnqueueReadBuffer(queue, m, CL_TRUE, 0, 16, buf, 0, NULL, NULL),
               CL_INVALID_MEM_OBJECT);
  /* Events and profiling types. */
  cl_event ev = NULL;
  CHECK_EQ_INT(clEnqueueWriteImage(queue, m, CL_FALSE, o, r, 0, 0, buf, 0, NULL, &ev), CL_SUCCESS);
  CHECK_EQ_INT(clWaitForEvents(1, &ev), CL_SUCCESS);
  cl_command_type type = 0;
  clGetEventInfo(ev, CL_EVENT_COMMAND_TYPE, sizeof type, &type, NULL);
  CHECK_EQ_INT(type, CL_COMMAND_WRITE_IMAGE);
  CHECK_EQ_INT(event_status(ev), CL_COMPLETE);
  clReleaseEvent(ev);
  clReleaseMemObject(b);
  clReleaseMemObject(m);
}

static void copy_images(void) {
  cl_int err;
  enum { W = 8, H = 6, D = 3 };
  unsigned char a[W * H * 4], b3[W * H * D * 4], back[W * H * D * 4];
  pattern(a, sizeof a, 3);
  pattern(b3, sizeof b3, 4);
  cl_mem src =
      make_image(CL_MEM_OBJECT_IMAGE2D, &rgba8, W, H, 0, 0, CL_MEM_COPY_HOST_PTR, a, 0, 0, &err);
  cl_mem vol =
      make_image(CL_MEM_OBJECT_IMAGE3D, &rgba8, W, H, D, 0, CL_MEM_COPY_HOST_PTR, b3, 0, 0, &err);
  cl_mem fl = make_image(CL_MEM_OBJECT_IMAGE2D, &rgbaf, W, H, 0, 0, 0, NULL, 0, 0, &err);
  REQUIRE(src && vol && fl);
  /* 2D -> slice 1 of the 3D image, at an offset. */
  size_t so[3] = {1, 2, 0}, dof[3] = {3, 1, 1}, r[3] = {4, 3, 1};
  cl_event ev;
  CHECK_EQ_INT(clEnqueueCopyImage(queue, src, vol, so, dof, r, 0, NULL, &ev), CL_SUCCESS);
  for (size_t y = 0; y < r[1]; y++)
    memcpy(b3 + ((dof[2] * H + dof[1] + y) * W + dof[0]) * 4, a + ((so[1] + y) * W + so[0]) * 4,
           r[0] * 4);
  size_t zero[3] = {0, 0, 0}, all[3] = {W, H, D};
  CHECK_EQ_INT(clEnqueueReadImage(queue, vol, CL_TRUE, zero, all, 0, 0, back, 1, &ev, NULL),
               CL_SUCCESS);
  CHECK(!memcmp(back, b3, sizeof b3));
  cl_command_type type = 0;
  clGetEventInfo(ev, CL_EVENT_COMMAND_TYPE, sizeof type, &type, NULL);
  CHECK_EQ_INT(type, CL_COMMAND_COPY_IMAGE);
  clReleaseEvent(ev);
  /* Within one image, regions apart: allowed; overlapping: not. */
  size_t o1[3] = {0, 0, 0}, o2[3] = {4, 0, 0}, o3[3] = {2, 1, 0}, r2[3] = {4, 3, 1};
  CHECK_EQ_INT(clEnqueueCopyImage(queue, src, src, o1, o2, r2, 0, NULL, NULL), CL_SUCCESS);
  CHECK_EQ_INT(clEnqueueCopyImage(queue, src, src, o1, o3, r2, 0, NULL, NULL), CL_MEM_COPY_OVERLAP);
  CHECK_EQ_INT(clFinish(queue), CL_SUCCESS);
  for (size_t y = 0; y < 3; y++)
    memcpy(a + (y * W + 4) * 4, a + y * W * 4, 16);
  unsigned char back2[sizeof a];
  size_t r2d[3] = {W, H, 1};
  CHECK_EQ_INT(clEnqueueReadImage(queue, src, CL_TRUE, zero, r2d, 0, 0, back2, 0, NULL, NULL),
               CL_SUCCESS);
  CHECK(!memcmp(back2, a, sizeof a));
  /* Errors. */
  CHECK_EQ_INT(clEnqueueCopyImage(queue, src, fl, o1, o1, r2, 0, NULL, NULL),
               CL_IMAGE_FORMAT_MISMATCH);
  size_t big[3] = {W + 1, 1, 1};
  CHECK_EQ_INT(clEnqueueCopyImage(queue, src, vol, o1, o1, big, 0, NULL, NULL), CL_INVALID_VALUE);
  size_t deep[3] = {1, 1, 2}; /* a 2D source takes region[2] == 1 */
  CHECK_EQ_INT(clEnqueueCopyImage(queue, src, vol, o1, o1, deep, 0, NULL, NULL), CL_INVALID_VALUE);
  cl_mem buf = clCreateBuffer(context, CL_MEM_READ_WRITE, 64, NULL, &err);
  CHECK_EQ_INT(clEnqueueCopyImage(queue, src, buf, o1, o1, r2, 0, NULL, NULL),
               CL_INVALID_MEM_OBJECT);
  CHECK_EQ_INT(clEnqueueCopyImage(NULL, src, vol, o1, o1, r2, 0, NULL, NULL),
               CL_INVALID_COMMAND_QUEUE);
  clReleaseMemObject(buf);
  clReleaseMemObject(src);
  clReleaseMemObject(vol);
  clReleaseMemObject(fl);
}

static void fill_images(void) {
  cl_int err;
  enum { W = 7, H = 5 };
  cl_mem m = make_image(CL_MEM_OBJECT_IMAGE2D, &rgba8, W, H, 0, 0, 0, NULL, 0, 0, &err);
  REQUIRE(m);
  float black[4] = {0, 0, 0, 0}, color[4] = {1.0f, 0.5f, 0.0f, 0.25f};
  size_t zero[3] = {0, 0, 0}, all[3] = {W, H, 1}, o[3] = {2, 1, 0}, r[3] = {3, 2, 1};
  CHECK_EQ_INT(clEnqueueFillImage(queue, m, black, zero, all, 0, NULL, NULL), CL_SUCCESS);
  cl_event ev;
  CHECK_EQ_INT(clEnqueueFillImage(queue, m, color, o, r, 0, NULL, &ev), CL_SUCCESS);
  unsigned char back[W * H * 4];
  CHECK_EQ_INT(clEnqueueReadImage(queue, m, CL_TRUE, zero, all, 0, 0, back, 1, &ev, NULL),
               CL_SUCCESS);
  int ok = 1;
  for (int y = 0; y < H; y++)
    for (int x = 0; x < W; x++) {
      int in = x >= 2 && x < 5 && y >= 1 && y < 3;
      const unsigned char *p = back + (y * W + x) * 4;
      unsigned char e[4] = {255, 128, 0, 64};
      ok &= in ? !memcmp(p, e, 4) : (p[0] | p[1] | p[2] | p[3]) == 0;
    }
  CHECK(ok);
  cl_command_type type = 0;
  clGetEventInfo(ev, CL_EVENT_COMMAND_TYPE, sizeof type, &type, NULL);
  CHECK_EQ_INT(type, CL_COMMAND_FILL_IMAGE);
  clReleaseEvent(ev);
  CHECK_EQ_INT(clEnqueueFillImage(queue, m, NULL, o, r, 0, NULL, NULL), CL_INVALID_VALUE);
  size_t bad[3] = {W, 1, 1};
  CHECK_EQ_INT(clEnqueueFillImage(queue, m, color, o, bad, 0, NULL, NULL), CL_INVALID_VALUE);
  clReleaseMemObject(m);

  /* An integer 3D image: the color is uint4. */
  m = make_image(CL_MEM_OBJECT_IMAGE3D, &rgbaui, 3, 2, 2, 0, 0, NULL, 0, 0, &err);
  REQUIRE(m);
  cl_uint ucolor[4] = {7, 70000, 0xffffffffu, 3};
  size_t all3[3] = {3, 2, 2};
  CHECK_EQ_INT(clEnqueueFillImage(queue, m, ucolor, zero, all3, 0, NULL, NULL), CL_SUCCESS);
  cl_uint back3[3 * 2 * 2 * 4];
  CHECK_EQ_INT(clEnqueueReadImage(queue, m, CL_TRUE, zero, all3, 0, 0, back3, 0, NULL, NULL),
               CL_SUCCESS);
  ok = 1;
  for (int i = 0; i < 12; i++)
    ok &= !memcmp(back3 + 4 * i, ucolor, 16);
  CHECK(ok);
  clReleaseMemObject(m);
}

static void map_images(void) {
  cl_int err;
  enum { W = 6, H = 4, L = 3 };
  cl_mem m = make_image(CL_MEM_OBJECT_IMAGE2D_ARRAY, &rgba8, W, H, 0, L, 0, NULL, 0, 0, &err);
  REQUIRE(m);
  size_t o[3] = {1, 1, 1}, r[3] = {4, 2, 2}, row = 0, slice = 0;
  unsigned char *p =
      clEnqueueMapImage(queue, m, CL_TRUE, CL_MAP_WRITE, o, r, &row, &slice, 0, NULL, NULL, &err);
  CHECK_EQ_INT(err, CL_SUCCESS);
  REQUIRE(p);
  CHECK_EQ_INT(row, W * 4);
  CHECK_EQ_INT(slice, W * 4 * H);
  cl_uint count = 0;
  clGetMemObjectInfo(m, CL_MEM_MAP_COUNT, sizeof count, &count, NULL);
  CHECK_EQ_INT(count, 1);
  for (size_t z = 0; z < r[2]; z++)
    for (size_t y = 0; y < r[1]; y++)
      for (size_t x = 0; x < r[0] * 4; x++)
        p[z * slice + y * row + x] = (unsigned char)(100 + z * 50 + y * 10 + x);
  cl_event ev;
  CHECK_EQ_INT(clEnqueueUnmapMemObject(queue, m, p, 0, NULL, &ev), CL_SUCCESS);
  unsigned char back[4 * 2 * 4];
  CHECK_EQ_INT(clEnqueueReadImage(queue, m, CL_TRUE, o, r, 0, 0, back, 1, &ev, NULL), CL_SUCCESS);
  clReleaseEvent(ev);
  int ok = 1;
  for (size_t z = 0; z < 2; z++)
    for (size_t y = 0; y < 2; y++)
      for (size_t x = 0; x < 16; x++)
        ok &= back[(z * 2 + y) * 16 + x] == (unsigned char)(100 + z * 50 + y * 10 + x);
  CHECK(ok);
  clGetMemObjectInfo(m, CL_MEM_MAP_COUNT, sizeof count, &count, NULL);
  CHECK_EQ_INT(count, 0);
  /* Errors: pitches are required (the slice pitch for arrays and 3D). */
  CHECK(clEnqueueMapImage(queue, m, CL_TRUE, CL_MAP_READ, o, r, NULL, &slice, 0, NULL, NULL,
                          &err) == NULL);
  CHECK_EQ_INT(err, CL_INVALID_VALUE);
  CHECK(clEnqueueMapImage(queue, m, CL_TRUE, CL_MAP_READ, o, r, &row, NULL, 0, NULL, NULL, &err) ==
        NULL);
  CHECK_EQ_INT(err, CL_INVALID_VALUE);
  size_t far[3] = {0, 0, L};
  CHECK(clEnqueueMapImage(queue, m, CL_TRUE, CL_MAP_READ, far, r, &row, &slice, 0, NULL, NULL,
                          &err) == NULL);
  CHECK_EQ_INT(err, CL_INVALID_VALUE);
  CHECK(clEnqueueMapImage(queue, m, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE_INVALIDATE_REGION, o, r,
                          &row, &slice, 0, NULL, NULL, &err) == NULL);
  CHECK_EQ_INT(err, CL_INVALID_VALUE);
  clReleaseMemObject(m);
  /* A 2D image: slice pitch optional and 0; host access flags apply. */
  m = make_image(CL_MEM_OBJECT_IMAGE2D, &rgba8, W, H, 0, 0, CL_MEM_HOST_WRITE_ONLY, NULL, 0, 0,
                 &err);
  REQUIRE(m);
  size_t o2[3] = {0, 0, 0}, r2[3] = {W, H, 1};
  slice = 99;
  p = clEnqueueMapImage(queue, m, CL_TRUE, CL_MAP_WRITE_INVALIDATE_REGION, o2, r2, &row, &slice, 0,
                        NULL, NULL, &err);
  CHECK_EQ_INT(err, CL_SUCCESS);
  CHECK_EQ_INT(slice, 0);
  if (p) CHECK_EQ_INT(clEnqueueUnmapMemObject(queue, m, p, 0, NULL, NULL), CL_SUCCESS);
  CHECK(clEnqueueMapImage(queue, m, CL_TRUE, CL_MAP_READ, o2, r2, &row, NULL, 0, NULL, NULL,
                          &err) == NULL);
  CHECK_EQ_INT(err, CL_INVALID_OPERATION);
  clFinish(queue);
  clReleaseMemObject(m);
}

static void image_buffer_copies(void) {
  cl_int err;
  enum { W = 9, H = 5, D = 3 };
  unsigned char init[W * H * D * 4];
  pattern(init, sizeof init, 5);
  cl_mem vol =
      make_image(CL_MEM_OBJECT_IMAGE3D, &rgba8, W, H, D, 0, CL_MEM_COPY_HOST_PTR, init, 0, 0, &err);
  cl_mem buf = clCreateBuffer(context, CL_MEM_READ_WRITE, 4096, NULL, &err);
  REQUIRE(vol && buf);
  size_t o[3] = {2, 1, 1}, r[3] = {5, 3, 2};
  cl_event ev;
  CHECK_EQ_INT(clEnqueueCopyImageToBuffer(queue, vol, buf, o, r, 16, 0, NULL, &ev), CL_SUCCESS);
  unsigned char got[5 * 3 * 2 * 4];
  CHECK_EQ_INT(clEnqueueReadBuffer(queue, buf, CL_TRUE, 16, sizeof got, got, 1, &ev, NULL),
               CL_SUCCESS);
  cl_command_type type = 0;
  clGetEventInfo(ev, CL_EVENT_COMMAND_TYPE, sizeof type, &type, NULL);
  CHECK_EQ_INT(type, CL_COMMAND_COPY_IMAGE_TO_BUFFER);
  clReleaseEvent(ev);
  int ok = 1;
  for (size_t z = 0; z < 2; z++)
    for (size_t y = 0; y < 3; y++)
      ok &=
          !memcmp(got + (z * 3 + y) * 20, init + (((o[2] + z) * H + o[1] + y) * W + o[0]) * 4, 20);
  CHECK(ok);
  /* And back, into another place. */
  size_t o2[3] = {0, 0, 0};
  CHECK_EQ_INT(clEnqueueCopyBufferToImage(queue, buf, vol, 16, o2, r, 0, NULL, NULL), CL_SUCCESS);
  for (size_t z = 0; z < 2; z++)
    for (size_t y = 0; y < 3; y++)
      memcpy(init + ((z * H + y) * W) * 4, got + (z * 3 + y) * 20, 20);
  unsigned char back[sizeof init];
  size_t zero[3] = {0, 0, 0}, all[3] = {W, H, D};
  CHECK_EQ_INT(clEnqueueReadImage(queue, vol, CL_TRUE, zero, all, 0, 0, back, 0, NULL, NULL),
               CL_SUCCESS);
  CHECK(!memcmp(back, init, sizeof init));
  /* A 1D array: layers are rows of the buffer. */
  cl_mem arr = make_image(CL_MEM_OBJECT_IMAGE1D_ARRAY, &rgba8, W, 0, 0, 4, 0, NULL, 0, 0, &err);
  REQUIRE(arr);
  size_t ao[3] = {1, 1, 0}, ar[3] = {4, 2, 1};
  CHECK_EQ_INT(clEnqueueCopyBufferToImage(queue, buf, arr, 16, ao, ar, 0, NULL, NULL), CL_SUCCESS);
  unsigned char arr_back[4 * 2 * 4];
  CHECK_EQ_INT(clEnqueueReadImage(queue, arr, CL_TRUE, ao, ar, 0, 0, arr_back, 0, NULL, NULL),
               CL_SUCCESS);
  CHECK(!memcmp(arr_back, got, sizeof arr_back));
  /* Errors. */
  CHECK_EQ_INT(clEnqueueCopyImageToBuffer(queue, vol, buf, o, r, 4096 - 8, 0, NULL, NULL),
               CL_INVALID_VALUE);
  CHECK_EQ_INT(clEnqueueCopyImageToBuffer(queue, buf, vol, o, r, 0, 0, NULL, NULL),
               CL_INVALID_MEM_OBJECT);
  CHECK_EQ_INT(clEnqueueCopyBufferToImage(queue, vol, buf, 0, o, r, 0, NULL, NULL),
               CL_INVALID_MEM_OBJECT);
  size_t bad[3] = {W, 1, 1};
  CHECK_EQ_INT(clEnqueueCopyBufferToImage(queue, buf, vol, 0, o, bad, 0, NULL, NULL),
               CL_INVALID_VALUE);
  clReleaseMemObject(arr);
  clReleaseMemObject(vol);
  clReleaseMemObject(buf);
}

static void buffer_images(void) {
  cl_int err;
  enum { N = 64 };
  cl_uint data[N * 4];
  for (int i = 0; i < N * 4; i++)
    data[i] = (cl_uint)i * 3u;
  cl_mem buf =
      clCreateBuffer(context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, sizeof data, data, &err);
  REQUIRE(buf);
  cl_image_desc d = {.image_type = CL_MEM_OBJECT_IMAGE1D_BUFFER, .image_width = N, .buffer = buf};
  cl_mem img = clCreateImage(context, CL_MEM_READ_ONLY, &rgbaui, &d, NULL, &err);
  CHECK_EQ_INT(err, CL_SUCCESS);
  REQUIRE(img);
  cl_mem got = NULL;
  clGetImageInfo(img, CL_IMAGE_BUFFER, sizeof got, &got, NULL);
  CHECK(got == buf);
  clGetMemObjectInfo(img, CL_MEM_ASSOCIATED_MEMOBJECT, sizeof got, &got, NULL);
  CHECK(got == buf);
  CHECK_EQ_INT(ref_count_of_mem(buf), 2); /* the image keeps its buffer */
  cl_mem_flags f = 0;
  clGetMemObjectInfo(img, CL_MEM_FLAGS, sizeof f, &f, NULL);
  CHECK_EQ_INT(f, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR);
  /* The image sees the buffer's storage. */
  cl_uint v[4] = {11, 22, 33, 44};
  CHECK_EQ_INT(clEnqueueWriteBuffer(queue, buf, CL_TRUE, 5 * 16, 16, v, 0, NULL, NULL), CL_SUCCESS);
  cl_uint back[4] = {0};
  size_t o[3] = {5, 0, 0}, r[3] = {1, 1, 1};
  CHECK_EQ_INT(clEnqueueReadImage(queue, img, CL_TRUE, o, r, 0, 0, back, 0, NULL, NULL),
               CL_SUCCESS);
  CHECK(!memcmp(back, v, 16));
  /* A kernel reads it as image1d_buffer_t. */
  cl_kernel k = build_kernel("__kernel void k(read_only image1d_buffer_t im, __global uint4 *out) {"
                             "  int i = get_global_id(0);"
                             "  out[i] = read_imageui(im, i) + (uint4)(get_image_width(im));"
                             "}",
                             "k");
  REQUIRE(k);
  cl_mem out = clCreateBuffer(context, CL_MEM_READ_WRITE, sizeof data, NULL, &err);
  CHECK_EQ_INT(clSetKernelArg(k, 0, sizeof img, &img), CL_SUCCESS);
  CHECK_EQ_INT(clSetKernelArg(k, 1, sizeof out, &out), CL_SUCCESS);
  size_t g = N;
  CHECK_EQ_INT(clEnqueueNDRangeKernel(queue, k, 1, NULL, &g, NULL, 0, NULL, NULL), CL_SUCCESS);
  cl_uint res[N * 4];
  CHECK_EQ_INT(clEnqueueReadBuffer(queue, out, CL_TRUE, 0, sizeof res, res, 0, NULL, NULL),
               CL_SUCCESS);
  memcpy(data + 5 * 4, v, 16);
  int ok = 1;
  for (int i = 0; i < N * 4; i++)
    ok &= res[i] == data[i] + N;
  CHECK(ok);
  clReleaseKernel(k);
  clReleaseMemObject(out);
  CHECK_EQ_INT(clReleaseMemObject(img), CL_SUCCESS);
  CHECK_EQ_INT(ref_count_of_mem(buf), 1);
  clReleaseMemObject(buf);
}

static void samplers(void) {
  cl_int err = 1;
  cl_sampler s = clCreateSampler(context, CL_TRUE, CL_ADDRESS_REPEAT, CL_FILTER_LINEAR, &err);
  CHECK_EQ_INT(err, CL_SUCCESS);
  REQUIRE(s);
  cl_uint u = 0;
  CHECK_EQ_INT(clGetSamplerInfo(s, CL_SAMPLER_REFERENCE_COUNT, sizeof u, &u, NULL), CL_SUCCESS);
  CHECK_EQ_INT(u, 1);
  CHECK_EQ_INT(clRetainSampler(s), CL_SUCCESS);
  clGetSamplerInfo(s, CL_SAMPLER_REFERENCE_COUNT, sizeof u, &u, NULL);
  CHECK_EQ_INT(u, 2);
  CHECK_EQ_INT(clReleaseSampler(s), CL_SUCCESS);
  cl_context c = NULL;
  clGetSamplerInfo(s, CL_SAMPLER_CONTEXT, sizeof c, &c, NULL);
  CHECK(c == context);
  cl_bool b = CL_FALSE;
  clGetSamplerInfo(s, CL_SAMPLER_NORMALIZED_COORDS, sizeof b, &b, NULL);
  CHECK_EQ_INT(b, CL_TRUE);
  cl_addressing_mode a = 0;
  clGetSamplerInfo(s, CL_SAMPLER_ADDRESSING_MODE, sizeof a, &a, NULL);
  CHECK_EQ_INT(a, CL_ADDRESS_REPEAT);
  cl_filter_mode f = 0;
  clGetSamplerInfo(s, CL_SAMPLER_FILTER_MODE, sizeof f, &f, NULL);
  CHECK_EQ_INT(f, CL_FILTER_LINEAR);
  size_t size = 0;
  CHECK_EQ_INT(clGetSamplerInfo(s, CL_SAMPLER_FILTER_MODE, 0, NULL, &size), CL_SUCCESS);
  CHECK_EQ_INT(size, sizeof(cl_filter_mode));
  CHECK_EQ_INT(clGetSamplerInfo(s, CL_SAMPLER_FILTER_MODE, 1, &f, NULL), CL_INVALID_VALUE);
  CHECK_EQ_INT(clGetSamplerInfo(s, 0x7777, sizeof f, &f, NULL), CL_INVALID_VALUE);
  CHECK_EQ_INT(clReleaseSampler(s), CL_SUCCESS);
  /* Every valid combination, and the invalid ones. */
  static const cl_addressing_mode modes[] = {CL_ADDRESS_NONE, CL_ADDRESS_CLAMP_TO_EDGE,
                                             CL_ADDRESS_CLAMP, CL_ADDRESS_REPEAT,
                                             CL_ADDRESS_MIRRORED_REPEAT};
  for (int norm = 0; norm < 2; norm++)
    for (int m = 0; m < 5; m++)
      for (int fm = 0; fm < 2; fm++) {
        cl_sampler x = clCreateSampler(context, (cl_bool)norm, modes[m],
                                       fm ? CL_FILTER_LINEAR : CL_FILTER_NEAREST, &err);
        int valid = norm || m < 3;
        CHECK_EQ_INT(err, valid ? CL_SUCCESS : CL_INVALID_VALUE);
        CHECK((x != NULL) == valid);
        if (x) clReleaseSampler(x);
      }
  CHECK(clCreateSampler(NULL, CL_TRUE, CL_ADDRESS_NONE, CL_FILTER_NEAREST, &err) == NULL);
  CHECK_EQ_INT(err, CL_INVALID_CONTEXT);
  CHECK(clCreateSampler(context, CL_TRUE, 0x1234, CL_FILTER_NEAREST, &err) == NULL);
  CHECK_EQ_INT(err, CL_INVALID_VALUE);
  CHECK(clCreateSampler(context, CL_TRUE, CL_ADDRESS_NONE, 0x1234, &err) == NULL);
  CHECK_EQ_INT(err, CL_INVALID_VALUE);
  CHECK(clCreateSampler(context, 7, CL_ADDRESS_NONE, CL_FILTER_NEAREST, &err) == NULL);
  CHECK_EQ_INT(err, CL_INVALID_VALUE);
  CHECK_EQ_INT(clRetainSampler(NULL), CL_INVALID_SAMPLER);
  CHECK_EQ_INT(clReleaseSampler((cl_sampler)context), CL_INVALID_SAMPLER);
  CHECK_EQ_INT(clGetSamplerInfo(NULL, CL_SAMPLER_FILTER_MODE, sizeof f, &f, NULL),
               CL_INVALID_SAMPLER);
}

/* ---- kernels -------------------------------------------------------------------- */

/* The host model of read_imagef with a sampler on a 2D float RGBA image
 * (OpenCL 1.2 section 8.2): nearest and linear, clamp to edge, clamp
 * (border color 0) and repeat. */
static void texel(const float *img, int w, int h, int x, int y, float out[4]) {
  if (x < 0 || y < 0 || x >= w || y >= h) {
    memset(out, 0, 16);
    return;
  }
  memcpy(out, img + (y * w + x) * 4, 16);
}

static int clampi(int v, int lo, int hi) {
  return v < lo ? lo : v > hi ? hi : v;
}

static void host_sample(const float *img, int w, int h, int normalized, cl_addressing_mode am,
                        int linear, float s, float t, float out[4]) {
  float u, v;
  if (am == CL_ADDRESS_REPEAT) {
    u = (s - floorf(s)) * w;
    v = (t - floorf(t)) * h;
    if (!linear) {
      int i = (int)floorf(u), j = (int)floorf(v);
      if (i > w - 1) i -= w;
      if (j > h - 1) j -= h;
      texel(img, w, h, i, j, out);
      return;
    }
    int i0 = (int)floorf(u - 0.5f), j0 = (int)floorf(v - 0.5f), i1 = i0 + 1, j1 = j0 + 1;
    float a = (u - 0.5f) - floorf(u - 0.5f), b = (v - 0.5f) - floorf(v - 0.5f);
    if (i0 < 0) i0 += w;
    if (j0 < 0) j0 += h;
    if (i1 > w - 1) i1 -= w;
    if (j1 > h - 1) j1 -= h;
    float t00[4], t10[4], t01[4], t11[4];
    texel(img, w, h, i0, j0, t00);
    texel(img, w, h, i1, j0, t10);
    texel(img, w, h, i0, j1, t01);
    texel(img, w, h, i1, j1, t11);
    for (int c = 0; c < 4; c++)
      out[c] =
          (1 - a) * (1 - b) * t00[c] + a * (1 - b) * t10[c] + (1 - a) * b * t01[c] + a * b * t11[c];
    return;
  }
  u = normalized ? s * w : s;
  v = normalized ? t * h : t;
  int lo = am == CL_ADDRESS_CLAMP ? -1 : 0;
  int hix = am == CL_ADDRESS_CLAMP ? w : w - 1, hiy = am == CL_ADDRESS_CLAMP ? h : h - 1;
  if (!linear) {
    texel(img, w, h, clampi((int)floorf(u), lo, hix), clampi((int)floorf(v), lo, hiy), out);
    return;
  }
  int i0 = clampi((int)floorf(u - 0.5f), lo, hix), j0 = clampi((int)floorf(v - 0.5f), lo, hiy);
  int i1 = clampi((int)floorf(u - 0.5f) + 1, lo, hix),
      j1 = clampi((int)floorf(v - 0.5f) + 1, lo, hiy);
  float a = (u - 0.5f) - floorf(u - 0.5f), b = (v - 0.5f) - floorf(v - 0.5f);
  float t00[4], t10[4], t01[4], t11[4];
  texel(img, w, h, i0, j0, t00);
  texel(img, w, h, i1, j0, t10);
  texel(img, w, h, i0, j1, t01);
  texel(img, w, h, i1, j1, t11);
  for (int c = 0; c < 4; c++)
    out[c] =
        (1 - a) * (1 - b) * t00[c] + a * (1 - b) * t10[c] + (1 - a) * b * t01[c] + a * b * t11[c];
}

static const char *sample_src =
    "__kernel void sample(read_only image2d_t src, sampler_t s, __global float4 *out,"
    "                     float2 scale, float2 offs) {"
    "  int x = get_global_id(0), y = get_global_id(1);"
    "  float2 c = (float2)(x, y) * scale + offs;"
    "  out[y * get_global_size(0) + x] = read_imagef(src, s, c);"
    "}";

static void kernel_sampled_reads(void) {
  enum { W = 5, H = 4, GX = 16, GY = 12 };
  float img[W * H * 4];
  for (int i = 0; i < W * H * 4; i++)
    img[i] = (float)((i * 37) % 101) / 10.0f;
  cl_int err;
  cl_mem im = make_image(CL_MEM_OBJECT_IMAGE2D, &rgbaf, W, H, 0, 0,
                         CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, img, 0, 0, &err);
  cl_mem out = clCreateBuffer(context, CL_MEM_WRITE_ONLY, GX * GY * 16, NULL, &err);
  cl_kernel k = build_kernel(sample_src, "sample");
  REQUIRE(im && out && k);
  static const struct {
    cl_bool normalized;
    cl_addressing_mode am;
    cl_filter_mode fm;
  } modes[] = {
      {CL_TRUE, CL_ADDRESS_CLAMP_TO_EDGE, CL_FILTER_NEAREST},
      {CL_TRUE, CL_ADDRESS_CLAMP_TO_EDGE, CL_FILTER_LINEAR},
      {CL_TRUE, CL_ADDRESS_CLAMP, CL_FILTER_NEAREST},
      {CL_TRUE, CL_ADDRESS_CLAMP, CL_FILTER_LINEAR},
      {CL_TRUE, CL_ADDRESS_REPEAT, CL_FILTER_NEAREST},
      {CL_TRUE, CL_ADDRESS_REPEAT, CL_FILTER_LINEAR},
      {CL_FALSE, CL_ADDRESS_CLAMP_TO_EDGE, CL_FILTER_NEAREST},
      {CL_FALSE, CL_ADDRESS_CLAMP, CL_FILTER_LINEAR},
  };
  for (size_t mi = 0; mi < sizeof modes / sizeof modes[0]; mi++) {
    cl_sampler s = clCreateSampler(context, modes[mi].normalized, modes[mi].am, modes[mi].fm, &err);
    REQUIRE(s);
    /* Coordinates from below 0 to past the far edge, off the texel grid. */
    cl_float2 scale, offs;
    if (modes[mi].normalized) {
      scale.s[0] = 1.7f / GX;
      scale.s[1] = 1.7f / GY;
      offs.s[0] = -0.3313f;
      offs.s[1] = -0.3271f;
    } else {
      scale.s[0] = (W + 3.0f) / GX;
      scale.s[1] = (H + 3.0f) / GY;
      offs.s[0] = -1.4133f;
      offs.s[1] = -1.3871f;
    }
    CHECK_EQ_INT(clSetKernelArg(k, 0, sizeof im, &im), CL_SUCCESS);
    CHECK_EQ_INT(clSetKernelArg(k, 1, sizeof s, &s), CL_SUCCESS);
    CHECK_EQ_INT(clSetKernelArg(k, 2, sizeof out, &out), CL_SUCCESS);
    CHECK_EQ_INT(clSetKernelArg(k, 3, sizeof scale, &scale), CL_SUCCESS);
    CHECK_EQ_INT(clSetKernelArg(k, 4, sizeof offs, &offs), CL_SUCCESS);
    size_t g[2] = {GX, GY};
    CHECK_EQ_INT(clEnqueueNDRangeKernel(queue, k, 2, NULL, g, NULL, 0, NULL, NULL), CL_SUCCESS);
    /* The sampler may go away once the kernel has its value. */
    clReleaseSampler(s);
    float res[GX * GY * 4];
    CHECK_EQ_INT(clEnqueueReadBuffer(queue, out, CL_TRUE, 0, sizeof res, res, 0, NULL, NULL),
                 CL_SUCCESS);
    int bad = 0;
    for (int y = 0; y < GY; y++)
      for (int x = 0; x < GX; x++) {
        float cs = x * scale.s[0] + offs.s[0], ct = y * scale.s[1] + offs.s[1], e[4];
        host_sample(img, W, H, modes[mi].normalized, modes[mi].am, modes[mi].fm == CL_FILTER_LINEAR,
                    cs, ct, e);
        for (int c = 0; c < 4; c++) {
          float g2 = res[(y * GX + x) * 4 + c];
          if (fabsf(g2 - e[c]) > 1e-3f * (1 + fabsf(e[c]))) {
            if (bad++ < 3)
              printf("  mode %zu (%d,%d) c%d: got %g, expected %g\n", mi, x, y, c, g2, e[c]);
          }
        }
      }
    CHECK_EQ_INT(bad, 0);
  }
  /* Argument errors. */
  cl_mem buf = out, im3 = NULL;
  CHECK_EQ_INT(clSetKernelArg(k, 0, sizeof buf, &buf), CL_INVALID_MEM_OBJECT);
  CHECK_EQ_INT(clSetKernelArg(k, 0, 4, &im), CL_INVALID_ARG_SIZE);
  CHECK_EQ_INT(clSetKernelArg(k, 0, sizeof im, NULL), CL_INVALID_ARG_VALUE);
  CHECK_EQ_INT(clSetKernelArg(k, 1, sizeof(cl_sampler), NULL), CL_INVALID_SAMPLER);
  cl_mem null_mem = NULL;
  CHECK_EQ_INT(clSetKernelArg(k, 0, sizeof null_mem, &null_mem), CL_INVALID_MEM_OBJECT);
  im3 = make_image(CL_MEM_OBJECT_IMAGE3D, &rgbaf, 2, 2, 2, 0, 0, NULL, 0, 0, &err);
  CHECK_EQ_INT(clSetKernelArg(k, 0, sizeof im3, &im3), CL_INVALID_ARG_VALUE);
  cl_mem wo =
      make_image(CL_MEM_OBJECT_IMAGE2D, &rgbaf, 2, 2, 0, 0, CL_MEM_WRITE_ONLY, NULL, 0, 0, &err);
  CHECK_EQ_INT(clSetKernelArg(k, 0, sizeof wo, &wo), CL_INVALID_ARG_VALUE);
  CHECK_EQ_INT(clSetKernelArg(k, 2, sizeof im, &im), CL_INVALID_MEM_OBJECT);
  cl_sampler not_sampler = (cl_sampler)out;
  CHECK_EQ_INT(clSetKernelArg(k, 1, sizeof not_sampler, &not_sampler), CL_INVALID_SAMPLER);
  CHECK_EQ_INT(clSetKernelArg(k, 1, 4, &not_sampler), CL_INVALID_ARG_SIZE);
  clReleaseMemObject(im3);
  clReleaseMemObject(wo);
  clReleaseKernel(k);
  clReleaseMemObject(out);
  clReleaseMemObject(im);
}

/* Samplerless reads and writes: copies an int 3D image into another with a
 * transform (cl_khr_3d_image_writes), and a unorm 2D image into a float one,
 * releasing the images right after the enqueue (the command keeps them). */
static void kernel_read_write(void) {
  enum { W = 7, H = 5, D = 3 };
  cl_int err;
  cl_int src3[W * H * D * 4];
  for (int i = 0; i < W * H * D * 4; i++)
    src3[i] = i * 5 - 300;
  cl_image_format rgbai = {CL_RGBA, CL_SIGNED_INT32};
  cl_mem a = make_image(CL_MEM_OBJECT_IMAGE3D, &rgbai, W, H, D, 0,
                        CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, src3, 0, 0, &err);
  cl_mem b =
      make_image(CL_MEM_OBJECT_IMAGE3D, &rgbai, W, H, D, 0, CL_MEM_WRITE_ONLY, NULL, 0, 0, &err);
  REQUIRE(a && b);
  cl_kernel k = build_kernel("#pragma OPENCL EXTENSION cl_khr_3d_image_writes : enable\n"
                             "__kernel void k(read_only image3d_t a, write_only image3d_t b) {"
                             "  int4 p = (int4)(get_global_id(0), get_global_id(1),"
                             "                  get_global_id(2), 0);"
                             "  int4 v = read_imagei(a, p);"
                             "  write_imagei(b, p, v * 2 + (int4)(p.x, p.y, p.z, 1));"
                             "}",
                             "k");
  REQUIRE(k);
  CHECK_EQ_INT(clSetKernelArg(k, 0, sizeof a, &a), CL_SUCCESS);
  CHECK_EQ_INT(clSetKernelArg(k, 1, sizeof b, &b), CL_SUCCESS);
  size_t g[3] = {W, H, D};
  CHECK_EQ_INT(clEnqueueNDRangeKernel(queue, k, 3, NULL, g, NULL, 0, NULL, NULL), CL_SUCCESS);
  clRetainMemObject(b);
  CHECK_EQ_INT(clReleaseMemObject(a), CL_SUCCESS); /* the command holds it */
  clReleaseMemObject(b);
  cl_int res[W * H * D * 4];
  size_t zero[3] = {0, 0, 0};
  CHECK_EQ_INT(clEnqueueReadImage(queue, b, CL_TRUE, zero, g, 0, 0, res, 0, NULL, NULL),
               CL_SUCCESS);
  int ok = 1;
  for (int z = 0; z < D; z++)
    for (int y = 0; y < H; y++)
      for (int x = 0; x < W; x++) {
        int i = ((z * H + y) * W + x) * 4;
        int add[4] = {x, y, z, 1};
        for (int c = 0; c < 4; c++)
          ok &= res[i + c] == src3[i + c] * 2 + add[c];
      }
  CHECK(ok);
  clReleaseMemObject(b);
  clReleaseKernel(k);

  /* unorm8 2D -> float 2D through read_imagef without a sampler. */
  unsigned char u8[W * H * 4];
  pattern(u8, sizeof u8, 8);
  cl_mem c = make_image(CL_MEM_OBJECT_IMAGE2D, &rgba8, W, H, 0, 0,
                        CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, u8, 0, 0, &err);
  cl_mem d =
      make_image(CL_MEM_OBJECT_IMAGE2D, &rgbaf, W, H, 0, 0, CL_MEM_WRITE_ONLY, NULL, 0, 0, &err);
  k = build_kernel("__kernel void k(read_only image2d_t a, write_only image2d_t b) {"
                   "  int2 p = (int2)(get_global_id(0), get_global_id(1));"
                   "  write_imagef(b, p, read_imagef(a, p));"
                   "}",
                   "k");
  REQUIRE(c && d && k);
  clSetKernelArg(k, 0, sizeof c, &c);
  clSetKernelArg(k, 1, sizeof d, &d);
  size_t g2[2] = {W, H};
  CHECK_EQ_INT(clEnqueueNDRangeKernel(queue, k, 2, NULL, g2, NULL, 0, NULL, NULL), CL_SUCCESS);
  float f[W * H * 4];
  size_t r2[3] = {W, H, 1};
  CHECK_EQ_INT(clEnqueueReadImage(queue, d, CL_TRUE, zero, r2, 0, 0, f, 0, NULL, NULL), CL_SUCCESS);
  ok = 1;
  for (int i = 0; i < W * H * 4; i++)
    ok &= fabsf(f[i] - u8[i] / 255.0f) < 1e-6f;
  CHECK(ok);
  clReleaseKernel(k);
  clReleaseMemObject(c);
  clReleaseMemObject(d);
}

/* get_image_* in a kernel, for every geometry. */
static void kernel_queries(void) {
  cl_int err;
  const char *src =
      "__kernel void q2(read_only image2d_t i, __global int *o) {"
      "  o[0] = get_image_width(i); o[1] = get_image_height(i);"
      "  o[2] = get_image_channel_data_type(i); o[3] = get_image_channel_order(i);"
      "  int2 d = get_image_dim(i); o[4] = d.x; o[5] = d.y; }"
      "__kernel void q3(read_only image3d_t i, __global int *o) {"
      "  o[0] = get_image_width(i); o[1] = get_image_height(i); o[2] = get_image_depth(i);"
      "  int4 d = get_image_dim(i); o[3] = d.x; o[4] = d.y; o[5] = d.z; o[6] = d.w; }"
      "__kernel void q2a(read_only image2d_array_t i, __global int *o) {"
      "  o[0] = get_image_width(i); o[1] = get_image_height(i);"
      "  o[2] = (int)get_image_array_size(i); }"
      "__kernel void q1a(read_only image1d_array_t i, __global int *o) {"
      "  o[0] = get_image_width(i); o[1] = (int)get_image_array_size(i); }"
      "__kernel void q1(read_only image1d_t i, __global int *o) {"
      "  o[0] = get_image_width(i); o[1] = get_image_channel_order(i); }";
  cl_program p = build_program(src, NULL, &err);
  REQUIRE(p);
  cl_mem out = clCreateBuffer(context, CL_MEM_READ_WRITE, 64, NULL, &err);
  static const cl_image_format bgra = {CL_BGRA, CL_UNORM_INT8};
  struct {
    const char *name;
    cl_mem_object_type type;
    int n, expect[7];
  } cases[] = {
      {"q2", CL_MEM_OBJECT_IMAGE2D, 6, {13, 7, CL_UNORM_INT8, CL_BGRA, 13, 7}},
      {"q3", CL_MEM_OBJECT_IMAGE3D, 7, {13, 7, 3, 13, 7, 3, 0}},
      {"q2a", CL_MEM_OBJECT_IMAGE2D_ARRAY, 3, {13, 7, 4}},
      {"q1a", CL_MEM_OBJECT_IMAGE1D_ARRAY, 2, {13, 4}},
      {"q1", CL_MEM_OBJECT_IMAGE1D, 2, {13, CL_BGRA}},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    cl_mem im = make_image(cases[i].type, &bgra, 13, 7, 3, 4, CL_MEM_READ_ONLY, NULL, 0, 0, &err);
    cl_kernel k = clCreateKernel(p, cases[i].name, &err);
    if (!im || !k) {
      CHECK(im && k);
      continue;
    }
    CHECK_EQ_INT(clSetKernelArg(k, 0, sizeof im, &im), CL_SUCCESS);
    CHECK_EQ_INT(clSetKernelArg(k, 1, sizeof out, &out), CL_SUCCESS);
    CHECK_EQ_INT(clEnqueueTask(queue, k, 0, NULL, NULL), CL_SUCCESS);
    int res[7] = {0};
    CHECK_EQ_INT(clEnqueueReadBuffer(queue, out, CL_TRUE, 0, sizeof res, res, 0, NULL, NULL),
                 CL_SUCCESS);
    for (int j = 0; j < cases[i].n; j++)
      if (res[j] != cases[i].expect[j]) {
        printf("  %s[%d] = %d, expected %d\n", cases[i].name, j, res[j], cases[i].expect[j]);
        check_case_failed = 1;
      }
    clReleaseKernel(k);
    clReleaseMemObject(im);
  }
  clReleaseMemObject(out);
  clReleaseProgram(p);
}

/* A 2D array sampled with unnormalized coordinates, layer by layer. */
static void kernel_array_sampling(void) {
  enum { W = 4, H = 3, L = 3 };
  cl_int err;
  float data[W * H * L * 4];
  for (int i = 0; i < W * H * L * 4; i++)
    data[i] = (float)i;
  cl_mem im = make_image(CL_MEM_OBJECT_IMAGE2D_ARRAY, &rgbaf, W, H, 0, L,
                         CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, data, 0, 0, &err);
  cl_mem out = clCreateBuffer(context, CL_MEM_WRITE_ONLY, sizeof data, NULL, &err);
  cl_sampler s =
      clCreateSampler(context, CL_FALSE, CL_ADDRESS_CLAMP_TO_EDGE, CL_FILTER_NEAREST, &err);
  cl_kernel k = build_kernel(
      "__kernel void k(read_only image2d_array_t im, sampler_t s, __global float4 *o) {"
      "  int x = get_global_id(0), y = get_global_id(1), z = get_global_id(2);"
      "  o[(z * get_global_size(1) + y) * get_global_size(0) + x] ="
      "      read_imagef(im, s, (float4)(x + 0.5f, y + 0.5f, z, 0));"
      "}",
      "k");
  REQUIRE(im && out && s && k);
  clSetKernelArg(k, 0, sizeof im, &im);
  clSetKernelArg(k, 1, sizeof s, &s);
  clSetKernelArg(k, 2, sizeof out, &out);
  size_t g[3] = {W, H, L};
  CHECK_EQ_INT(clEnqueueNDRangeKernel(queue, k, 3, NULL, g, NULL, 0, NULL, NULL), CL_SUCCESS);
  float res[W * H * L * 4];
  CHECK_EQ_INT(clEnqueueReadBuffer(queue, out, CL_TRUE, 0, sizeof res, res, 0, NULL, NULL),
               CL_SUCCESS);
  CHECK(!memcmp(res, data, sizeof res));
  clReleaseKernel(k);
  clReleaseSampler(s);
  clReleaseMemObject(out);
  clReleaseMemObject(im);
}

int main(void) {
  api_setup();
  RUN(device_queries);
  RUN(supported_formats);
  RUN(create_and_info);
  RUN(create_errors);
  RUN(legacy_entry_points);
  RUN(host_ptr_modes);
  RUN(read_write_pitches);
  RUN(copy_images);
  RUN(fill_images);
  RUN(map_images);
  RUN(image_buffer_copies);
  RUN(buffer_images);
  RUN(samplers);
  RUN(kernel_sampled_reads);
  RUN(kernel_read_write);
  RUN(kernel_queries);
  RUN(kernel_array_sampling);
  api_teardown();
  CHECK_EXIT();
}
