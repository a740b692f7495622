/* sniff.c - what a file is by its first bytes, and which program reads it. */
#include "sniff.h"

#include <stdint.h>
#include <string.h>

static uint32_t u32(const unsigned char *b, int big)
{
    return big ? (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | b[3]
               : (uint32_t)b[3] << 24 | (uint32_t)b[2] << 16 | (uint32_t)b[1] << 8 | b[0];
}

static int gadget2(const unsigned char *b, size_t n)
{
    for (int big = 0; big < 2; big++) {
        if (n >= 4 && u32(b, big) == 256 && (n < 264 || u32(b + 260, big) == 256)) return 1;
        if (n >= 16 && u32(b, big) == 8 && !memcmp(b + 4, "HEAD", 4) && u32(b + 12, big) == 8) return 1;
    }
    return 0;
}

static int tipsy(const unsigned char *b, size_t n)
{
    if (n < 28) return 0;
    for (int big = 0; big < 2; big++)
        if (u32(b + 12, big) == 3 &&
            (uint64_t)u32(b + 16, big) + u32(b + 20, big) + u32(b + 24, big) == u32(b + 8, big))
            return 1;
    return 0;
}

int fk_sniff(const void *head, size_t n)
{
    static const unsigned char stream[8] = {0x89, 'F', 'O', 'F', '\r', '\n', 0x1a, '\n'};
    static const unsigned char hdf5[8] = {0x89, 'H', 'D', 'F', '\r', '\n', 0x1a, '\n'};
    const unsigned char *b = head;
    if (n >= 8 && !memcmp(b, stream, 8)) return FK_FILE_STREAM;
    if (n >= 8 && !memcmp(b, hdf5, 8)) return FK_FILE_HDF5;
    if (n >= 3 && b[0] == 0x1f && b[1] == 0x8b && b[2] == 8) return FK_FILE_GZIP;
    if (gadget2(b, n)) return FK_FILE_GADGET2;
    if (tipsy(b, n)) return FK_FILE_TIPSY;
    return FK_FILE_UNKNOWN;
}

const char *fk_sniff_what(int k)
{
    switch (k) {
    case FK_FILE_STREAM: return "a fofkit stream";
    case FK_FILE_TIPSY: return "a tipsy snapshot";
    case FK_FILE_GADGET2: return "a Gadget-2 snapshot";
    case FK_FILE_HDF5: return "an HDF5 file";
    case FK_FILE_GZIP: return "a gzip-compressed file";
    }
    return "";
}

const char *fk_sniff_advice(int k)
{
    switch (k) {
    case FK_FILE_STREAM: return "it needs no conversion: give it to kdbuild, foflink, groups or halostats";
    case FK_FILE_TIPSY: return "convert it with tipsy2bin";
    case FK_FILE_GADGET2: return "convert it with gadget2bin";
    case FK_FILE_HDF5: return "convert a snapshot with hdf52bin";
    case FK_FILE_GZIP: return "tipsy2bin reads gzip-compressed tipsy; gunzip anything else first";
    }
    return "";
}

uint64_t fk_hdf5_superblock_eof(const unsigned char *head, size_t got)
{
    static const unsigned char sig[8] = {0x89, 'H', 'D', 'F', '\r', '\n', 0x1a, '\n'};
    if (got < 14 || memcmp(head, sig, 8)) return 0;
    const unsigned v = head[8];
    const size_t o = v < 2 ? head[13] : head[9], base = v == 0 ? 24 : v == 1 ? 28 : 12;
    if (v > 3 || (o != 2 && o != 4 && o != 8) || base + 3 * o > got) return 0;
    uint64_t b = 0, e = 0;
    for (size_t i = 0; i < o; i++) {
        b |= (uint64_t)head[base + i] << (8 * i);
        e |= (uint64_t)head[base + 2 * o + i] << (8 * i);
    }
    return b + e;
}
