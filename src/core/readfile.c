/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * readfile.c - reads a user-named file without ever blocking (readfile.h).
 *
 * open() with O_NONBLOCK: a FIFO without a writer opens at once instead of
 * waiting for one. fstat() on the descriptor: what is read is what was
 * checked, whatever happens to the path meanwhile. Only a regular file is
 * read (a FIFO, a terminal or /dev/zero could block or never end), and at
 * most max + 1 bytes of it, so a file that reports size 0 (/proc) or grows
 * while it is read still ends.
 */
/* open() flags, fstat() and read() are POSIX; ask for them even under -std=c11. */
#if !defined(_POSIX_C_SOURCE) && !defined(_GNU_SOURCE)
#define _POSIX_C_SOURCE 200809L
#endif

#include "core/readfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef O_CLOEXEC
#define O_CLOEXEC 0
#endif

/* What a file that is not regular is, for the message. */
static const char *file_kind(mode_t mode)
{
    if (S_ISDIR(mode))
        return "a directory";
    if (S_ISFIFO(mode))
        return "a FIFO";
    if (S_ISCHR(mode))
        return "a character device";
    if (S_ISBLK(mode))
        return "a block device";
    if (S_ISSOCK(mode))
        return "a socket";
    return "a special file";
}

/* "4 MiB", "64 KiB" or "1000 bytes". */
static void format_limit(size_t max, char *buf, size_t len)
{
    if (max > 0 && max % (1024 * 1024) == 0)
        snprintf(buf, len, "%zu MiB", max / (1024 * 1024));
    else if (max > 0 && max % 1024 == 0)
        snprintf(buf, len, "%zu KiB", max / 1024);
    else
        snprintf(buf, len, "%zu byte%s", max, max == 1 ? "" : "s");
}

static ct_read_status too_large(size_t max, char *why, size_t whylen)
{
    char limit[64];
    format_limit(max, limit, sizeof limit);
    snprintf(why, whylen, "larger than the limit of %s", limit);
    return CT_READ_CANNOT_READ;
}

static ct_read_status read_error(int err, char *why, size_t whylen)
{
    snprintf(why, whylen, "%s", err == ENOMEM ? "out of memory" : strerror(err));
    return CT_READ_CANNOT_READ;
}

/* Doubles the buffer, to at most max + 2 bytes; 0 or -1 (out of memory). */
static int grow(char **buf, size_t *cap, size_t max)
{
    size_t want = *cap <= (max + 2) / 2 ? *cap * 2 : max + 2;
    char *nb = realloc(*buf, want);
    if (nb == NULL)
        return -1;
    *buf = nb;
    *cap = want;
    return 0;
}

/* Reads fd to its end into a new buffer, at most max + 1 bytes (one more
 * than allowed tells a file over the limit). size is fstat's hint. */
static ct_read_status read_bounded(int fd, size_t size, size_t max, char **text, size_t *len,
                                   char *why, size_t whylen)
{
    size_t cap = (size < 4096 ? 4096 : size) + 2, n = 0; /* room for one more byte and a NUL */
    if (cap > max + 2)
        cap = max + 2;
    char *buf = malloc(cap);
    if (buf == NULL)
        return read_error(ENOMEM, why, whylen);
    for (;;) {
        if (n == cap - 1 && cap == max + 2) { /* max + 1 bytes: over the limit */
            free(buf);
            return too_large(max, why, whylen);
        }
        if (n == cap - 1 && grow(&buf, &cap, max) != 0) {
            free(buf);
            return read_error(ENOMEM, why, whylen);
        }
        ssize_t r = read(fd, buf + n, cap - 1 - n);
        if (r > 0) {
            n += (size_t)r;
        } else if (r == 0) { /* the end of the file */
            buf[n] = '\0';
            *text = buf;
            *len = n;
            return CT_READ_OK;
        } else if (errno != EINTR) {
            int err = errno;
            free(buf);
            return read_error(err, why, whylen);
        }
    }
}

/* Checks the opened file, then reads it. */
static ct_read_status read_fd(int fd, size_t max, char **text, size_t *len, char *why,
                              size_t whylen)
{
    struct stat st;
    if (fstat(fd, &st) != 0)
        return read_error(errno, why, whylen);
    if (!S_ISREG(st.st_mode)) {
        snprintf(why, whylen, "%s, not a regular file", file_kind(st.st_mode));
        return CT_READ_CANNOT_READ;
    }
    if (st.st_size < 0 || (unsigned long long)st.st_size > max)
        return too_large(max, why, whylen);
    return read_bounded(fd, (size_t)st.st_size, max, text, len, why, whylen);
}

ct_read_status ct_read_file(const char *path, size_t max, char **text, size_t *len, char *why,
                            size_t whylen)
{
    *text = NULL;
    *len = 0;
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (fd < 0) {
        snprintf(why, whylen, "%s", strerror(errno));
        return CT_READ_CANNOT_OPEN;
    }
    ct_read_status status = read_fd(fd, max, text, len, why, whylen);
    close(fd); /* read only: a failed close loses nothing that was read */
    return status;
}
