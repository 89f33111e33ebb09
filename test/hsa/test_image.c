/* The HSA image extension through the public API of libaquila-hsa.so:
 * capabilities, the extension tables, create/destroy and their errors,
 * import/export with pitches, copy, clear with format conversion, samplers. */
#include "check.h"
#include "hsa_test_util.h"

#include <hsa/hsa_ext_image.h>

static hsa_agent_t agent;

static hsa_ext_image_format_t fmt(uint32_t type, uint32_t order) {
  hsa_ext_image_format_t f = {type, order};
  return f;
}

static void test_extension_tables(void) {
  bool supported = false;
  CHECK_EQ_INT(hsa_system_extension_supported(HSA_EXTENSION_IMAGES, 1, 0, &supported),
               HSA_STATUS_SUCCESS);
  CHECK(supported);
  uint16_t minor = 9;
  CHECK_EQ_INT(hsa_system_major_extension_supported(HSA_EXTENSION_IMAGES, 1, &minor, &supported),
               HSA_STATUS_SUCCESS);
  CHECK(supported && minor == 0);
  hsa_ext_images_1_00_pfn_t t0;
  CHECK_EQ_INT(hsa_system_get_extension_table(HSA_EXTENSION_IMAGES, 1, 0, &t0), HSA_STATUS_SUCCESS);
  CHECK(t0.hsa_ext_image_create == hsa_ext_image_create);
  CHECK(t0.hsa_ext_sampler_destroy == hsa_ext_sampler_destroy);
  hsa_ext_images_1_pfn_t t1;
  CHECK_EQ_INT(hsa_system_get_major_extension_table(HSA_EXTENSION_IMAGES, 1, sizeof t1, &t1),
               HSA_STATUS_SUCCESS);
  CHECK(t1.hsa_ext_image_create_with_layout == hsa_ext_image_create_with_layout);
  CHECK_EQ_INT(hsa_system_get_extension_table(HSA_EXTENSION_FINALIZER, 1, 0, &t0),
               HSA_STATUS_ERROR_INVALID_ARGUMENT);
  CHECK_EQ_INT(hsa_system_get_extension_table(HSA_EXTENSION_IMAGES, 2, 0, &t0),
               HSA_STATUS_ERROR_INVALID_ARGUMENT);
  uint8_t ext[128];
  CHECK_EQ_INT(hsa_agent_get_info(agent, HSA_AGENT_INFO_EXTENSIONS, ext), HSA_STATUS_SUCCESS);
  CHECK(ext[0] & (1u << HSA_EXTENSION_IMAGES));
  size_t dims[3] = {0, 0, 0};
  CHECK_EQ_INT(
      hsa_agent_get_info(agent, (hsa_agent_info_t)HSA_EXT_AGENT_INFO_IMAGE_3D_MAX_ELEMENTS, dims),
      HSA_STATUS_SUCCESS);
  CHECK(dims[0] >= 2048 && dims[2] >= 2048);
  uint32_t layers = 0;
  CHECK_EQ_INT(hsa_agent_get_info(
                   agent, (hsa_agent_info_t)HSA_EXT_AGENT_INFO_IMAGE_ARRAY_MAX_LAYERS, &layers),
               HSA_STATUS_SUCCESS);
  CHECK(layers >= 2048);
}

