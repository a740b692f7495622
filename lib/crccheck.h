/* crccheck.h - the one comparison of a stored CRC-32 with a computed one (bypassed in fuzzing builds). */
#ifndef FK_CRCCHECK_H
#define FK_CRCCHECK_H

#include <stdint.h>

/* 1 when the stored CRC matches the computed one. A build with
 * -DFK_FUZZ_NO_CRC (the fuzz harnesses of tests/fuzz, never a program)
 * accepts every CRC, so that mutated input reaches the parsers behind the
 * check instead of stopping at it. */
static inline int fk_crc_ok(uint32_t stored, uint32_t computed)
{
#ifdef FK_FUZZ_NO_CRC
    (void)stored;
    (void)computed;
    return 1;
#else
    return stored == computed;
#endif
}

#endif
