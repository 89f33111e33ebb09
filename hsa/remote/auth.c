/* The shared key and the challenge-response over it (auth.h). */
#include "auth.h"

#include <errno.h>
#include <fcntl.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define KEY_FILE_MAX (1u << 20)

static bool sodium_ready(void) {
  return sodium_init() >= 0; /* 1 when already initialized */
}

bool aq_key_load(const char *path, uint8_t key[AQ_KEY_BYTES], char *why, size_t why_size) {
  if (!sodium_ready()) {
    snprintf(why, why_size, "libsodium failed to start");
    return false;
  }
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    snprintf(why, why_size, "cannot open key file '%s': %s", path, strerror(errno));
    return false;
  }
  struct stat st;
  if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size <= 0 || st.st_size > KEY_FILE_MAX) {
    close(fd);
    snprintf(why, why_size, "key file '%s' must be a regular file of 1 byte to 1 MiB", path);
    return false;
  }
  size_t size = (size_t)st.st_size;
  unsigned char *bytes = sodium_malloc(size);
  size_t got = 0;
  while (bytes && got < size) {
    ssize_t n = read(fd, bytes + got, size - got);
    if (n <= 0) break;
    got += (size_t)n;
  }
  close(fd);
  if (!bytes || got != size) {
    if (bytes) sodium_free(bytes);
    snprintf(why, why_size, "cannot read key file '%s'", path);
    return false;
  }
  crypto_generichash(key, AQ_KEY_BYTES, bytes, size, NULL, 0);
  sodium_free(bytes);
  return true;
}

void aq_nonce_make(uint8_t nonce[AQ_WIRE_NONCE_BYTES]) {
  if (!sodium_ready()) abort(); /* no entropy: nothing safe to do */
  randombytes_buf(nonce, AQ_WIRE_NONCE_BYTES);
}

void aq_proof_make(const uint8_t key[AQ_KEY_BYTES], char role,
                   const uint8_t client_nonce[AQ_WIRE_NONCE_BYTES],
                   const uint8_t daemon_nonce[AQ_WIRE_NONCE_BYTES],
                   uint8_t proof[AQ_WIRE_PROOF_BYTES]) {
  crypto_auth_hmacsha256_state state;
  const unsigned char tag[] = {'a', 'q', 'u', 'i', 'l', 'a', '/', (unsigned char)role};
  crypto_auth_hmacsha256_init(&state, key, AQ_KEY_BYTES);
  crypto_auth_hmacsha256_update(&state, tag, sizeof tag);
  crypto_auth_hmacsha256_update(&state, client_nonce, AQ_WIRE_NONCE_BYTES);
  crypto_auth_hmacsha256_update(&state, daemon_nonce, AQ_WIRE_NONCE_BYTES);
  crypto_auth_hmacsha256_final(&state, proof);
  sodium_memzero(&state, sizeof state);
}

bool aq_proof_check(const uint8_t key[AQ_KEY_BYTES], char role,
                    const uint8_t client_nonce[AQ_WIRE_NONCE_BYTES],
                    const uint8_t daemon_nonce[AQ_WIRE_NONCE_BYTES],
                    const uint8_t proof[AQ_WIRE_PROOF_BYTES]) {
  uint8_t expected[AQ_WIRE_PROOF_BYTES];
  aq_proof_make(key, role, client_nonce, daemon_nonce, expected);
  return sodium_memcmp(expected, proof, AQ_WIRE_PROOF_BYTES) == 0;
}
