/* PostgreSQL's pg_lsn text, "16/B374D848": two hexadecimal numbers of 1 to 8 digits, the high
 * and the low 32 bits of a WAL position (Recallgate-Commit-LSN, Recallgate-Min-LSN). */
#ifndef RG_CORE_LSN_H
#define RG_CORE_LSN_H

#include <stdbool.h>
#include <stdint.h>

#define RG_LSN_SIZE 18 /* "FFFFFFFF/FFFFFFFF" + NUL */

/* true with *out set when s is pg_lsn text (upper or lower case hexadecimal). */
bool core_lsn_parse(const char *s, uint64_t *out);
/* The text PostgreSQL prints: upper case, no leading zeros ("0/16B3748"). */
void core_lsn_format(uint64_t lsn, char out[RG_LSN_SIZE]);

#endif