static void test_capability(void) {
  static const uint32_t required[] = {
      HSA_EXT_IMAGE_CHANNEL_TYPE_UNORM_INT8,     HSA_EXT_IMAGE_CHANNEL_TYPE_UNORM_INT16,
      HSA_EXT_IMAGE_CHANNEL_TYPE_SIGNED_INT8,    HSA_EXT_IMAGE_CHANNEL_TYPE_SIGNED_INT16,
      HSA_EXT_IMAGE_CHANNEL_TYPE_SIGNED_INT32,   HSA_EXT_IMAGE_CHANNEL_TYPE_UNSIGNED_INT8,
      HSA_EXT_IMAGE_CHANNEL_TYPE_UNSIGNED_INT16, HSA_EXT_IMAGE_CHANNEL_TYPE_UNSIGNED_INT32,
      HSA_EXT_IMAGE_CHANNEL_TYPE_HALF_FLOAT,     HSA_EXT_IMAGE_CHANNEL_TYPE_FLOAT};
  uint32_t mask;
  for (int g = HSA_EXT_IMAGE_GEOMETRY_1D; g <= HSA_EXT_IMAGE_GEOMETRY_1DB; g++)
    for (size_t i = 0; i < sizeof required / sizeof required[0]; i++) {
      hsa_ext_image_format_t f = fmt(required[i], HSA_EXT_IMAGE_CHANNEL_ORDER_RGBA);
      mask = 0;
      CHECK_EQ_INT(hsa_ext_image_get_capability(agent, g, &f, &mask), HSA_STATUS_SUCCESS);
      CHECK((mask & HSA_EXT_IMAGE_CAPABILITY_READ_WRITE) &&
            (mask & HSA_EXT_IMAGE_CAPABILITY_READ_ONLY));
    }
  hsa_ext_image_format_t f =
      fmt(HSA_EXT_IMAGE_CHANNEL_TYPE_UNORM_INT8, HSA_EXT_IMAGE_CHANNEL_ORDER_BGRA);
  CHECK_EQ_INT(hsa_ext_image_get_capability(agent, HSA_EXT_IMAGE_GEOMETRY_2D, &f, &mask),
               HSA_STATUS_SUCCESS);
  CHECK(mask != 0);
  f = fmt(HSA_EXT_IMAGE_CHANNEL_TYPE_FLOAT, HSA_EXT_IMAGE_CHANNEL_ORDER_BGRA); /* 8-bit only */
  CHECK_EQ_INT(hsa_ext_image_get_capability(agent, HSA_EXT_IMAGE_GEOMETRY_2D, &f, &mask),
               HSA_STATUS_SUCCESS);
  CHECK_EQ_INT(mask, 0);
  f = fmt(HSA_EXT_IMAGE_CHANNEL_TYPE_UNORM_SHORT_565, HSA_EXT_IMAGE_CHANNEL_ORDER_RGB);
  CHECK_EQ_INT(hsa_ext_image_get_capability(agent, HSA_EXT_IMAGE_GEOMETRY_2D, &f, &mask),
               HSA_STATUS_SUCCESS);
  CHECK(mask != 0);
  f = fmt(HSA_EXT_IMAGE_CHANNEL_TYPE_UNORM_INT8, HSA_EXT_IMAGE_CHANNEL_ORDER_SRGBA);
  CHECK_EQ_INT(hsa_ext_image_get_capability(agent, HSA_EXT_IMAGE_GEOMETRY_2D, &f, &mask),
               HSA_STATUS_SUCCESS);
  CHECK_EQ_INT(mask, 0);
  CHECK_EQ_INT(hsa_ext_image_get_capability(agent, HSA_EXT_IMAGE_GEOMETRY_2D, NULL, &mask),
               HSA_STATUS_ERROR_INVALID_ARGUMENT);
  CHECK_EQ_INT(hsa_ext_image_get_capability(agent, (hsa_ext_image_geometry_t)99, &f, &mask),
               HSA_STATUS_ERROR_INVALID_ARGUMENT);
  hsa_agent_t bad = {12345};
  CHECK_EQ_INT(hsa_ext_image_get_capability(bad, HSA_EXT_IMAGE_GEOMETRY_2D, &f, &mask),
               HSA_STATUS_ERROR_INVALID_AGENT);
}

static hsa_ext_image_descriptor_t desc2d(size_t w, size_t h, uint32_t type, uint32_t order) {
  hsa_ext_image_descriptor_t d = {HSA_EXT_IMAGE_GEOMETRY_2D, w, h, 0, 0, fmt(type, order)};
  return d;
}

