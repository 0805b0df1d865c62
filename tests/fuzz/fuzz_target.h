/* fuzz_target.h — the libFuzzer entry point that every fuzz target defines and fuzz_driver.c calls.
 */
#ifndef PB_FUZZ_TARGET_H
#define PB_FUZZ_TARGET_H

#include <stddef.h>
#include <stdint.h>

/* Parses one input and checks invariants on what was parsed; aborts when one is violated.
 * Returns 0 (libFuzzer's convention).  `data` is borrowed and need not be NUL-terminated. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#endif
