/* The remote agents' wire and links, against a running aquilad (a unit
 * test of hsa/remote/: it links link.c, wire.c and auth.c). Usage:
 *   test_remote_link ADDR:PORT KEY_FILE
 * The daemon must refuse, with a reason it sends before the connection
 * ends, a connection that sends a malformed message, another wire version, a
 * message before proving the key, a wrong proof, a dispatch of a kernel it
 * never loaded, a write outside the client's memory or the destruction of
 * an image not its own, refuse an image over memory not the client's, and
 * keep serving others. aq_wire_check itself is run over crafted and random messages. */
#include <hsa/hsa_ext_image.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../../hsa/remote/auth.h"
#include "../../hsa/remote/link.h"
#include "../../hsa/remote/wire.h"
#include "../check.h"

static const char *address;
static uint8_t key[AQ_KEY_BYTES];
static struct aq_loop *loop;

struct peer {
  pthread_mutex_t lock;
  pthread_cond_t cond;
  bool closed;
  bool welcomed;
  bool challenged;
  struct aq_wire_challenge challenge;
  uint8_t nonce[AQ_WIRE_NONCE_BYTES];
  bool replied;
  struct aq_wire_reply reply;
  bool refused;
  char reason[AQ_WIRE_MAX_REASON];
};

static bool on_message(void *owner, struct aq_link *link, const struct aq_wire_header *h,
                       void *payload) {
  struct peer *p = owner;
  pthread_mutex_lock(&p->lock);
  if (h->type == AQ_MSG_CHALLENGE) {
    memcpy(&p->challenge, payload, sizeof p->challenge);
    p->challenged = true;
  } else if (h->type == AQ_MSG_WELCOME) {
    p->welcomed = true;
    aq_link_set_authenticated(link);
  } else if (h->type == AQ_MSG_REPLY && !(h->flags & AQ_WIRE_FLAG_RAW)) {
    memcpy(&p->reply, payload, sizeof p->reply);
    p->replied = true;
  } else if (h->type == AQ_MSG_REFUSED) {
    snprintf(p->reason, sizeof p->reason, "%s", (const char *)payload);
    p->refused = true;
  }
  bool refused = p->refused;
  pthread_cond_broadcast(&p->cond);
  pthread_mutex_unlock(&p->lock);
  return !refused; /* as a client does: the close is this end's */
}

static void on_close(void *owner, struct aq_link *link, const char *why) {
  struct peer *p = owner;
  pthread_mutex_lock(&p->lock);
  p->closed = true;
  pthread_cond_broadcast(&p->cond);
  pthread_mutex_unlock(&p->lock);
}

static const struct aq_link_handler handler = {.on_message = on_message, .on_close = on_close};

/* Waits up to 5 s for *flag; returns it. */
static bool wait_for(struct peer *p, bool *flag) {
  struct timespec deadline;
  clock_gettime(CLOCK_REALTIME, &deadline);
  deadline.tv_sec += 5;
  pthread_mutex_lock(&p->lock);
  while (!*flag && pthread_cond_timedwait(&p->cond, &p->lock, &deadline) == 0) {
  }
  bool v = *flag;
  pthread_mutex_unlock(&p->lock);
  return v;
}

/* Refused with a reason that says because_of, and the link closed: the
 * reason arrives before the connection ends. */
static void check_refused(struct peer *p, const char *because_of) {
  CHECK(wait_for(p, &p->closed));
  CHECK(p->refused);
  if (!strstr(p->reason, because_of)) {
    printf("  refused for '%s', expected a reason with '%s'\n", p->reason, because_of);
    CHECK(0);
  }
}

static struct aq_link *open_peer(struct peer *p) {
  memset(p, 0, sizeof *p);
  pthread_mutex_init(&p->lock, NULL);
  pthread_cond_init(&p->cond, NULL);
  char why[128];
  struct aq_link *link = aq_link_connect(loop, address, &handler, p, why, sizeof why);
  if (!link) printf("  connect: %s\n", why);
  return link;
}

