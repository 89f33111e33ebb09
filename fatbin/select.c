/* Which code object of a fat binary this machine's CPU can run: the one
 * built for exactly this CPU, else the highest x86-64 microarchitecture
 * level that the CPU supports. Bitcode is not a choice here: it needs the
 * compiler, which is the caller's decision. */
#include <string.h>

#include "aquila/fatbin.h"

static int cpu_supports_level(int level) {
  __builtin_cpu_init();
  switch (level) {
  case 2: return __builtin_cpu_supports("x86-64-v2") != 0;
  case 3: return __builtin_cpu_supports("x86-64-v3") != 0;
  case 4: return __builtin_cpu_supports("x86-64-v4") != 0;
  default: return 0;
  }
}

const struct aquila_fatbin_code *aquila_fatbin_select_cpu_code(const struct aquila_fatbin *fb,
                                                               const char *native_target) {
  const struct aquila_fatbin_code *code = aquila_fatbin_find_code(fb, native_target);
  if (code) return code;
  static const char *const levels[] = {"x86-64-v4", "x86-64-v3", "x86-64-v2"};
  for (int i = 0; i < 3; i++) {
    code = aquila_fatbin_find_code(fb, levels[i]);
    if (code && cpu_supports_level(4 - i)) return code;
  }
  return NULL;
}
