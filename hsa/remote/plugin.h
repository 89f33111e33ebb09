/* The interface between Aquila's HSA runtime and libaquila-remote.so, the
 * client side of remote agents. The runtime loads the plugin only when
 * AQUILA_REMOTE names daemons (so UCX and libsodium never load into other
 * applications), hands it the services below and gets its table back. An
 * agent is named by its index in AQUILA_REMOTE's order. */
#ifndef AQUILA_REMOTE_PLUGIN_H
#define AQUILA_REMOTE_PLUGIN_H

#include <hsa/hsa.h>
#include <stdbool.h>
#include <stdint.h>

#include "wire.h"

#define AQ_REMOTE_PLUGIN_VERSION 4u
#define AQ_REMOTE_PLUGIN_ENTRY "aquila_remote_plugin_start"
#define AQ_REMOTE_MAX_AGENTS 32u

/* What the HSA runtime does for the plugin. */
struct aq_remote_services {
  /* A dispatch ended: sets its completion signal's outcome (fault 0: ran
   * to the end; otherwise the signal a fault raised, SIGPIPE when the
   * daemon was lost), its times on this process's clock (0: not known),
   * then decrements it. */
  void (*dispatch_done)(hsa_signal_t signal, int fault_signal, uint64_t fault_address,
                        const uint32_t group[3], uint64_t start_ns, uint64_t end_ns);
  uint64_t (*now_ns)(void);
  /* A lost agent's daemon admitted this process again: what was loaded
   * there before is gone (its kernel objects mean nothing now). */
  void (*agent_reconnected)(uint32_t agent);
  void (*debug)(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
  /* AQUILA_REMOTE, AQUILA_REMOTE_KEY_FILE, AQUILA_REMOTE_TIMEOUT_MS: from
   * the environment or the configuration file; NULL when not set. */
  const char *(*setting)(const char *name);
};

struct aq_remote_description {
  char name[64];    /* its CPU's model */
  char host[64];    /* the daemon machine's host name */
  char address[96]; /* as in AQUILA_REMOTE */
  char target[128]; /* the fat binary target of its code */
  uint32_t compute_units;
  uint32_t max_workgroup_size;
  uint64_t memory_size;
};

struct aq_remote_kernel {
  uint64_t kernel_object; /* the daemon's */
  uint32_t kernarg_size, kernarg_alignment, group_segment_size, private_segment_size;
  char *name;
};

struct aq_remote_plugin {
  uint32_t version;
  uint32_t num_agents; /* daemons that admitted this client */
  const struct aq_remote_description *(*describe)(uint32_t agent);
  /* false once the daemon was lost (its commands failed), true again
   * when it admitted this process anew. */
  bool (*available)(uint32_t agent);
  /* How many times the agent was admitted anew: memory allocated in an
   * earlier epoch is gone. */
  uint32_t (*epoch)(uint32_t agent);
  hsa_status_t (*allocate)(uint32_t agent, uint64_t size, uint64_t *address);
  void (*release)(uint32_t agent, uint64_t address);
  /* Writes are ordered after the agent's earlier dispatches and before
   * later ones; src may be reused when the call returns. */
  hsa_status_t (*write)(uint32_t agent, uint64_t address, const void *src, uint64_t size);
  hsa_status_t (*fill)(uint32_t agent, uint64_t address, uint64_t size, const void *pattern,
                       uint32_t pattern_size);
  /* Within the agent's memory, ordered like a write. */
  hsa_status_t (*move)(uint32_t agent, uint64_t dst, uint64_t src, uint64_t size);
  /* Returns when the bytes are in dst, after the agent's earlier dispatches. */
  hsa_status_t (*read)(uint32_t agent, void *dst, uint64_t address, uint64_t size);
  /* Copies between two agents' memories, daemon to daemon (the bytes do
   * not pass through this process); after the source's earlier kernels. */
  hsa_status_t (*copy)(uint32_t dst_agent, uint64_t dst, uint32_t src_agent, uint64_t src,
                       uint64_t size);
  /* Loads a code object on the agent: its executable and kernels (the
   * caller frees them with free_kernels). */
  hsa_status_t (*load)(uint32_t agent, const void *code, uint64_t size, uint64_t *executable,
                       struct aq_remote_kernel **kernels, uint32_t *num_kernels);
  void (*free_kernels)(struct aq_remote_kernel *kernels, uint32_t num_kernels);
  void (*unload)(uint32_t agent, uint64_t executable);
  /* Sends a kernel dispatch packet of one of the agent's queues (its id;
   * header: its AQL header) with its kernarg segment; its completion comes
   * through dispatch_done. */
  hsa_status_t (*dispatch)(uint32_t agent, uint32_t queue,
                           const hsa_kernel_dispatch_packet_t *packet, uint16_t header,
                           const void *kernarg, uint32_t kernarg_size, bool profiling);
  /* An image over the agent's memory (image->address, linear layout): the
   * handle its kernels take. Destroyed only once no kernel uses it. */
  hsa_status_t (*image_create)(uint32_t agent, const struct aq_wire_image *image, uint64_t *handle);
  void (*image_destroy)(uint32_t agent, uint64_t handle);
  /* Does the connections' work on the calling thread while waiting(arg)
   * and while some comes at least every max_ns: a reply the caller waits
   * for then arrives without a wake-up of another thread. false when
   * another thread did that work meanwhile. */
  bool (*work_while)(bool (*waiting)(void *arg), void *arg, uint64_t max_ns);
  /* Closes every connection (commands in flight fail). */
  void (*stop)(void);
};

typedef const struct aq_remote_plugin *(*aq_remote_plugin_start_fn)(
    uint32_t version, const struct aq_remote_services *services);

#endif
