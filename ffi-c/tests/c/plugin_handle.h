/* A test plugin (plugin.c, plugin_raw.c, plugin_leak.c) loaded with
 * dlopen, with the three functions each exports, for the dlclose tests
 * (dlclose_main.c through the kernel, dlclose_shm_main.c through shared
 * memory). */
#ifndef USERTRACE_TEST_PLUGIN_HANDLE_H
#define USERTRACE_TEST_PLUGIN_HANDLE_H
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>

#include "check.h"

struct plugin {
  void *lib;
  int (*register_events)(void);
  const uint32_t *(*word)(void);
  void (*emit)(uint32_t);
};

/* Loads `library` and finds its functions; fails the test if it cannot. */
static struct plugin plugin_open(const char *library) {
  struct plugin p;
  p.lib = dlopen(library, RTLD_NOW | RTLD_LOCAL);
  if (!p.lib) {
    fprintf(stderr, "dlopen %s: %s\n", library, dlerror());
    exit(1);
  }
  p.register_events = (int (*)(void))dlsym(p.lib, "plugin_register");
  p.word = (const uint32_t *(*)(void))dlsym(p.lib, "plugin_word");
  p.emit = (void (*)(uint32_t))dlsym(p.lib, "plugin_emit");
  REQUIRE(p.register_events && p.word && p.emit);
  return p;
}

/* Unloads it, and checks that it really is unloaded. */
static void plugin_close(struct plugin *p, const char *library) {
  REQUIRE(dlclose(p->lib) == 0);
  REQUIRE(dlopen(library, RTLD_NOW | RTLD_NOLOAD) == NULL);
  p->lib = NULL;
}
#endif
