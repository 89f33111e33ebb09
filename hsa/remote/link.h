/* Links: connections between a remote agent's client and aquilad carried by
 * UCX streams, and the loop thread that alone makes UCX calls. Any thread
 * may send a message or close a link; the loop delivers whole, checked
 * messages (wire.h) to the link's handler, one at a time, on its thread. */
#ifndef AQUILA_REMOTE_LINK_H
#define AQUILA_REMOTE_LINK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "wire.h"

struct aq_loop;
struct aq_link;

struct aq_link_handler {
  /* A header arrived (checked): the buffer of header->length bytes its
   * payload lands in, owned by the handler; NULL lets the loop allocate one,
   * freed after on_message. Optional. */
  void *(*payload_buffer)(void *owner, struct aq_link *link, const struct aq_wire_header *header);
  /* A whole message (payload NULL when its length is 0). false closes the
   * link. */
  bool (*on_message)(void *owner, struct aq_link *link, const struct aq_wire_header *header,
                     void *payload);
  /* The link is gone (the peer left, a transport error, a malformed
   * message, aq_link_close): nothing is delivered after this. */
  void (*on_close)(void *owner, struct aq_link *link, const char *why);
  /* A server's new link (the loop's listener): sets its owner. Optional. */
  void *(*on_accept)(void *listener_owner, struct aq_link *link);
  /* A message the link cannot take (malformed, or on_message said false):
   * true when the handler has told the peer why and closes the link itself
   * later (the link then reads nothing more from it, so that the reason is
   * sent before the connection ends); false or absent closes it now. */
  bool (*on_refuse)(void *owner, struct aq_link *link, const char *why);
};

/* Starts UCX and the loop thread; with listen_address ("ADDRESS:PORT",
 * IPv4, [IPv6] or a name), accepts links that use handler and get their
 * owner from its on_accept. NULL with the reason in why. */
struct aq_loop *aq_loop_create(const char *listen_address, const struct aq_link_handler *handler,
                               void *owner, char *why, size_t why_size);
/* Stops the loop: closes every link (their on_close runs) and UCX. */
void aq_loop_destroy(struct aq_loop *loop);
/* The loop's thread is the caller. */
bool aq_loop_is_current(const struct aq_loop *loop);
/* Does the loop's work on the calling thread while waiting(arg) and while
 * work comes at least every max_ns, so that a reply the caller waits for
 * is received by the caller itself, with no other thread to wake on the
 * way (and a long transfer by the thread that waits for it). While
 * another waiter does that work, polls waiting(arg) for max_ns; false when
 * this thread did none of it. Not from the loop thread or a handler. */
bool aq_loop_work_while(struct aq_loop *loop, bool (*waiting)(void *arg), void *arg,
                        uint64_t max_ns);
/* fn(arg) runs on the loop thread each time it has handled everything that
 * came and is about to sleep: the place for replies it held back to send
 * several in one message. Set before the first link opens. */
void aq_loop_set_idle(struct aq_loop *loop, void (*fn)(void *arg), void *arg);

/* A link to a daemon at "ADDRESS:PORT"; messages come from a daemon. The
 * connection is made in the background: a failure arrives as on_close. */
struct aq_link *aq_link_connect(struct aq_loop *loop, const char *address,
                                const struct aq_link_handler *handler, void *owner, char *why,
                                size_t why_size);
/* Whether the peer has proven it holds the key (wire.h's size limits). */
void aq_link_set_authenticated(struct aq_link *link);
/* Sends a message: the header, then the bytes of part1 and part2. Without
 * done, the parts are copied now; with done, they must stay untouched until
 * done(arg, sent) is called (from the loop thread, or from this call when
 * the link is closed). Any thread. */
void aq_link_send(struct aq_link *link, uint16_t type, uint64_t id, const void *part1, size_t size1,
                  const void *part2, size_t size2, void (*done)(void *arg, bool sent), void *arg);
/* aq_link_send with header flags (wire.h). */
void aq_link_send_flags(struct aq_link *link, uint16_t type, uint16_t flags, uint64_t id,
                        const void *part1, size_t size1, const void *part2, size_t size2,
                        void (*done)(void *arg, bool sent), void *arg);
/* Closes the link (on_close follows on the loop's thread). Any thread. */
void aq_link_close(struct aq_link *link, const char *why);
/* References that keep a link's memory (not its connection) alive. */
void aq_link_retain(struct aq_link *link);
void aq_link_release(struct aq_link *link);
/* The peer's address, for messages. */
const char *aq_link_peer(const struct aq_link *link);

/* UCX's TCP segment sizes in this process (UCX_TCP_TX_SEG_SIZE and
 * UCX_TCP_RX_SEG_SIZE, UCX 1.13's defaults when unset) as one number for
 * the handshake, or 0 when a setting cannot be read. Peers whose numbers
 * differ must not talk: a message in a segment larger than the receiver's
 * makes UCX abort the receiving process (an assertion in its TCP
 * transport). */
uint32_t aq_link_tcp_segments(void);
/* Whether two handshakes' numbers let the peers talk. */
bool aq_link_tcp_segments_agree(uint32_t mine, uint32_t theirs);

#endif
