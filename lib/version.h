/* version.h - the fofkit release. */
#ifndef FK_VERSION_H
#define FK_VERSION_H
#define FK_VERSION "0.1.0"
#endif
