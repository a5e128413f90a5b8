/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * readfile.h - the one way coltune reads a file at run time.
 *
 * A path comes from the user (COLTUNE_RULES, coltune-info --check) and may
 * name anything: a FIFO nobody writes to, /dev/zero, /dev/urandom, a
 * directory, a huge file. Reading must never block or run without end, so
 * the file is opened with O_NONBLOCK, the opened descriptor (not the path) is
 * checked to be a regular file of at most a given size, and at most that many
 * bytes (plus one, to see a file that grew) are read.
 */
#ifndef CT_READFILE_H
#define CT_READFILE_H

#include <stddef.h>

typedef enum ct_read_status {
    CT_READ_OK = 0,
    CT_READ_CANNOT_OPEN, /* open() failed; why holds the system's reason */
    CT_READ_CANNOT_READ  /* not a regular file, larger than max, a read error
                            or out of memory; why says which */
} ct_read_status;

/*
 * Reads the whole regular file at path. On CT_READ_OK, *text is a malloc'd
 * copy of its bytes followed by a NUL (the file itself may hold NUL bytes)
 * and *len their count. Otherwise *text is NULL and why (whylen bytes) holds
 * the reason, such as "No such file or directory", "a FIFO, not a regular
 * file" or "larger than the limit of 4 MiB". Never blocks on the file:
 * files such as /proc/self/maps, which are regular but report size 0, are
 * read up to max bytes like any other. max must be below SIZE_MAX / 2.
 */
ct_read_status ct_read_file(const char *path, size_t max, char **text, size_t *len, char *why,
                            size_t whylen);

#endif
