/* The shared key between remote agents' clients and aquilad, and the
 * challenge-response that proves both ends hold it (libsodium): each side
 * sends a fresh random nonce, and answers with HMAC-SHA-256 under the key of
 * its role and both nonces. The key never crosses the network; a recorded
 * exchange does not answer a new challenge. */
#ifndef AQUILA_REMOTE_AUTH_H
#define AQUILA_REMOTE_AUTH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "wire.h"

#define AQ_KEY_BYTES 32u

/* Reads a key file (any bytes, 1 byte to 1 MiB) into a key: the file's
 * BLAKE2b hash. false with the reason in why. */
bool aq_key_load(const char *path, uint8_t key[AQ_KEY_BYTES], char *why, size_t why_size);
void aq_nonce_make(uint8_t nonce[AQ_WIRE_NONCE_BYTES]);
/* role: 'c' (the client's proof) or 'd' (the daemon's). */
void aq_proof_make(const uint8_t key[AQ_KEY_BYTES], char role,
                   const uint8_t client_nonce[AQ_WIRE_NONCE_BYTES],
                   const uint8_t daemon_nonce[AQ_WIRE_NONCE_BYTES],
                   uint8_t proof[AQ_WIRE_PROOF_BYTES]);
bool aq_proof_check(const uint8_t key[AQ_KEY_BYTES], char role,
                    const uint8_t client_nonce[AQ_WIRE_NONCE_BYTES],
                    const uint8_t daemon_nonce[AQ_WIRE_NONCE_BYTES],
                    const uint8_t proof[AQ_WIRE_PROOF_BYTES]);

#endif
