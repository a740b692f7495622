/* crccheck.h - the one place a stored CRC is compared: fuzzing builds (-DFK_FUZZ_NO_CRC) accept any, so the fuzzer reaches the parsers behind it. */
#ifndef FK_CRCCHECK_H
#define FK_CRCCHECK_H

#include <stdint.h>

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