static void hello(struct aq_link *link, struct peer *p) {
  struct aq_wire_hello h = {.version = AQ_WIRE_VERSION};
  aq_nonce_make(p->nonce);
  memcpy(h.nonce, p->nonce, sizeof h.nonce);
  aq_link_send(link, AQ_MSG_HELLO, 0, &h, sizeof h, NULL, 0, NULL, NULL);
}

/* The whole handshake with the right key. */
static bool admitted(struct aq_link *link, struct peer *p) {
  hello(link, p);
  if (!wait_for(p, &p->challenged)) return false;
  if (!aq_proof_check(key, 'd', p->nonce, p->challenge.nonce, p->challenge.proof)) return false;
  uint8_t proof[AQ_WIRE_PROOF_BYTES];
  aq_proof_make(key, 'c', p->nonce, p->challenge.nonce, proof);
  aq_link_send(link, AQ_MSG_AUTH, 0, proof, sizeof proof, NULL, 0, NULL, NULL);
  return wait_for(p, &p->welcomed);
}

/* Closes the link and waits for its on_close: p lives on the test's stack,
 * which the next test reuses. */
static void finish(struct aq_link *link, struct peer *p) {
  aq_link_close(link, "test over");
  wait_for(p, &p->closed);
  aq_link_release(link);
}

static void wire_check_rejects_malformed(void) {
  struct aq_wire_header h = {AQ_WIRE_MAGIC, AQ_MSG_HELLO, 0, 0, sizeof(struct aq_wire_hello)};
  struct aq_wire_hello hello_msg = {.version = AQ_WIRE_VERSION};
  CHECK(aq_wire_check(&h, &hello_msg, false, false));
  /* Another version's hello is the daemon's to refuse, with a reason. */
  hello_msg.version = 99;
  CHECK(aq_wire_check(&h, &hello_msg, false, false));
  h.length = 2;
  CHECK(!aq_wire_check(&h, &hello_msg, false, false));
  /* A refusal's reason ends within its message. */
  h = (struct aq_wire_header){AQ_WIRE_MAGIC, AQ_MSG_REFUSED, 0, 0, 4};
  CHECK(aq_wire_check(&h, "abc", true, false));
  CHECK(!aq_wire_check(&h, "abcd", true, false));
  h.length = AQ_WIRE_MAX_REASON + 1;
  CHECK(!aq_wire_check(&h, NULL, true, false));
  h = (struct aq_wire_header){AQ_WIRE_MAGIC, AQ_MSG_HELLO, 0, 0, sizeof(struct aq_wire_hello)};
  h.magic = 0;
  CHECK(!aq_wire_check(&h, NULL, false, false));
  h = (struct aq_wire_header){AQ_WIRE_MAGIC, 0, 0, 0, 0};
  CHECK(!aq_wire_check(&h, NULL, false, true));
  h = (struct aq_wire_header){AQ_WIRE_MAGIC, AQ_MSG_TYPE_END, 0, 0, 0};
  CHECK(!aq_wire_check(&h, NULL, false, true));
  /* Nothing but the handshake, and nothing long, before the key is proven. */
  h = (struct aq_wire_header){AQ_WIRE_MAGIC, AQ_MSG_ALLOC, 0, 0, 8};
  CHECK(!aq_wire_check(&h, NULL, false, false));
  CHECK(aq_wire_check(&h, NULL, false, true));
  h = (struct aq_wire_header){AQ_WIRE_MAGIC, AQ_MSG_HELLO, 0, 0, 1u << 20};
  CHECK(!aq_wire_check(&h, NULL, false, false));
  /* Lengths and counts inside payloads. */
  struct {
    struct aq_wire_dispatch d;
    unsigned char kernarg[16];
  } dispatch = {
      {.setup = 1, .workgroup_size = {1, 1, 1}, .grid_size = {1, 1, 1}, .kernarg_size = 16}};
  h = (struct aq_wire_header){AQ_WIRE_MAGIC, AQ_MSG_DISPATCH, 0, 0, sizeof dispatch};
  CHECK(aq_wire_check(&h, &dispatch, false, true));
  dispatch.d.kernarg_size = 17;
  CHECK(!aq_wire_check(&h, &dispatch, false, true));
  dispatch.d.kernarg_size = 16;
  dispatch.d.setup = 4;
  CHECK(!aq_wire_check(&h, &dispatch, false, true));
  dispatch.d.setup = 1;
  dispatch.d.grid_size[1] = 0;
  CHECK(!aq_wire_check(&h, &dispatch, false, true));
  struct {
    struct aq_wire_fill f;
    unsigned char pattern[3];
  } fill = {{0, 9, 3}, {1, 2, 3}};
  h = (struct aq_wire_header){AQ_WIRE_MAGIC, AQ_MSG_FILL, 0, 0, sizeof fill.f + 3};
  CHECK(aq_wire_check(&h, &fill, false, true));
  fill.f.size = 10;
  CHECK(!aq_wire_check(&h, &fill, false, true));
  struct aq_wire_range r = {0, AQ_WIRE_MAX_PAYLOAD + 1};
  h = (struct aq_wire_header){AQ_WIRE_MAGIC, AQ_MSG_READ, 0, 0, sizeof r};
  CHECK(!aq_wire_check(&h, &r, false, true));
  /* A LOAD reply whose kernel names overrun it. */
  struct {
    struct aq_wire_reply reply;
    struct aq_wire_kernel k;
    char name[4];
  } loaded = {{0, 1, 0}, {.name_length = 4}, {'a', 'b', 'c', 'd'}};
  size_t loaded_size = sizeof loaded.reply + sizeof loaded.k + 4;
  CHECK(aq_wire_check_loaded(&loaded, loaded_size));
  loaded.k.name_length = 5;
  CHECK(!aq_wire_check_loaded(&loaded, loaded_size));
  loaded.k.name_length = 4;
  loaded.reply.reserved = 2;
  CHECK(!aq_wire_check_loaded(&loaded, loaded_size));
  loaded.reply.reserved = 1;
  loaded.name[1] = 0;
  CHECK(!aq_wire_check_loaded(&loaded, loaded_size));
}

