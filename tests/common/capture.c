/* capture.c - the stderr capture of capture.h. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "capture.h"

static FILE *captured;
static int saved_fd = -1, captured_fd = -1;

bool capture_begin(void)
{
    fflush(stderr);
    if (getenv("NBCX_TEST_NO_CAPTURE"))
        return true;
    captured = tmpfile();
    saved_fd = dup(2);
    captured_fd = captured ? fileno(captured) : -1;
    return captured && saved_fd >= 0 && dup2(captured_fd, 2) >= 0;
}

char *capture_end(void)
{
    fflush(stderr);
    if (!captured)
        return calloc(1, 1);
    dup2(saved_fd, 2);
    close(saved_fd);
    long n = ftell(captured);
    char *text = calloc(1, (size_t)(n > 0 ? n : 0) + 1);
    rewind(captured);
    if (n > 0 && fread(text, 1, (size_t)n, captured) != (size_t)n)
        text[0] = '\0';
    fclose(captured);
    captured = NULL;
    saved_fd = captured_fd = -1;
    fputs(text, stderr);
    fflush(stderr);
    return text;
}

int capture_saved_fd(void) { return saved_fd; }

int capture_file_fd(void) { return captured_fd; }

int capture_count(const char *text, const char *what)
{
    int n = 0;
    for (const char *p = text; (p = strstr(p, what)); p += strlen(what))
        n++;
    return n;
}
