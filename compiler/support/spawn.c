/* Runs the toolchain's programs as child processes with posix_spawn, their
 * output captured for the build log. */
#include "support/spawn.h"

#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

int spawn_and_wait(char *const argv[], struct strbuf *out) {
  int pipefd[2];
  if (pipe2(pipefd, O_CLOEXEC) != 0) {
    strbuf_printf(out, "error: cannot create a pipe: %s\n", strerror(errno));
    return -1;
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, pipefd[1], 1);
  posix_spawn_file_actions_adddup2(&actions, pipefd[1], 2);
  pid_t pid;
  int rc = posix_spawnp(&pid, argv[0], &actions, NULL, argv, environ);
  posix_spawn_file_actions_destroy(&actions);
  close(pipefd[1]);
  if (rc != 0) {
    close(pipefd[0]);
    strbuf_printf(out, "error: cannot run %s: %s\n", argv[0], strerror(rc));
    return -1;
  }
  char buf[4096];
  for (;;) {
    ssize_t n = read(pipefd[0], buf, sizeof buf);
    if (n > 0) strbuf_appendn(out, buf, (size_t)n);
    else if (n == 0 || errno != EINTR) break;
  }
  close(pipefd[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  strbuf_printf(out, "error: %s was killed by signal %d\n", argv[0], WTERMSIG(status));
  return -1;
}
