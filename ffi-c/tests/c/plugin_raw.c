/* The control of the dlclose test: a shared library that registers an
 * enable word in its own .data by hand (user_events ioctl) and never
 * unregisters it. After dlclose the kernel still writes there: the test
 * must see its canary change, which proves it can catch the hazard. */
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

struct user_reg {
  uint32_t size;
  uint8_t enable_bit;
  uint8_t enable_size;
  uint16_t flags;
  uint64_t enable_addr;
  uint64_t name_args;
  uint32_t write_index;
} __attribute__((packed));
#define DIAG_IOCSREG 0xC0082A00

static uint32_t word __attribute__((aligned(8)));

int plugin_register(void) {
  int fd = open("/sys/kernel/tracing/user_events_data", O_RDWR | O_CLOEXEC);
  if (fd < 0) return -1;
  struct user_reg reg;
  memset(&reg, 0, sizeof reg);
  reg.size = sizeof reg;
  reg.enable_bit = 0;
  reg.enable_size = 4;
  reg.enable_addr = (uint64_t)(uintptr_t)&word;
  reg.name_args = (uint64_t)(uintptr_t)"craw_ev u32 n";
  /* fd stays open (leaked) so the event stays, as a buggy library would. */
  return ioctl(fd, DIAG_IOCSREG, &reg) == 0 ? 0 : -1;
}
const uint32_t *plugin_word(void) { return &word; }
void plugin_emit(uint32_t n) { (void)n; }
