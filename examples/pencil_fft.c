/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pencil_fft.c - the transposes of a pencil-decomposed 3-D FFT, as an
 * unmodified MPI application makes them (no coltune header, not linked with
 * coltune): plain MPI_Alltoallv on row and column sub-communicators.
 *
 * The P ranks form a Pr x Pc grid (Pr the largest divisor of P not above
 * sqrt(P)); rank (r, c) has row communicator r (Pc ranks, by c) and column
 * communicator c (Pr ranks, by r), as heFFTe, P3DFFT and FFTW's 3-D
 * decompositions arrange them. An N^3 grid of complex doubles starts in
 * x-pencils (x whole, y split over the Pc ranks of a row, z over the Pr of a
 * column); a forward step transposes to y-pencils (MPI_Alltoallv on the
 * row), then to z-pencils (on the column), and the backward step returns.
 * N not a multiple of Pr or Pc makes the blocks uneven, as they are in
 * practice, so every rank's counts differ.
 *
 * Every iteration checks nothing; the last one checks every element of the
 * z-pencils and of the returned x-pencils against the value its global
 * index gives, and the program prints the slowest rank's time for all
 * iterations and whether the data came back right.
 *
 * usage: pencil_fft [iterations=200] [N=30]
 */
#include <mpi.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct cplx {
    double re, im;
} cplx;

/* The part of n that index i of parts gets, and where it starts. */
static int part(int n, int parts, int i) { return n / parts + (i < n % parts); }
static int start(int n, int parts, int i) { return i * (n / parts) + (i < n % parts ? i : n % parts); }

static cplx value(int N, int x, int y, int z)
{
    const double f = x + (double)N * (y + (double)N * z);
    return (cplx){f, -f};
}

typedef struct grid {
    int N, Pr, Pc, r, c;
    MPI_Comm row, col;
    /* local extents: x and y split over a row (Pc), z and y over a column (Pr) */
    int nx, x0;   /* x in y- and z-pencils: part of N over Pc, index c */
    int ny, y0;   /* y in x-pencils: part over Pc, index c */
    int nz, z0;   /* z in x- and y-pencils: part over Pr, index r */
    int nyz, yz0; /* y in z-pencils: part over Pr, index r */
} grid;

/* Counts and displacements (in elements) of one transpose. */
typedef struct plan {
    int *sc, *sd, *rc, *rd;
} plan;

static void plan_make(plan *p, int n, const int *send, const int *recv)
{
    p->sc = malloc(4 * (size_t)n * sizeof(int));
    p->sd = p->sc + n;
    p->rc = p->sd + n;
    p->rd = p->rc + n;
    for (int j = 0, s = 0, q = 0; j < n; j++) {
        p->sc[j] = send[j];
        p->rc[j] = recv[j];
        p->sd[j] = s;
        p->rd[j] = q;
        s += send[j];
        q += recv[j];
    }
}

/* x-pencil [z][y][x] -> y-pencil [z][x][y] over the row: to row peer j go
 * x in j's range, y and z in this rank's, packed in (z, y, x) order. */
static void pack_xy(const grid *g, const cplx *xp, cplx *buf)
{
    size_t k = 0;
    for (int j = 0; j < g->Pc; j++)
        for (int z = 0; z < g->nz; z++)
            for (int y = 0; y < g->ny; y++)
                for (int x = start(g->N, g->Pc, j); x < start(g->N, g->Pc, j + 1); x++)
                    buf[k++] = xp[((size_t)z * g->ny + y) * g->N + x];
}

static void unpack_xy(const grid *g, const cplx *buf, cplx *yp)
{
    size_t k = 0;
    for (int j = 0; j < g->Pc; j++)
        for (int z = 0; z < g->nz; z++)
            for (int y = start(g->N, g->Pc, j); y < start(g->N, g->Pc, j + 1); y++)
                for (int x = 0; x < g->nx; x++)
                    yp[((size_t)z * g->nx + x) * g->N + y] = buf[k++];
}

/* y-pencil [z][x][y] -> z-pencil [y][x][z] over the column: to column peer i
 * go y in i's range (over Pr), x and z in this rank's, in (z, x, y) order. */
