/* Image test functions in OpenCL C, compiled like user code and linked with
 * the builtin library; test_images.c calls them through dlopen with images
 * it builds in memory (struct aquila_image) and sampler bits as the sampler
 * pointer. Vectors cross the boundary as arrays only. */

void t_read2d_f(read_only image2d_t img, sampler_t s, __global const float *c, int n,
                __global float *out) {
  for (int i = 0; i < n; i++)
    vstore4(read_imagef(img, s, vload2(i, c)), i, out);
}
void t_read2d_fi(read_only image2d_t img, sampler_t s, __global const int *c, int n,
                 __global float *out) {
  for (int i = 0; i < n; i++)
    vstore4(read_imagef(img, s, vload2(i, c)), i, out);
}
void t_read2d_nos(read_only image2d_t img, __global const int *c, int n, __global float *out) {
  for (int i = 0; i < n; i++)
    vstore4(read_imagef(img, vload2(i, c)), i, out);
}
void t_read2d_i(read_only image2d_t img, sampler_t s, __global const float *c, int n,
                __global int *out) {
  for (int i = 0; i < n; i++)
    vstore4(read_imagei(img, s, vload2(i, c)), i, out);
}
void t_read2d_ui(read_only image2d_t img, sampler_t s, __global const int *c, int n,
                 __global uint *out) {
  for (int i = 0; i < n; i++)
    vstore4(read_imageui(img, s, vload2(i, c)), i, out);
}
void t_read3d_f(read_only image3d_t img, sampler_t s, __global const float *c, int n,
                __global float *out) {
  for (int i = 0; i < n; i++)
    vstore4(read_imagef(img, s, (float4)(vload3(i, c), 0)), i, out);
}
void t_read1d_f(read_only image1d_t img, sampler_t s, __global const float *c, int n,
                __global float *out) {
  for (int i = 0; i < n; i++)
    vstore4(read_imagef(img, s, c[i]), i, out);
}
void t_read1da_f(read_only image1d_array_t img, sampler_t s, __global const float *c, int n,
                 __global float *out) {
  for (int i = 0; i < n; i++)
    vstore4(read_imagef(img, s, vload2(i, c)), i, out);
}
void t_read2da_f(read_only image2d_array_t img, sampler_t s, __global const float *c, int n,
                 __global float *out) {
  for (int i = 0; i < n; i++)
    vstore4(read_imagef(img, s, (float4)(vload3(i, c), 0)), i, out);
}
void t_read1db_ui(read_only image1d_buffer_t img, __global const int *c, int n,
                  __global uint *out) {
  for (int i = 0; i < n; i++)
    vstore4(read_imageui(img, c[i]), i, out);
}
/* A sampler constant: clang calls __translate_sampler_initializer. */
void t_read_const_sampler(read_only image2d_t img, __global const float *c, int n,
                          __global float *out) {
  const sampler_t s = CLK_NORMALIZED_COORDS_TRUE | CLK_ADDRESS_REPEAT | CLK_FILTER_LINEAR;
  for (int i = 0; i < n; i++)
    vstore4(read_imagef(img, s, vload2(i, c)), i, out);
}

void t_write2d_f(write_only image2d_t img, __global const int *c, __global const float *v, int n) {
  for (int i = 0; i < n; i++)
    write_imagef(img, vload2(i, c), vload4(i, v));
}
void t_write2d_i(write_only image2d_t img, __global const int *c, __global const int *v, int n) {
  for (int i = 0; i < n; i++)
    write_imagei(img, vload2(i, c), vload4(i, v));
}
void t_write2d_ui(write_only image2d_t img, __global const int *c, __global const uint *v, int n) {
  for (int i = 0; i < n; i++)
    write_imageui(img, vload2(i, c), vload4(i, v));
}
void t_write3d_f(write_only image3d_t img, __global const int *c, __global const float *v, int n) {
  for (int i = 0; i < n; i++)
    write_imagef(img, (int4)(vload3(i, c), 0), vload4(i, v));
}
void t_write2da_ui(write_only image2d_array_t img, __global const int *c, __global const uint *v,
                   int n) {
  for (int i = 0; i < n; i++)
    write_imageui(img, (int4)(vload3(i, c), 0), vload4(i, v));
}

void t_query(read_only image2d_t a, write_only image3d_t b, read_only image1d_array_t c,
             read_only image2d_array_t d, read_only image1d_buffer_t e, __global long *out) {
  int k = 0;
  out[k++] = get_image_width(a);
  out[k++] = get_image_height(a);
  out[k++] = get_image_dim(a).y;
  out[k++] = get_image_channel_order(a);
  out[k++] = get_image_channel_data_type(a);
  out[k++] = get_image_depth(b);
  int4 d3 = get_image_dim(b);
  out[k++] = d3.x * 10000 + d3.y * 100 + d3.z + d3.w;
  out[k++] = get_image_array_size(c);
  out[k++] = get_image_width(c);
  out[k++] = get_image_array_size(d);
  out[k++] = get_image_dim(d).x;
  out[k++] = get_image_width(e);
  out[k++] = get_image_channel_order(b);
}