static void test_create_errors(void) {
  hsa_ext_image_descriptor_t d =
      desc2d(4, 3, HSA_EXT_IMAGE_CHANNEL_TYPE_UNORM_INT8, HSA_EXT_IMAGE_CHANNEL_ORDER_RGBA);
  hsa_ext_image_data_info_t info;
  CHECK_EQ_INT(hsa_ext_image_data_get_info(agent, &d, HSA_ACCESS_PERMISSION_RW, &info),
               HSA_STATUS_SUCCESS);
  CHECK_EQ_INT(info.size, 48);
  static uint8_t data[4096];
  hsa_ext_image_t im;
  CHECK_EQ_INT(hsa_ext_image_create(agent, NULL, data, HSA_ACCESS_PERMISSION_RW, &im),
               HSA_STATUS_ERROR_INVALID_ARGUMENT);
  CHECK_EQ_INT(hsa_ext_image_create(agent, &d, NULL, HSA_ACCESS_PERMISSION_RW, &im),
               HSA_STATUS_ERROR_INVALID_ARGUMENT);
  CHECK_EQ_INT(hsa_ext_image_create(agent, &d, data, (hsa_access_permission_t)0, &im),
               HSA_STATUS_ERROR_INVALID_ARGUMENT);
  hsa_ext_image_descriptor_t z = d;
  z.width = 0;
  CHECK_EQ_INT(hsa_ext_image_create(agent, &z, data, HSA_ACCESS_PERMISSION_RW, &im),
               HSA_EXT_STATUS_ERROR_IMAGE_SIZE_UNSUPPORTED);
  z = d;
  z.width = 1u << 20;
  CHECK_EQ_INT(hsa_ext_image_data_get_info(agent, &z, HSA_ACCESS_PERMISSION_RW, &info),
               HSA_EXT_STATUS_ERROR_IMAGE_SIZE_UNSUPPORTED);
  z = d;
  z.format.channel_order = HSA_EXT_IMAGE_CHANNEL_ORDER_DEPTH;
  CHECK_EQ_INT(hsa_ext_image_create(agent, &z, data, HSA_ACCESS_PERMISSION_RW, &im),
               HSA_EXT_STATUS_ERROR_IMAGE_FORMAT_UNSUPPORTED);
  CHECK_EQ_INT(hsa_ext_image_create_with_layout(agent, &d, data, HSA_ACCESS_PERMISSION_RW,
                                                HSA_EXT_IMAGE_DATA_LAYOUT_LINEAR, 10, 0, &im),
               HSA_EXT_STATUS_ERROR_IMAGE_PITCH_UNSUPPORTED);
  CHECK_EQ_INT(hsa_ext_image_create_with_layout(agent, &d, data, HSA_ACCESS_PERMISSION_RW,
                                                HSA_EXT_IMAGE_DATA_LAYOUT_LINEAR, 32, 0, &im),
               HSA_STATUS_SUCCESS);
  CHECK_EQ_INT(hsa_ext_image_destroy(agent, im), HSA_STATUS_SUCCESS);
  hsa_ext_image_t junk = {0};
  CHECK_EQ_INT(hsa_ext_image_destroy(agent, junk), HSA_STATUS_ERROR_INVALID_ARGUMENT);
  junk.handle = (uint64_t)(uintptr_t)data;
  CHECK_EQ_INT(hsa_ext_image_destroy(agent, junk), HSA_STATUS_ERROR_INVALID_ARGUMENT);
}

/* The handle is the address of struct aquila_image: check its fields. */
struct aquila_image_view {
  void *data;
  uint64_t row_pitch, slice_pitch;
  uint32_t width, height, depth, array_size, image_type, channel_order, channel_data_type,
      num_channels, element_size, reserved;
};

static void test_handle_layout(void) {
  static float data[4 * 5 * 3 * 2];
  hsa_ext_image_descriptor_t d = {
      HSA_EXT_IMAGE_GEOMETRY_2DA,
      5,
      3,
      0,
      2,
      fmt(HSA_EXT_IMAGE_CHANNEL_TYPE_FLOAT, HSA_EXT_IMAGE_CHANNEL_ORDER_BGRA)};
  hsa_ext_image_t im;
  CHECK_EQ_INT(hsa_ext_image_create(agent, &d, data, HSA_ACCESS_PERMISSION_RO, &im),
               HSA_EXT_STATUS_ERROR_IMAGE_FORMAT_UNSUPPORTED);
  d.format.channel_order = HSA_EXT_IMAGE_CHANNEL_ORDER_RGBA;
  REQUIRE(hsa_ext_image_create(agent, &d, data, HSA_ACCESS_PERMISSION_RO, &im) ==
          HSA_STATUS_SUCCESS);
  const struct aquila_image_view *v = (const void *)(uintptr_t)im.handle;
  CHECK(v->data == data);
  CHECK_EQ_INT(v->row_pitch, 80);
  CHECK_EQ_INT(v->slice_pitch, 240);
  CHECK(v->width == 5 && v->height == 3 && v->depth == 1 && v->array_size == 2);
  CHECK_EQ_INT(v->image_type, 0x10F3);        /* CL_MEM_OBJECT_IMAGE2D_ARRAY */
  CHECK_EQ_INT(v->channel_order, 0x10B5);     /* CL_RGBA */
  CHECK_EQ_INT(v->channel_data_type, 0x10DE); /* CL_FLOAT */
  CHECK(v->num_channels == 4 && v->element_size == 16);
  CHECK_EQ_INT(hsa_ext_image_destroy(agent, im), HSA_STATUS_SUCCESS);
}

