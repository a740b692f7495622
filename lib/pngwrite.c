/* pngwrite.c - writes an fk_image as an 8-bit RGB PNG through libpng (when the build has it). */
#include "pngwrite.h"

#ifdef FK_HAVE_PNG
#include <errno.h>
#include <png.h>

#include "fileio.h"

int fk_png_available(void)
{
    return 1;
}

/* Where libpng writes, and why it stopped: its message, or the errno of a
 * failed write (the write error of every output, fileio.h). */
typedef struct sink {
    FILE *f;
    int errnum;
    char why[200];
} sink;

/* libpng reports errors by longjmp; its message is kept for fk_error. */
static void on_error(png_structp p, png_const_charp msg)
{
    sink *k = png_get_error_ptr(p);
    snprintf(k->why, sizeof k->why, "%s", msg);
    png_longjmp(p, 1);
}

static void on_write(png_structp p, png_bytep data, size_t n)
{
    sink *k = png_get_io_ptr(p);
    if (fwrite(data, 1, n, k->f) != n) {
        k->errnum = errno ? errno : EIO;
        png_error(p, "write error");
    }
}

static void on_flush(png_structp p)
{
    (void)p;
}

static void on_warning(png_structp p, png_const_charp msg)
{
    (void)p;
    (void)msg; /* the library never prints */
}

int fk_png_write(FILE *f, const fk_image *im, const char *name, fk_error *err)
{
    sink k = {f, 0, ""};
    png_structp p = png_create_write_struct(PNG_LIBPNG_VER_STRING, &k, on_error, on_warning);
    if (!p) return fk_fail(err, FK_ENOMEM, "%s: no memory for the PNG writer", name);
    png_infop info = png_create_info_struct(p);
    if (!info) {
        png_destroy_write_struct(&p, NULL);
        return fk_fail(err, FK_ENOMEM, "%s: no memory for the PNG writer", name);
    }
    if (setjmp(png_jmpbuf(p))) {
        png_destroy_write_struct(&p, &info);
        if (k.errnum) return fk_write_failed(err, name, f, k.errnum);
        return fk_fail(err, FK_EIO, "%s: libpng cannot write the picture: %s", name, k.why);
    }
    png_set_write_fn(p, &k, on_write, on_flush);
    png_set_IHDR(p, info, (png_uint_32)im->w, (png_uint_32)im->h, 8, PNG_COLOR_TYPE_RGB, PNG_INTERLACE_NONE,
                 PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
    png_write_info(p, info);
    for (int y = 0; y < im->h; y++) png_write_row(p, im->rgb + 3 * (size_t)y * (size_t)im->w);
    png_write_end(p, NULL);
    png_destroy_write_struct(&p, &info);
    if (fflush(f) || ferror(f)) return fk_write_failed(err, name, f, errno);
    return FK_OK;
}

#else

int fk_png_available(void)
{
    return 0;
}

int fk_png_write(FILE *f, const fk_image *im, const char *name, fk_error *err)
{
    (void)f;
    (void)im;
    return fk_fail(err, FK_EUNSUP, "%s: this build has no PNG support (libpng was not found: install libpng-dev, "
                   "then make config)", name);
}

#endif