static void pack_yz(const grid *g, const cplx *yp, cplx *buf)
{
    size_t k = 0;
    for (int i = 0; i < g->Pr; i++)
        for (int z = 0; z < g->nz; z++)
            for (int x = 0; x < g->nx; x++)
                for (int y = start(g->N, g->Pr, i); y < start(g->N, g->Pr, i + 1); y++)
                    buf[k++] = yp[((size_t)z * g->nx + x) * g->N + y];
}

static void unpack_yz(const grid *g, const cplx *buf, cplx *zp)
{
    size_t k = 0;
    for (int i = 0; i < g->Pr; i++)
        for (int z = start(g->N, g->Pr, i); z < start(g->N, g->Pr, i + 1); z++)
            for (int x = 0; x < g->nx; x++)
                for (int y = 0; y < g->nyz; y++)
                    zp[((size_t)y * g->nx + x) * g->N + z] = buf[k++];
}

/* The backward transposes: the same blocks the other way. */
static void pack_zy(const grid *g, const cplx *zp, cplx *buf)
{
    size_t k = 0;
    for (int i = 0; i < g->Pr; i++)
        for (int z = start(g->N, g->Pr, i); z < start(g->N, g->Pr, i + 1); z++)
            for (int x = 0; x < g->nx; x++)
                for (int y = 0; y < g->nyz; y++)
                    buf[k++] = zp[((size_t)y * g->nx + x) * g->N + z];
}

static void unpack_zy(const grid *g, const cplx *buf, cplx *yp)
{
    size_t k = 0;
    for (int i = 0; i < g->Pr; i++)
        for (int z = 0; z < g->nz; z++)
            for (int x = 0; x < g->nx; x++)
                for (int y = start(g->N, g->Pr, i); y < start(g->N, g->Pr, i + 1); y++)
                    yp[((size_t)z * g->nx + x) * g->N + y] = buf[k++];
}

static void pack_yx(const grid *g, const cplx *yp, cplx *buf)
{
    size_t k = 0;
    for (int j = 0; j < g->Pc; j++)
        for (int z = 0; z < g->nz; z++)
            for (int y = start(g->N, g->Pc, j); y < start(g->N, g->Pc, j + 1); y++)
                for (int x = 0; x < g->nx; x++)
                    buf[k++] = yp[((size_t)z * g->nx + x) * g->N + y];
}

static void unpack_yx(const grid *g, const cplx *buf, cplx *xp)
{
    size_t k = 0;
    for (int j = 0; j < g->Pc; j++)
        for (int z = 0; z < g->nz; z++)
            for (int y = 0; y < g->ny; y++)
                for (int x = start(g->N, g->Pc, j); x < start(g->N, g->Pc, j + 1); x++)
                    xp[((size_t)z * g->ny + y) * g->N + x] = buf[k++];
}

static void grid_make(grid *g, int N, int P, int me)
{
    g->N = N;
    g->Pr = 1;
    for (int d = 1; d * d <= P; d++)
        if (P % d == 0)
            g->Pr = d;
    g->Pc = P / g->Pr;
    g->r = me / g->Pc;
    g->c = me % g->Pc;
    MPI_Comm_split(MPI_COMM_WORLD, g->r, g->c, &g->row);
    MPI_Comm_split(MPI_COMM_WORLD, g->c, g->r, &g->col);
    g->nx = part(N, g->Pc, g->c);
    g->x0 = start(N, g->Pc, g->c);
    g->ny = g->nx;
    g->y0 = g->x0;
    g->nz = part(N, g->Pr, g->r);
    g->z0 = start(N, g->Pr, g->r);
    g->nyz = g->nz;
    g->yz0 = g->z0;
}