static void test_import_export(void) {
  enum { W = 7, H = 5, D = 3 };
  static uint16_t data[W * H * D * 2];
  hsa_ext_image_descriptor_t d = {
      HSA_EXT_IMAGE_GEOMETRY_3D,
      W,
      H,
      D,
      0,
      fmt(HSA_EXT_IMAGE_CHANNEL_TYPE_UNSIGNED_INT16, HSA_EXT_IMAGE_CHANNEL_ORDER_RG)};
  hsa_ext_image_t im;
  REQUIRE(hsa_ext_image_create(agent, &d, data, HSA_ACCESS_PERMISSION_RW, &im) ==
          HSA_STATUS_SUCCESS);
  /* Region 4x3x2 at (2,1,1), from host rows of 24 bytes and slices of 100. */
  uint8_t host[300], back[300];
  for (int i = 0; i < 300; i++)
    host[i] = (uint8_t)(i * 7 + 1);
  hsa_ext_image_region_t r = {{2, 1, 1}, {4, 3, 2}};
  CHECK_EQ_INT(hsa_ext_image_import(agent, host, 24, 100, im, &r), HSA_STATUS_SUCCESS);
  for (int z = 0; z < 2; z++)
    for (int y = 0; y < 3; y++)
      CHECK(memcmp((uint8_t *)data + ((z + 1) * H + y + 1) * W * 4 + 2 * 4, host + z * 100 + y * 24,
                   16) == 0);
  memset(back, 0, sizeof back);
  CHECK_EQ_INT(hsa_ext_image_export(agent, im, back, 0, 0, &r), HSA_STATUS_SUCCESS);
  for (int z = 0; z < 2; z++)
    for (int y = 0; y < 3; y++)
      CHECK(memcmp(back + (z * 3 + y) * 16, host + z * 100 + y * 24, 16) == 0);
  hsa_ext_image_region_t outside = {{5, 0, 0}, {3, 1, 1}};
  CHECK_EQ_INT(hsa_ext_image_export(agent, im, back, 0, 0, &outside),
               HSA_STATUS_ERROR_INVALID_ARGUMENT);
  CHECK_EQ_INT(hsa_ext_image_import(agent, host, 8, 0, im, &r), HSA_STATUS_ERROR_INVALID_ARGUMENT);
  CHECK_EQ_INT(hsa_ext_image_import(agent, NULL, 0, 0, im, &r), HSA_STATUS_ERROR_INVALID_ARGUMENT);
  CHECK_EQ_INT(hsa_ext_image_destroy(agent, im), HSA_STATUS_SUCCESS);
}

