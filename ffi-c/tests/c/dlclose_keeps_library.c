/* A program that does not link libusertrace loads a plugin that does,
 * registers the plugin's event, and unloads the plugin: libusertrace stays
 * loaded (it is linked with -z nodelete). Over user_events, its registrar
 * thread lives until the process exits, so its code must stay mapped too.
 *   dlclose_keeps_library PLUGIN */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>

#include "check.h"
#include "plugin_handle.h"

int main(int argc, char **argv) {
  REQUIRE(argc == 2);
  REQUIRE(dlopen("libusertrace.so.0", RTLD_NOW | RTLD_NOLOAD) == NULL);
  struct plugin plugin = plugin_open(argv[1]);
  /* Registered (or, with no transport here, refused): either way the
   * library has run. */
  plugin.register_events();
  plugin_close(&plugin, argv[1]);
  CHECK(dlopen("libusertrace.so.0", RTLD_NOW | RTLD_NOLOAD) != NULL);
  return check_done("dlclose_keeps_library");
}