int main(int argc, char **argv)
{
    int P, me;
    MPI_Init(&argc, &argv);
    MPI_Comm_size(MPI_COMM_WORLD, &P);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    const int iters = argc > 1 ? atoi(argv[1]) : 200;
    const int N = argc > 2 ? atoi(argv[2]) : 30;
    grid g;
    grid_make(&g, N, P, me);

    /* The four transposes' counts (elements). */
    int *a = malloc(2 * (size_t)(g.Pc > g.Pr ? g.Pc : g.Pr) * sizeof(int)), *b;
    b = a + (g.Pc > g.Pr ? g.Pc : g.Pr);
    plan xy, yx, yz, zy;
    for (int j = 0; j < g.Pc; j++) {
        a[j] = part(N, g.Pc, j) * g.ny * g.nz; /* to j: its x, my y and z */
        b[j] = g.nx * part(N, g.Pc, j) * g.nz; /* from j: my x, its y, my z */
    }
    plan_make(&xy, g.Pc, a, b);
    plan_make(&yx, g.Pc, b, a);
    for (int i = 0; i < g.Pr; i++) {
        a[i] = g.nz * g.nx * part(N, g.Pr, i); /* to i: my z and x, its y */
        b[i] = part(N, g.Pr, i) * g.nx * g.nyz; /* from i: its z, my x and y */
    }
    plan_make(&yz, g.Pr, a, b);
    plan_make(&zy, g.Pr, b, a);
    free(a);

    const size_t nxp = (size_t)N * g.ny * g.nz, nyp = (size_t)N * g.nx * g.nz,
                 nzp = (size_t)N * g.nx * g.nyz;
    size_t most = nxp > nyp ? nxp : nyp;
    most = most > nzp ? most : nzp;
    cplx *xp = malloc(nxp * sizeof *xp), *yp = malloc(nyp * sizeof *yp),
         *zp = malloc(nzp * sizeof *zp), *sb = malloc(most * sizeof *sb),
         *rb = malloc(most * sizeof *rb);
    for (int z = 0; z < g.nz; z++)
        for (int y = 0; y < g.ny; y++)
            for (int x = 0; x < N; x++)
                xp[((size_t)z * g.ny + y) * N + x] = value(N, x, g.y0 + y, g.z0 + z);

    MPI_Datatype type;
    MPI_Type_contiguous(2, MPI_DOUBLE, &type);
    MPI_Type_commit(&type);
    int bad = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    double t = MPI_Wtime();
    for (int it = 0; it < iters; it++) {
        pack_xy(&g, xp, sb);
        MPI_Alltoallv(sb, xy.sc, xy.sd, type, rb, xy.rc, xy.rd, type, g.row);
        unpack_xy(&g, rb, yp);
        pack_yz(&g, yp, sb);
        MPI_Alltoallv(sb, yz.sc, yz.sd, type, rb, yz.rc, yz.rd, type, g.col);
        unpack_yz(&g, rb, zp);
        if (it == iters - 1) /* the z-pencils hold the grid's values */
            for (int y = 0; y < g.nyz; y++)
                for (int x = 0; x < g.nx; x++)
                    for (int z = 0; z < N; z++) {
                        cplx v = zp[((size_t)y * g.nx + x) * N + z],
                             w = value(N, g.x0 + x, g.yz0 + y, z);
                        bad += v.re != w.re || v.im != w.im;
                    }
        pack_zy(&g, zp, sb);
        MPI_Alltoallv(sb, zy.sc, zy.sd, type, rb, zy.rc, zy.rd, type, g.col);
        unpack_zy(&g, rb, yp);
        pack_yx(&g, yp, sb);
        MPI_Alltoallv(sb, yx.sc, yx.sd, type, rb, yx.rc, yx.rd, type, g.row);
        unpack_yx(&g, rb, xp);
    }
    t = MPI_Wtime() - t;
    for (int z = 0; z < g.nz; z++)
        for (int y = 0; y < g.ny; y++)
            for (int x = 0; x < N; x++) {
                cplx v = xp[((size_t)z * g.ny + y) * N + x], w = value(N, x, g.y0 + y, g.z0 + z);
                bad += v.re != w.re || v.im != w.im;
            }
    double tmax;
    int bad_all;
    MPI_Reduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    MPI_Reduce(&bad, &bad_all, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (me == 0)
        printf("pencil_fft: P=%d grid=%dx%d N=%d iterations=%d time=%f s data=%s\n", P, g.Pr,
               g.Pc, N, iters, tmax, bad_all ? "WRONG" : "right");
    MPI_Type_free(&type);
    free(xp);
    free(yp);
    free(zp);
    free(sb);
    free(rb);
    free(xy.sc);
    free(yx.sc);
    free(yz.sc);
    free(zy.sc);
    MPI_Comm_free(&g.row);
    MPI_Comm_free(&g.col);
    MPI_Finalize();
    return bad_all != 0 && me == 0;
}