static void test_copy(void) {
  static uint8_t a[8 * 4 * 4], b[8 * 4 * 4];
  for (size_t i = 0; i < sizeof a; i++)
    a[i] = (uint8_t)i;
  hsa_ext_image_descriptor_t d =
      desc2d(8, 4, HSA_EXT_IMAGE_CHANNEL_TYPE_UNORM_INT8, HSA_EXT_IMAGE_CHANNEL_ORDER_RGBA);
  hsa_ext_image_t ia, ib, ic;
  REQUIRE(hsa_ext_image_create(agent, &d, a, HSA_ACCESS_PERMISSION_RW, &ia) == HSA_STATUS_SUCCESS);
  REQUIRE(hsa_ext_image_create(agent, &d, b, HSA_ACCESS_PERMISSION_RW, &ib) == HSA_STATUS_SUCCESS);
  hsa_dim3_t so = {1, 1, 0}, dst = {4, 2, 0}, range = {3, 2, 1};
  CHECK_EQ_INT(hsa_ext_image_copy(agent, ia, &so, ib, &dst, &range), HSA_STATUS_SUCCESS);
  for (int y = 0; y < 2; y++)
    CHECK(memcmp(b + ((2 + y) * 8 + 4) * 4, a + ((1 + y) * 8 + 1) * 4, 12) == 0);
  hsa_dim3_t big = {6, 2, 1};
  CHECK_EQ_INT(hsa_ext_image_copy(agent, ia, &so, ib, &dst, &big),
               HSA_STATUS_ERROR_INVALID_ARGUMENT);
  hsa_ext_image_descriptor_t d2 =
      desc2d(8, 4, HSA_EXT_IMAGE_CHANNEL_TYPE_UNSIGNED_INT8, HSA_EXT_IMAGE_CHANNEL_ORDER_RGBA);
  static uint8_t c[8 * 4 * 4];
  REQUIRE(hsa_ext_image_create(agent, &d2, c, HSA_ACCESS_PERMISSION_RW, &ic) == HSA_STATUS_SUCCESS);
  CHECK_EQ_INT(hsa_ext_image_copy(agent, ia, &so, ic, &dst, &range),
               HSA_STATUS_ERROR_INVALID_ARGUMENT);
  /* Overlapping copy within one image. */
  uint8_t ref[sizeof a];
  memcpy(ref, a, sizeof a);
  hsa_dim3_t o0 = {0, 0, 0}, o1 = {1, 1, 0}, rr = {7, 3, 1};
  CHECK_EQ_INT(hsa_ext_image_copy(agent, ia, &o0, ia, &o1, &rr), HSA_STATUS_SUCCESS);
  for (int y = 0; y < 3; y++)
    CHECK(memcmp(a + ((1 + y) * 8 + 1) * 4, ref + y * 8 * 4, 28) == 0);
  hsa_ext_image_destroy(agent, ia);
  hsa_ext_image_destroy(agent, ib);
  hsa_ext_image_destroy(agent, ic);
}

static void test_clear(void) {
  static uint8_t u8[4 * 4 * 4];
  hsa_ext_image_descriptor_t d =
      desc2d(4, 4, HSA_EXT_IMAGE_CHANNEL_TYPE_UNORM_INT8, HSA_EXT_IMAGE_CHANNEL_ORDER_BGRA);
  hsa_ext_image_t im;
  REQUIRE(hsa_ext_image_create(agent, &d, u8, HSA_ACCESS_PERMISSION_RW, &im) == HSA_STATUS_SUCCESS);
  float color[4] = {1.0f, 0.5f, -3.0f, 0.2f};
  hsa_ext_image_region_t r = {{1, 1, 0}, {2, 3, 1}};
  CHECK_EQ_INT(hsa_ext_image_clear(agent, im, color, &r), HSA_STATUS_SUCCESS);
  const uint8_t *p = u8 + (1 * 4 + 1) * 4;
  CHECK(p[0] == 0 && p[1] == 128 && p[2] == 255 && p[3] == 51); /* stored B G R A */
  CHECK(u8[0] == 0 && u8[15 * 4 + 3] == 0);
  hsa_ext_image_destroy(agent, im);

  static int16_t s16[2 * 2 * 4];
  d = desc2d(2, 2, HSA_EXT_IMAGE_CHANNEL_TYPE_SIGNED_INT16, HSA_EXT_IMAGE_CHANNEL_ORDER_RGBA);
  REQUIRE(hsa_ext_image_create(agent, &d, s16, HSA_ACCESS_PERMISSION_RW, &im) ==
          HSA_STATUS_SUCCESS);
  int32_t icolor[4] = {-40000, 7, 40000, -1};
  hsa_ext_image_region_t all = {{0, 0, 0}, {2, 2, 1}};
  CHECK_EQ_INT(hsa_ext_image_clear(agent, im, icolor, &all), HSA_STATUS_SUCCESS);
  CHECK(s16[12] == -32768 && s16[13] == 7 && s16[14] == 32767 && s16[15] == -1);
  hsa_ext_image_destroy(agent, im);

  static uint16_t h[1 * 1 * 4];
  d = desc2d(1, 1, HSA_EXT_IMAGE_CHANNEL_TYPE_HALF_FLOAT, HSA_EXT_IMAGE_CHANNEL_ORDER_RGBA);
  REQUIRE(hsa_ext_image_create(agent, &d, h, HSA_ACCESS_PERMISSION_RW, &im) == HSA_STATUS_SUCCESS);
  float hc[4] = {1.0f, -2.5f, 1e6f, 0x1p-20f};
  hsa_ext_image_region_t one = {{0, 0, 0}, {1, 1, 1}};
  CHECK_EQ_INT(hsa_ext_image_clear(agent, im, hc, &one), HSA_STATUS_SUCCESS);
  CHECK(h[0] == 0x3c00 && h[1] == 0xc100 && h[2] == 0x7c00 && h[3] == 0x0010);
  hsa_ext_image_destroy(agent, im);

  static uint16_t p565[2];
  d = desc2d(2, 1, HSA_EXT_IMAGE_CHANNEL_TYPE_UNORM_SHORT_565, HSA_EXT_IMAGE_CHANNEL_ORDER_RGB);
  REQUIRE(hsa_ext_image_create(agent, &d, p565, HSA_ACCESS_PERMISSION_RW, &im) ==
          HSA_STATUS_SUCCESS);
  float pc[4] = {1.0f, 0.0f, 0.5f, 1.0f};
  hsa_ext_image_region_t px = {{1, 0, 0}, {1, 1, 1}};
  CHECK_EQ_INT(hsa_ext_image_clear(agent, im, pc, &px), HSA_STATUS_SUCCESS);
  CHECK(p565[0] == 0 && p565[1] == (31u << 11 | 16u));
  CHECK_EQ_INT(hsa_ext_image_clear(agent, im, NULL, &px), HSA_STATUS_ERROR_INVALID_ARGUMENT);
  hsa_ext_image_destroy(agent, im);
}

