/*
 * capture.h - capturing this process's stderr (fd 2) in a temporary
 * file, to check what nbcx says there (the timeout tests: the MPI one,
 * tests/mpi/test_timeout.c, and the in-process one,
 * tests/inproc/test_inproc_timeout.c). Library nbcx_test_common
 * (capture.c), plain C: no MPI, no nbcx internals. One capture at a
 * time, from one thread.
 */
#ifndef NBCX_TEST_CAPTURE_H
#define NBCX_TEST_CAPTURE_H

#include <stdbool.h>

/* Sends stderr to a temporary file. False if that is not possible (the
 * caller ends the program). With NBCX_TEST_NO_CAPTURE set (debugging:
 * what is said, as it is said) nothing is captured: true, and
 * capture_end returns "". */
bool capture_begin(void);

/* Restores stderr, copies what was captured to it (shown as the
 * program's own stderr) and returns it (to free). */
char *capture_end(void);

/* While capturing: the descriptor of the real stderr and that of the
 * file (-1 otherwise), for a watchdog that must show what was captured
 * from a signal handler (plain reads, async-signal-safe). */
int capture_saved_fd(void);
int capture_file_fd(void);

/* How many times what occurs in text (without overlaps). */
int capture_count(const char *text, const char *what);

#endif /* NBCX_TEST_CAPTURE_H */