/* Random headers and payloads: every answer is a clean yes or no. */
static void wire_check_random(void) {
  unsigned seed = 12345;
  unsigned char payload[512];
  int accepted = 0;
  for (int i = 0; i < 200000; i++) {
    struct aq_wire_header h;
    unsigned char *b = (unsigned char *)&h;
    for (size_t j = 0; j < sizeof h; j++)
      b[j] = (unsigned char)rand_r(&seed);
    h.magic = (i & 1) ? AQ_WIRE_MAGIC : h.magic;
    h.type = (uint16_t)(h.type % (AQ_MSG_TYPE_END + 2));
    h.length %= sizeof payload + 1;
    for (size_t j = 0; j < h.length; j++)
      payload[j] = (unsigned char)rand_r(&seed);
    accepted += aq_wire_check(&h, payload, i & 2, i & 4);
    accepted += aq_wire_check_loaded(payload, h.length);
  }
  CHECK(accepted >= 0);
}

static void malformed_header_closes(void) {
  struct peer p;
  struct aq_link *link = open_peer(&p);
  REQUIRE(link);
  aq_link_send(link, 999, 0, "junk", 4, NULL, 0, NULL, NULL);
  check_refused(&p, "malformed message");
  aq_link_release(link);
}

static void message_before_key_closes(void) {
  struct peer p;
  struct aq_link *link = open_peer(&p);
  REQUIRE(link);
  uint64_t size = 4096;
  aq_link_send(link, AQ_MSG_ALLOC, 1, &size, sizeof size, NULL, 0, NULL, NULL);
  check_refused(&p, "before it proved the key");
  CHECK(!p.replied);
  aq_link_release(link);
}