static void test_sampler(void) {
  hsa_ext_sampler_descriptor_t d = {HSA_EXT_SAMPLER_COORDINATE_MODE_NORMALIZED,
                                    HSA_EXT_SAMPLER_FILTER_MODE_LINEAR,
                                    HSA_EXT_SAMPLER_ADDRESSING_MODE_REPEAT};
  hsa_ext_sampler_t s;
  CHECK_EQ_INT(hsa_ext_sampler_create(agent, &d, &s), HSA_STATUS_SUCCESS);
  CHECK_EQ_INT(s.handle, 0x1 | 0x6 | 0x20);
  CHECK_EQ_INT(hsa_ext_sampler_destroy(agent, s), HSA_STATUS_SUCCESS);
  d = (hsa_ext_sampler_descriptor_t){HSA_EXT_SAMPLER_COORDINATE_MODE_UNNORMALIZED,
                                     HSA_EXT_SAMPLER_FILTER_MODE_NEAREST,
                                     HSA_EXT_SAMPLER_ADDRESSING_MODE_CLAMP_TO_BORDER};
  CHECK_EQ_INT(hsa_ext_sampler_create(agent, &d, &s), HSA_STATUS_SUCCESS);
  CHECK_EQ_INT(s.handle, 0x4 | 0x10);
  d.address_mode = HSA_EXT_SAMPLER_ADDRESSING_MODE_MIRRORED_REPEAT;
  CHECK_EQ_INT(hsa_ext_sampler_create(agent, &d, &s),
               HSA_EXT_STATUS_ERROR_SAMPLER_DESCRIPTOR_UNSUPPORTED);
  d.address_mode = 7;
  CHECK_EQ_INT(hsa_ext_sampler_create(agent, &d, &s), HSA_STATUS_ERROR_INVALID_ARGUMENT);
  CHECK_EQ_INT(hsa_ext_sampler_create(agent, NULL, &s), HSA_STATUS_ERROR_INVALID_ARGUMENT);
  hsa_ext_sampler_t junk = {0x12345678};
  CHECK_EQ_INT(hsa_ext_sampler_destroy(agent, junk), HSA_STATUS_ERROR_INVALID_ARGUMENT);
}

static void test_not_initialized(void) {
  uint32_t mask;
  hsa_ext_image_format_t f = fmt(HSA_EXT_IMAGE_CHANNEL_TYPE_FLOAT, HSA_EXT_IMAGE_CHANNEL_ORDER_R);
  CHECK_EQ_INT(hsa_ext_image_get_capability(agent, HSA_EXT_IMAGE_GEOMETRY_2D, &f, &mask),
               HSA_STATUS_ERROR_NOT_INITIALIZED);
}

int main(void) {
  RUN(test_not_initialized);
  if (hsa_init() != HSA_STATUS_SUCCESS) return 1;
  agent = util_cpu_agent();
  RUN(test_extension_tables);
  RUN(test_capability);
  RUN(test_create_errors);
  RUN(test_handle_layout);
  RUN(test_import_export);
  RUN(test_copy);
  RUN(test_clear);
  RUN(test_sampler);
  hsa_shut_down();
  CHECK_EXIT();
}
