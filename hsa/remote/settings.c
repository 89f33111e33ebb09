/* The remote agents' client settings (docs/REMOTE.md, "Client settings"):
 * each one from the environment, else from the first configuration file
 * that exists of AQUILA_REMOTE_CONFIG, $XDG_CONFIG_HOME/aquila/remote.conf
 * (~/.config/aquila/remote.conf without it) and /etc/aquila/remote.conf.
 * A file holds NAME=VALUE lines with the environment variables' names;
 * blank lines and lines starting with # are skipped, a value may be in
 * double quotes, and a relative key file is taken from the file's folder.
 * A line that is not a known setting is left out, with an AQUILA_DEBUG
 * line saying where. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../hsa_internal.h"

static const char *const names[] = {"AQUILA_REMOTE", "AQUILA_REMOTE_KEY_FILE",
                                    "AQUILA_REMOTE_TIMEOUT_MS"};
#define NUM_SETTINGS (sizeof names / sizeof names[0])
#define MAX_LINE 4096

static char *values[NUM_SETTINGS];
static pthread_once_t loaded = PTHREAD_ONCE_INIT;

static char *trim(char *s) {
  while (*s == ' ' || *s == '\t')
    s++;
  size_t n = strlen(s);
  while (n && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\n' || s[n - 1] == '\r'))
    s[--n] = 0;
  return s;
}

/* A key file named relative to the configuration file: from its folder. */
static char *resolve(const char *path, const char *value) {
  const char *slash = strrchr(path, '/');
  if (value[0] == '/' || !slash) return strdup(value);
  size_t dir = (size_t)(slash - path) + 1, n = strlen(value);
  char *full = malloc(dir + n + 1);
  if (!full) return NULL;
  memcpy(full, path, dir);
  memcpy(full + dir, value, n + 1);
  return full;
}

static void parse(const char *path, FILE *f) {
  char line[MAX_LINE + 2];
  unsigned number = 0;
  while (fgets(line, sizeof line, f)) {
    number++;
    if (!strchr(line, '\n') && !feof(f)) {
      aq_debug("%s:%u: line longer than %d characters, left out", path, number, MAX_LINE);
      int c;
      while ((c = fgetc(f)) != EOF && c != '\n') {
      }
      continue;
    }
    char *s = trim(line);
    if (!*s || *s == '#') continue;
    char *eq = strchr(s, '=');
    if (!eq) {
      aq_debug("%s:%u: not NAME=VALUE, left out", path, number);
      continue;
    }
    *eq = 0;
    char *name = trim(s), *value = trim(eq + 1);
    size_t n = strlen(value);
    if (n >= 2 && value[0] == '"' && value[n - 1] == '"') {
      value[n - 1] = 0;
      value++;
    }
    size_t i = 0;
    while (i < NUM_SETTINGS && strcmp(names[i], name))
      i++;
    if (i == NUM_SETTINGS) {
      aq_debug("%s:%u: '%s' is not a setting of remote agents, left out", path, number, name);
      continue;
    }
    free(values[i]);
    values[i] = !strcmp(name, "AQUILA_REMOTE_KEY_FILE") ? resolve(path, value) : strdup(value);
  }
}

static void load(void) {
  char user[4096] = "";
  const char *xdg = getenv("XDG_CONFIG_HOME"), *home = getenv("HOME");
  if (xdg && *xdg)
    snprintf(user, sizeof user, "%s/aquila/remote.conf", xdg);
  else if (home && *home)
    snprintf(user, sizeof user, "%s/.config/aquila/remote.conf", home);
  const char *explicit = getenv("AQUILA_REMOTE_CONFIG");
  const char *candidates[] = {explicit && *explicit ? explicit : NULL, user[0] ? user : NULL,
                              "/etc/aquila/remote.conf"};
  for (size_t i = 0; i < sizeof candidates / sizeof candidates[0]; i++) {
    const char *path = candidates[i];
    if (!path) continue;
    FILE *f = fopen(path, "r");
    if (!f) {
      /* A file named on purpose must be there; the others are optional. */
      if (i == 0 || errno != ENOENT)
        aq_debug("remote agents' settings: cannot read %s: %s", path, strerror(errno));
      if (i == 0) return;
      continue;
    }
    parse(path, f);
    fclose(f);
    aq_debug("remote agents' settings from %s", path);
    return;
  }
}

const char *aq_remote_setting(const char *name) {
  const char *e = getenv(name);
  if (e && *e) return e;
  pthread_once(&loaded, load);
  for (size_t i = 0; i < NUM_SETTINGS; i++)
    if (!strcmp(names[i], name)) return values[i];
  return NULL;
}
