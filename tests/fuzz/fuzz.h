/* Shared by the libFuzzer targets of tests/fuzz (see tests/fuzz/run). An invariant that
 * breaks aborts, so libFuzzer saves the input as a crash and tests/fuzz/run fails. */
#ifndef RG_FUZZ_FUZZ_H
#define RG_FUZZ_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <jansson.h>

#define FUZZ_ASSERT(cond)                                                                  \
	do {                                                                               \
		if (!(cond)) {                                                             \
			fprintf(stderr, "%s:%d: invariant broken: %s\n", __FILE__, __LINE__, \
				#cond);                                                    \
			abort();                                                           \
		}                                                                          \
	} while (0)

/* libFuzzer's entry points (it declares them in C++ only). */
int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* fuzz.c, linked into every target: the start-up order of the server (STYLE.md 12), a fixed
 * hash seed before any object. */

#endif
