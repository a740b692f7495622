/* pngprobe.c - test helper: decodes a PNG with cairo, prints its size and the brightness of pixel boxes. */
#include <stdio.h>
#include <stdlib.h>

/*
 * Usage: pngprobe FILE [X Y R]...
 * Prints "W H" on the first line, then for each X Y R the mean brightness
 * (R + G + B) / 3, 0 to 255, of the pixels within the box [X-R, X+R] x
 * [Y-R, Y+R] (clipped), one a line, and last the median brightness of the
 * whole picture ("median M"), and the number of its dark pixels, of a
 * brightness under 100 ("dark N": lines and text on a white plot). Exit
 * status 0, 1 when FILE is not a PNG it can
 * decode, 77 when built without cairo (the tests skip).
 */
#ifndef FK_HAVE_CAIRO
int main(void)
{
    fprintf(stderr, "pngprobe: built without cairo\n");
    return 77;
}
#else
#include <cairo.h>
#include <stdint.h>

/* The brightness of pixel (i, j): cairo's native 0xAARRGGBB words (premultiplied; these PNGs are opaque). */
static double bright(const unsigned char *data, int stride, int i, int j)
{
    uint32_t p = ((const uint32_t *)(data + (size_t)j * (size_t)stride))[i];
    return (((p >> 16) & 255) + ((p >> 8) & 255) + (p & 255)) / 3.0;
}

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
    cairo_surface_t *s = cairo_image_surface_create_from_png(argv[1]);
    if (cairo_surface_status(s) != CAIRO_STATUS_SUCCESS) {
        fprintf(stderr, "pngprobe: %s: %s\n", argv[1], cairo_status_to_string(cairo_surface_status(s)));
        return 1;
    }
    cairo_format_t fmt = cairo_image_surface_get_format(s);
    if (fmt != CAIRO_FORMAT_RGB24 && fmt != CAIRO_FORMAT_ARGB32) {
        fprintf(stderr, "pngprobe: %s: not an RGB picture\n", argv[1]);
        return 1;
    }
    int w = cairo_image_surface_get_width(s), h = cairo_image_surface_get_height(s);
    int stride = cairo_image_surface_get_stride(s);
    const unsigned char *data = cairo_image_surface_get_data(s);
    printf("%d %d\n", w, h);
    for (int a = 2; a + 2 < argc; a += 3) {
        int x = atoi(argv[a]), y = atoi(argv[a + 1]), r = atoi(argv[a + 2]);
        double sum = 0;
        long n = 0;
        for (int j = y - r; j <= y + r; j++)
            for (int i = x - r; i <= x + r; i++) {
                if (i < 0 || j < 0 || i >= w || j >= h) continue;
                sum += bright(data, stride, i, j);
                n++;
            }
        printf("%.1f\n", n ? sum / (double)n : 0.0);
    }
    unsigned char *b = malloc((size_t)w * (size_t)h);
    long dark = 0;
    for (int j = 0; j < h; j++)
        for (int i = 0; i < w; i++) {
            b[(size_t)j * (size_t)w + (size_t)i] = (unsigned char)bright(data, stride, i, j);
            dark += b[(size_t)j * (size_t)w + (size_t)i] < 100;
        }
    qsort(b, (size_t)w * (size_t)h, 1, cmp);
    printf("median %d\n", b[(size_t)w * (size_t)h / 2]);
    printf("dark %ld\n", dark);
    free(b);
    cairo_surface_destroy(s);
    return 0;
}
#endif
