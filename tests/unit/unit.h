/* What every unit test includes: cmocka needs these four headers before <cmocka.h>. */
#ifndef RG_TESTS_UNIT_H
#define RG_TESTS_UNIT_H

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N_ELEMS(a) (sizeof(a) / sizeof((a)[0]))

#endif
