/* pngprobe.c - test helper: decodes a PNG with libpng, prints its size and the brightness of pixel boxes. */
#include <stdio.h>
#include <stdlib.h>

/*
 * Usage: pngprobe FILE [X Y R]...
 * Prints "W H" on the first line, then for each X Y R the mean brightness
 * (R + G + B) / 3, 0 to 255, of the pixels within the box [X-R, X+R] x
 * [Y-R, Y+R] (clipped), one a line, and last the median brightness of the
 * whole picture ("median M"). Exit status 0, 1 when FILE is not a PNG it can
 * decode, 77 when built without libpng (the tests skip).
 */
#ifndef FK_HAVE_PNG
int main(void)
{
    fprintf(stderr, "pngprobe: built without libpng\n");
    return 77;
}
#else
#include <png.h>
#include <string.h>

static int cmp(const void *a, const void *b)
{
    return *(const unsigned char *)a - *(const unsigned char *)b;
}

int main(int argc, char **argv)
{
    if (argc < 2 || (argc - 2) % 3) {
        fprintf(stderr, "usage: pngprobe FILE [X Y R]...\n");
        return 2;
    }
    png_image im;
    memset(&im, 0, sizeof im);
    im.version = PNG_IMAGE_VERSION;
    if (!png_image_begin_read_from_file(&im, argv[1])) {
        fprintf(stderr, "pngprobe: %s: %s\n", argv[1], im.message);
        return 1;
    }
    im.format = PNG_FORMAT_RGB;
    unsigned char *px = malloc(PNG_IMAGE_SIZE(im));
    if (!px || !png_image_finish_read(&im, NULL, px, 0, NULL)) {
        fprintf(stderr, "pngprobe: %s: %s\n", argv[1], im.message);
        return 1;
    }
    int w = (int)im.width, h = (int)im.height;
    printf("%d %d\n", w, h);
    for (int a = 2; a + 2 < argc; a += 3) {
        int x = atoi(argv[a]), y = atoi(argv[a + 1]), r = atoi(argv[a + 2]);
        double s = 0;
        long n = 0;
        for (int j = y - r; j <= y + r; j++)
            for (int i = x - r; i <= x + r; i++) {
                if (i < 0 || j < 0 || i >= w || j >= h) continue;
                const unsigned char *p = px + 3 * ((size_t)j * (size_t)w + (size_t)i);
                s += (p[0] + p[1] + p[2]) / 3.0;
                n++;
            }
        printf("%.1f\n", n ? s / (double)n : 0.0);
    }
    unsigned char *b = malloc((size_t)w * (size_t)h);
    for (size_t i = 0; i < (size_t)w * (size_t)h; i++) b[i] = (unsigned char)((px[3 * i] + px[3 * i + 1] + px[3 * i + 2]) / 3);
    qsort(b, (size_t)w * (size_t)h, 1, cmp);
    printf("median %d\n", b[(size_t)w * (size_t)h / 2]);
    free(b);
    free(px);
    return 0;
}
#endif