static void wrong_proof_closes(void) {
  struct peer p;
  struct aq_link *link = open_peer(&p);
  REQUIRE(link);
  hello(link, &p);
  CHECK(wait_for(&p, &p.challenged));
  uint8_t proof[AQ_WIRE_PROOF_BYTES] = {0};
  aq_link_send(link, AQ_MSG_AUTH, 0, proof, sizeof proof, NULL, 0, NULL, NULL);
  check_refused(&p, "it does not hold the key");
  CHECK(!p.welcomed);
  aq_link_release(link);
}

/* A client of another wire version (another Aquila release) hears which
 * version the daemon speaks, whatever the size of its hello. */
static void other_wire_version_refused(void) {
  struct peer p;
  struct aq_link *link = open_peer(&p);
  REQUIRE(link);
  struct {
    struct aq_wire_hello h;
    uint32_t more;
  } newer = {{.version = AQ_WIRE_VERSION + 1}, 7};
  aq_link_send(link, AQ_MSG_HELLO, 0, &newer, sizeof newer, NULL, 0, NULL, NULL);
  char want[64];
  snprintf(want, sizeof want, "wire version %u, this daemon version %u", AQ_WIRE_VERSION + 1,
           AQ_WIRE_VERSION);
  check_refused(&p, want);
  CHECK(!p.challenged);
  aq_link_release(link);
}

static void unknown_kernel_closes(void) {
  struct peer p;
  struct aq_link *link = open_peer(&p);
  REQUIRE(link);
  REQUIRE(admitted(link, &p));
  struct aq_wire_dispatch d = {.setup = 1,
                               .workgroup_size = {1, 1, 1},
                               .grid_size = {1, 1, 1},
                               .kernel_object = 0x1000,
                               .kernarg_size = 0};
  aq_link_send(link, AQ_MSG_DISPATCH, 7, &d, sizeof d, NULL, 0, NULL, NULL);
  check_refused(&p, "DISPATCH");
  aq_link_release(link);
}

static void write_outside_own_memory_closes(void) {
  struct peer p;
  struct aq_link *link = open_peer(&p);
  REQUIRE(link);
  REQUIRE(admitted(link, &p));
  uint64_t size = 4096;
  aq_link_send(link, AQ_MSG_ALLOC, 1, &size, sizeof size, NULL, 0, NULL, NULL);
  REQUIRE(wait_for(&p, &p.replied));
  CHECK_EQ_INT(p.reply.status, 0);
  /* One byte past the end of its allocation. */
  uint64_t address = p.reply.value + 1;
  char bytes[4096] = {0};
  aq_link_send(link, AQ_MSG_WRITE, address, bytes, sizeof bytes, NULL, 0, NULL, NULL);
  check_refused(&p, "WRITE");
  aq_link_release(link);
}

/* An image whose bytes would pass the end of the client's allocation is
 * refused (the link stays); one inside it is made, and destroyed. */
