/* nbcx-transform: GCC's <omp.h> (GCC 11 and later) for parsing with libclang.
 * GCC's header declares its allocators with __attribute__((__malloc__
 * (omp_free))), a GCC extension that clang rejects ("'__malloc__' attribute
 * takes no arguments"), so a file including <omp.h> did not parse.  Here the
 * argument is dropped and GCC's header read.  Only ever used to parse, never to
 * compile a program. */
#ifndef NBCX_TRANSFORM_OMP_H
#define NBCX_TRANSFORM_OMP_H
#define __malloc__(deallocator) __malloc__
#include_next <omp.h>
#undef __malloc__
#endif
