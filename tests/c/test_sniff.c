/* test_sniff.c - what a file is by its first bytes: each kind, either byte order, cut short, and what is none of them. */
#include <stdint.h>
#include <string.h>

#include "check.h"
#include "sniff.h"

static void put32(unsigned char *b, uint32_t v, int big)
{
    for (int i = 0; i < 4; i++) b[big ? 3 - i : i] = (unsigned char)(v >> 8 * i);
}

int main(void)
{
    unsigned char b[FK_SNIFF_BYTES];
    memset(b, 0, sizeof b);
    CHECK(fk_sniff(b, 0) == FK_FILE_UNKNOWN && fk_sniff(b, sizeof b) == FK_FILE_UNKNOWN);
    CHECK(!strcmp(fk_sniff_what(FK_FILE_UNKNOWN), "") && !strcmp(fk_sniff_advice(FK_FILE_UNKNOWN), ""));

    memcpy(b, "\x89" "FOF\r\n\x1a\n", 8);
    CHECK(fk_sniff(b, 8) == FK_FILE_STREAM && fk_sniff(b, 7) == FK_FILE_UNKNOWN);
    memcpy(b, "\x89" "HDF\r\n\x1a\n", 8);
    CHECK(fk_sniff(b, 64) == FK_FILE_HDF5 && strstr(fk_sniff_advice(FK_FILE_HDF5), "hdf52bin"));
    memcpy(b, "\x1f\x8b\x08", 3);
    CHECK(fk_sniff(b, 3) == FK_FILE_GZIP);
    b[2] = 7;
    CHECK(fk_sniff(b, 3) == FK_FILE_UNKNOWN);

    for (int big = 0; big < 2; big++) {
        /* Gadget-2 format 1: 256, the header, 256 (both markers checked when there) */
        memset(b, 0, sizeof b);
        put32(b, 256, big);
        CHECK(fk_sniff(b, 4) == FK_FILE_GADGET2 && fk_sniff(b, 64) == FK_FILE_GADGET2);
        CHECK(fk_sniff(b, 264) == FK_FILE_UNKNOWN); /* the closing marker is 0 */
        put32(b + 260, 256, big);
        CHECK(fk_sniff(b, 264) == FK_FILE_GADGET2 && strstr(fk_sniff_advice(FK_FILE_GADGET2), "gadget2bin"));
        put32(b + 260, 256, !big);
        CHECK(fk_sniff(b, 264) == FK_FILE_UNKNOWN);
        /* format 2: 8, "HEAD", 264, 8 */
        memset(b, 0, sizeof b);
        put32(b, 8, big);
        memcpy(b + 4, "HEAD", 4);
        put32(b + 8, 264, big);
        put32(b + 12, 8, big);
        CHECK(fk_sniff(b, 16) == FK_FILE_GADGET2 && fk_sniff(b, 15) == FK_FILE_UNKNOWN);
        memcpy(b + 4, "POS ", 4);
        CHECK(fk_sniff(b, 16) == FK_FILE_UNKNOWN);
        /* tipsy: ndim 3, nbodies the sum of the counts */
        memset(b, 0, sizeof b);
        put32(b + 8, 10, big);
        put32(b + 12, 3, big);
        put32(b + 16, 2, big), put32(b + 20, 5, big), put32(b + 24, 3, big);
        CHECK(fk_sniff(b, 32) == FK_FILE_TIPSY && fk_sniff(b, 27) == FK_FILE_UNKNOWN);
        CHECK(strstr(fk_sniff_advice(FK_FILE_TIPSY), "tipsy2bin") != NULL);
        put32(b + 8, 11, big);
        CHECK(fk_sniff(b, 32) == FK_FILE_UNKNOWN);
    }
    /* text is nothing of these */
    const char *text = "# halostats catalogue\nid n mass\n1 20 3.5\n";
    CHECK(fk_sniff(text, strlen(text)) == FK_FILE_UNKNOWN);
    CHECK_DONE();
}