static void image_outside_own_memory_refused(void) {
  struct peer p;
  struct aq_link *link = open_peer(&p);
  REQUIRE(link);
  REQUIRE(admitted(link, &p));
  uint64_t size = 4096;
  aq_link_send(link, AQ_MSG_ALLOC, 1, &size, sizeof size, NULL, 0, NULL, NULL);
  REQUIRE(wait_for(&p, &p.replied));
  REQUIRE(p.reply.status == 0);
  struct aq_wire_image im = {
      .address = p.reply.value,
      .width = 64, /* 64 x 64 RGBA floats: 64 KiB */
      .height = 64,
      .geometry = HSA_EXT_IMAGE_GEOMETRY_2D,
      .channel_type = HSA_EXT_IMAGE_CHANNEL_TYPE_FLOAT,
      .channel_order = HSA_EXT_IMAGE_CHANNEL_ORDER_RGBA,
      .access = HSA_ACCESS_PERMISSION_RW,
  };
  p.replied = false;
  aq_link_send(link, AQ_MSG_IMAGE_CREATE, 2, &im, sizeof im, NULL, 0, NULL, NULL);
  REQUIRE(wait_for(&p, &p.replied));
  CHECK(p.reply.status != 0);
  /* Descriptors that are no image: refused, the link stays. */
  struct aq_wire_image bad[4] = {im, im, im, im};
  bad[0].geometry = 99;
  bad[1].channel_type = 999;
  bad[2].row_pitch = 1ull << 62; /* its size does not fit in 64 bits */
  bad[3].width = 1ull << 40;
  for (int i = 0; i < 4; i++) {
    p.replied = false;
    aq_link_send(link, AQ_MSG_IMAGE_CREATE, 10 + i, &bad[i], sizeof bad[i], NULL, 0, NULL, NULL);
    REQUIRE(wait_for(&p, &p.replied));
    CHECK(p.reply.status != 0);
  }
  CHECK(!p.closed);
  im.width = im.height = 16; /* 4 KiB: all of it */
  p.replied = false;
  aq_link_send(link, AQ_MSG_IMAGE_CREATE, 3, &im, sizeof im, NULL, 0, NULL, NULL);
  REQUIRE(wait_for(&p, &p.replied));
  CHECK_EQ_INT(p.reply.status, 0);
  CHECK(p.reply.value != 0);
  uint64_t handle = p.reply.value;
  aq_link_send(link, AQ_MSG_IMAGE_DESTROY, 0, &handle, sizeof handle, NULL, 0, NULL, NULL);
  CHECK(!p.closed);
  finish(link, &p);
}

/* Destroying an image that is not the client's closes the link. */
static void image_destroy_unknown_closes(void) {
  struct peer p;
  struct aq_link *link = open_peer(&p);
  REQUIRE(link);
  REQUIRE(admitted(link, &p));
  uint64_t handle = 0x1000;
  aq_link_send(link, AQ_MSG_IMAGE_DESTROY, 0, &handle, sizeof handle, NULL, 0, NULL, NULL);
  check_refused(&p, "IMAGE_DESTROY");
  aq_link_release(link);
}

static void over_memory_limit_refused(void) {
  struct peer p;
  struct aq_link *link = open_peer(&p);
  REQUIRE(link);
  REQUIRE(admitted(link, &p));
  uint64_t size = 1ull << 60;
  aq_link_send(link, AQ_MSG_ALLOC, 1, &size, sizeof size, NULL, 0, NULL, NULL);
  REQUIRE(wait_for(&p, &p.replied));
  CHECK(p.reply.status != 0);
  CHECK(!p.closed);
  finish(link, &p);
}

static void daemon_still_serves(void) {
  struct peer p;
  struct aq_link *link = open_peer(&p);
  REQUIRE(link);
  CHECK(admitted(link, &p));
  aq_link_send(link, AQ_MSG_PING, 3, NULL, 0, NULL, 0, NULL, NULL);
  CHECK(wait_for(&p, &p.replied));
  finish(link, &p);
}

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: test_remote_link ADDR:PORT KEY_FILE\n");
    return 2;
  }
  address = argv[1];
  char why[256];
  if (!aq_key_load(argv[2], key, why, sizeof why) ||
      !(loop = aq_loop_create(NULL, NULL, NULL, why, sizeof why))) {
    printf("not ok setup: %s\n", why);
    return 1;
  }
  RUN(wire_check_rejects_malformed);
  RUN(wire_check_random);
  RUN(malformed_header_closes);
  RUN(message_before_key_closes);
  RUN(wrong_proof_closes);
  RUN(other_wire_version_refused);
  RUN(unknown_kernel_closes);
  RUN(write_outside_own_memory_closes);
  RUN(over_memory_limit_refused);
  RUN(image_outside_own_memory_refused);
  RUN(image_destroy_unknown_closes);
  RUN(daemon_still_serves);
  aq_loop_destroy(loop);
  CHECK_EXIT();
}
