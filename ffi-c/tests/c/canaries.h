/* Canaries where an unloaded library's enable word was, for the dlclose
 * tests (dlclose_main.c through the kernel, dlclose_shm_main.c through
 * shared memory): the word's page, mapped again where the library was, and
 * heap blocks, in case the allocator took that address instead. Whoever
 * still writes the old word (the kernel sets bit 0, a recorder writes 0 or
 * 1) changes a canary byte. */
#ifndef USERTRACE_TEST_CANARIES_H
#define USERTRACE_TEST_CANARIES_H
/* MAP_FIXED_NOREPLACE: the including file defines _GNU_SOURCE first. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "check.h"

/* Bit 0 of every byte clear, and neither 0 nor 1. */
#define CANARY 0x5A
#define CANARY_BLOCKS 4096

struct canaries {
  unsigned char *page; /* NULL if the page could not be mapped again */
  unsigned char *blocks[CANARY_BLOCKS];
};

static size_t canary_block_size(int i) { return 8 + (size_t)(i % 32) * 8; }

/* Lays the canaries over the word's old place (call right after dlclose);
 * fails the test if neither the page nor a heap block covers it. */
static void canaries_lay(struct canaries *c, const uint32_t *word, const char *who) {
  uintptr_t page = (uintptr_t)word & ~(uintptr_t)4095;
  unsigned char *mapped = mmap((void *)page, 4096, PROT_READ | PROT_WRITE,
                               MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
  c->page = mapped == (void *)page ? mapped : NULL;
  if (c->page) memset(c->page, CANARY, 4096);
  int word_reused = 0;
  for (int i = 0; i < CANARY_BLOCKS; i++) {
    size_t size = canary_block_size(i);
    c->blocks[i] = (unsigned char *)malloc(size);
    REQUIRE(c->blocks[i] != NULL);
    memset(c->blocks[i], CANARY, size);
    if ((uintptr_t)word >= (uintptr_t)c->blocks[i] && (uintptr_t)word < (uintptr_t)c->blocks[i] + size) word_reused = 1;
  }
  fprintf(stderr, "%s: word %p, page canary %s, heap block over the old word: %s\n", who, (const void *)word,
          c->page ? "mapped" : "not mapped", word_reused ? "yes" : "no");
  REQUIRE(c->page || word_reused);
}

/* How many canary bytes are no longer CANARY. */
static long canaries_changed(const struct canaries *c) {
  long changed = 0;
  if (c->page)
    for (int j = 0; j < 4096; j++) changed += c->page[j] != CANARY;
  for (int i = 0; i < CANARY_BLOCKS; i++)
    for (size_t j = 0; j < canary_block_size(i); j++) changed += c->blocks[i][j] != CANARY;
  return changed;
}

static void canaries_free(struct canaries *c) {
  for (int i = 0; i < CANARY_BLOCKS; i++) free(c->blocks[i]);
}
#endif
