/* A valid x86-64 shared object that is not a CPU code object: it lacks
 * __aquila_kernel_table. */
int aquila_test_not_a_kernel(int x) {
  return x + 1;
}
