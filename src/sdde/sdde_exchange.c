/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sdde_exchange.c - the helpers the sparse exchange algorithms and their
 * driver share (sdde_exchange.h): boxes of received messages, out lists.
 */
#include "sdde/sdde_exchange.h"
#include "core/log.h"
#include "core/copy.h"

#include <stdlib.h>
#include <string.h>

char *ct_sdde_box_add(ct_sdde_box *b, int src, size_t bytes)
{
    if (b->n == b->cap) {
        int cap = b->cap ? 2 * b->cap : 16;
        ct_sdde_msg *m = realloc(b->msgs, (size_t)cap * sizeof *m);
        if (m == NULL)
            return NULL;
        b->msgs = m;
        b->cap = cap;
    }
    if (b->data == NULL || b->used + bytes > b->size) {
        size_t size = b->size ? 2 * b->size : 4096;
        while (size < b->used + bytes)
            size *= 2;
        char *d = realloc(b->data, size);
        if (d == NULL)
            return NULL;
        b->data = d;
        b->size = size;
    }
    ct_sdde_msg *m = &b->msgs[b->n++];
    m->src = src;
    m->bytes = (int)bytes;
    m->off = b->used;
    b->used += bytes;
    return b->data + m->off;
}

int ct_sdde_box_copy(ct_sdde_box *b, int src, const void *data, size_t bytes)
{
    char *to = ct_sdde_box_add(b, src, bytes);
    if (to == NULL)
        return MPI_ERR_NO_MEM;
    if (bytes > 0)
        ct_memcpy(to, data, bytes);
    return MPI_SUCCESS;
}

void ct_sdde_box_free(ct_sdde_box *b)
{
    free(b->msgs);
    free(b->data);
    memset(b, 0, sizeof *b);
}

int ct_sdde_out_push(ct_sdde_out *o, int dest, const char *ptr, int bytes)
{
    if (o->n == o->cap) {
        int cap = o->cap ? 2 * o->cap : 16;
        int *d = realloc(o->dest, (size_t)cap * sizeof *d);
        if (d != NULL)
            o->dest = d;
        const char **p = realloc(o->ptr, (size_t)cap * sizeof *p);
        if (p != NULL)
            o->ptr = p;
        int *b = realloc(o->bytes, (size_t)cap * sizeof *b);
        if (b != NULL)
            o->bytes = b;
        if (d == NULL || p == NULL || b == NULL)
            return MPI_ERR_NO_MEM;
        o->cap = cap;
    }
    o->dest[o->n] = dest;
    o->ptr[o->n] = ptr;
    o->bytes[o->n] = bytes;
    o->n++;
    return MPI_SUCCESS;
}

void ct_sdde_out_free(ct_sdde_out *o)
{
    free(o->dest);
    free(o->ptr);
    free(o->bytes);
    memset(o, 0, sizeof *o);
}

int ct_sdde_recv_matched(ct_sdde_box *box, MPI_Message *msg, MPI_Status *st)
{
    int rc, count;
    CT_CALL(PMPI_Get_count(st, MPI_BYTE, &count));
    char *buf = ct_sdde_box_add(box, st->MPI_SOURCE, (size_t)count);
    if (buf == NULL) {
        rc = MPI_ERR_NO_MEM;
        ct_log_mpi_error(rc, "receive buffer", __FILE__, __LINE__);
        goto out;
    }
    CT_CALL(PMPI_Mrecv(buf, count, MPI_BYTE, msg, MPI_STATUS_IGNORE));
out:
    return rc;
}

void ct_sdde_count_internode(ct_sdde *x, const ct_sdde_out *o)
{
    const ct_topo *t = &x->ctx->topo;
    for (int i = 0; i < o->n; i++)
        x->internode += t->node_of[o->dest[i]] != t->node;
}
