/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * coltune-info.c - what a coltune installation holds, without mpirun (as
 * ompi_info and mpichversion do for their libraries).
 *
 *   coltune-info [--parsable] [--library PATH]
 *   coltune-info --check FILE [--np P [--nodes N] [--ppn Q] [--cyclic]
 *                [--msg-size S] [--coll NAME]
 *                [--degree D --offnode F [--components C]]]
 *                [--parsable]
 *
 * The report: version and build; the MPI library coltune was built against
 * and the one found at run time; the entry points the preloaded library
 * defines (looked up in the library itself); every registered algorithm with
 * its parameters and restrictions; the rules file a job would read and every
 * COLTUNE_* variable set, validated by the job's own configuration reader,
 * so the messages are the job's. --check (check.c) parses a rules file with
 * the job's parser and answers what-would-run queries with its decision.
 *
 * Exit status: 0 fine, 1 the rules file, a variable or the library has a
 * problem a job would meet, 2 usage error.
 */
#define _GNU_SOURCE /* dladdr */
#include "info/check.h"
#include "info/out.h"
#include "shim/shim.h"

#include <coltune.h>
#include <dlfcn.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#ifndef CT_LIBDIR
#define CT_LIBDIR "/usr/local/lib"
#endif
#ifndef CT_PREFIX
#define CT_PREFIX "/usr/local"
#endif

extern char **environ;

/* ------------------------------------------------------------------ */
/* The MPI library: built against, found at run time                   */
/* ------------------------------------------------------------------ */

static void built_mpi(char *buf, size_t len)
{
#if defined(OMPI_MAJOR_VERSION)
    snprintf(buf, len, "Open MPI %d.%d.%d", OMPI_MAJOR_VERSION, OMPI_MINOR_VERSION,
             OMPI_RELEASE_VERSION);
#elif defined(MPICH_VERSION)
    snprintf(buf, len, "MPICH %s", MPICH_VERSION);
#else
    snprintf(buf, len, "an MPI %d.%d library", MPI_VERSION, MPI_SUBVERSION);
#endif
}

/* "Open MPI v4.1.4, package: ..." -> "Open MPI 4.1.4"; "MPICH Version:\t4.0.2\n..."
 * -> "MPICH 4.0.2"; anything else: its first line. */
static void normalise_library_version(const char *s, char *buf, size_t len)
{
    const char *mpich = strstr(s, "MPICH Version:");
    if (strncmp(s, "Open MPI v", 10) == 0) {
        snprintf(buf, len, "Open MPI %.*s", (int)strcspn(s + 10, ", \n"), s + 10);
    } else if (mpich != NULL) {
        const char *v = mpich + 14;
        v += strspn(v, " \t");
        snprintf(buf, len, "MPICH %.*s", (int)strcspn(v, " \t\n"), v);
    } else {
        snprintf(buf, len, "%.*s", (int)strcspn(s, "\n"), s);
    }
}

/* Length of "Name X.Y" in "Name X.Y.Z": a release series, whose releases
 * keep the ABI (Open MPI and MPICH both promise that within a series). */
static size_t series_len(const char *s)
{
    const char *v = strrchr(s, ' ');
    const char *dot = strchr(v ? v : s, '.');
    dot = dot ? strchr(dot + 1, '.') : NULL;
    return dot ? (size_t)(dot - s) : strlen(s);
}

/* Compares the MPI library of the build with the one found at run time:
 * "yes" the same, "release" another release of the same series, "no"
 * another library or series (then coltune must be rebuilt). */
static const char *mpi_match(const char *built, const char *found)
{
    if (strcmp(built, found) == 0)
        return "yes";
    size_t n = series_len(built);
    return n == series_len(found) && strncmp(built, found, n) == 0 ? "release" : "no";
}

static void report_mpi(const info_out *o)
{
    char built[128], found[256], raw[MPI_MAX_LIBRARY_VERSION_STRING] = "";
    int n = 0;
    Dl_info where = {0};
    built_mpi(built, sizeof built);
    /* MPI_Get_library_version may be called before MPI_Init (MPI-3.0). */
    if (MPI_Get_library_version(raw, &n) != MPI_SUCCESS)
        snprintf(raw, sizeof raw, "unknown");
    normalise_library_version(raw, found, sizeof found);
    const char *path = dladdr((void *)&PMPI_Get_library_version, &where) && where.dli_fname
                           ? where.dli_fname
                           : "unknown";
    const char *match = mpi_match(built, found);
    if (o->parsable) {
        info_kv(o, "mpi:built", "%s", built);
        info_kv(o, "mpi:standard", "%d.%d", MPI_VERSION, MPI_SUBVERSION);
        info_kv(o, "mpi:runtime", "%s", found);
        info_kv(o, "mpi:runtime:library", "%s", path);
        info_kv(o, "mpi:match", "%s", match);
        return;
    }
    fprintf(o->f, "MPI library\n  built against:      %s (mpi.h of MPI %d.%d)\n", built,
            MPI_VERSION, MPI_SUBVERSION);
    fprintf(o->f, "  found at run time:  %s (%s)\n", found, path);
    if (strcmp(match, "release") == 0)
        fprintf(o->f, "  note: another release of the series coltune was built against "
                      "(compatible)\n");
    else if (strcmp(match, "no") == 0)
        fprintf(o->f, "  warning: coltune was built against %s but %s is found at run time: "
                      "rebuild coltune against the MPI library your programs use\n",
                built, found);
}

/* ------------------------------------------------------------------ */
/* Entry points the library defines                                   */
/* ------------------------------------------------------------------ */

/* The C calls coltune serves (src/coll_list.h: "" for a collective of
 * coltune's own API, which is skipped) and their Fortran names (lower case). */
static const char *const served_calls[] = {
#define CT_COLLECTIVE(ID, name, call, fallback, msg_size_known) call,
#include "coll_list.h"
};
static const char *const startup_calls[] = {"Init", "Init_thread", "Finalize"};
/* The completion calls, which complete coltune's requests (src/shim/request.c). */
static const char *const request_calls[] = {
    "Wait", "Waitall", "Waitany", "Waitsome", "Test", "Testall", "Testany", "Testsome",
    "Request_get_status", "Start", "Startall", "Request_free", "Cancel"};
#define NCOLLS (sizeof served_calls / sizeof served_calls[0])
#define NSTARTUP (sizeof startup_calls / sizeof startup_calls[0])
#define NREQUEST (sizeof request_calls / sizeof request_calls[0])
/* The persistent forms (src/shim/alltoallv_init.c, iallgather.c,
 * ineighbor.c), under the library's name. */
static const char *const persistent_calls[] = {"Alltoallv", "Alltoall", "Allgather",
                                                "Allgatherv", "Neighbor_alltoallv",
                                                "Neighbor_alltoall"};
#define NPERSISTENT (sizeof persistent_calls / sizeof persistent_calls[0])

typedef struct library {
    void *handle;
    const char *path;
    void *base; /* where it is mapped: a symbol is coltune's when it lies there */
} library;

static int defines(const library *lib, const char *symbol)
{
    Dl_info where;
    void *p = dlsym(lib->handle, symbol);
    return p != NULL && dladdr(p, &where) && where.dli_fbase == lib->base;
}

/* The names of one family: form(call, buf) writes one symbol name. */
typedef void (*name_fn)(const char *call, char *buf, size_t len);

static void c_name(const char *call, char *buf, size_t len) { snprintf(buf, len, "MPI_%s", call); }
static void c_large(const char *call, char *buf, size_t len)
{
    snprintf(buf, len, "MPI_%s_c", call);
}
static void c_init(const char *call, char *buf, size_t len)
{
#if defined(CT_HAVE_PCOLL_MPIX)
    snprintf(buf, len, "MPIX_%s_init", call); /* Open MPI's pcollreq extension */
#else
    snprintf(buf, len, "MPI_%s_init", call);
#endif
}
static void f_lower(const char *call, char *buf, size_t len)
{
    size_t i = (size_t)snprintf(buf, len, "mpi_%s_", call);
    for (size_t k = 4; k < i && k < len; k++)
        buf[k] = (char)(buf[k] >= 'A' && buf[k] <= 'Z' ? buf[k] - 'A' + 'a' : buf[k]);
}
#if defined(CT_FORTRAN_OPENMPI) && defined(CT_HAVE_PCOLL_MPIX)
/* Open MPI's pcollreq extension in Fortran: mpix_<call>_init_ */
static void f_mpix_init(const char *call, char *buf, size_t len)
{
    size_t i = (size_t)snprintf(buf, len, "mpix_%s_init_", call);
    for (size_t k = 5; k < i && k < len; k++)
        buf[k] = (char)(buf[k] >= 'A' && buf[k] <= 'Z' ? buf[k] - 'A' + 'a' : buf[k]);
}
#endif
static void f_f08(const char *call, char *buf, size_t len)
{
    f_lower(call, buf, len);
    strncat(buf, "f08_", len - strlen(buf) - 1);
}

/* Prints the family's symbols (calls "" are skipped); returns how many of
 * them the library lacks. */
static int family(const info_out *o, const library *lib, const char *label,
                  const char *const *calls, size_t ncalls, name_fn form)
{
    char name[64], line[512] = "";
    int missing = 0;
    for (size_t i = 0; i < ncalls; i++) {
        if (calls[i][0] == '\0')
            continue;
        form(calls[i], name, sizeof name);
        int yes = defines(lib, name);
        missing += !yes;
        if (o->parsable)
            info_kv(o, "intercept", "%s:%s", name, yes ? "yes" : "no");
        size_t used = strlen(line);
        snprintf(line + used, sizeof line - used, "%s%s%s", used ? " " : "", name,
                 yes ? "" : "(no)");
    }
    if (!o->parsable)
        fprintf(o->f, "  %-24s %s\n", label, line);
    return missing;
}

static const char *fortran_how(void)
{
#if defined(CT_FORTRAN_OPENMPI)
    return "coltune defines the Fortran symbols (Open MPI's bindings call PMPI_ directly): "
           "mpi_<call>_, mpi_<call>__, mpi_<call>, MPI_<CALL> and mpi_<call>_f08_";
#elif defined(CT_FORTRAN_MPICH)
    return "through the C entry points (MPICH's Fortran bindings call MPI_<Call>); coltune "
           "defines only mpi_f08's mpi_init_f08_, mpi_init_thread_f08_, mpi_finalize_f08_";
#else
    return "no Fortran bindings in this MPI library at build time";
#endif
}

/* Returns 1 when the library cannot be opened or lacks its C entry points. */
static int report_entry_points(const info_out *o, const char *path)
{
    library lib = {NULL, path, NULL};
    Dl_info where;
    lib.handle = dlopen(path, RTLD_LAZY | RTLD_LOCAL);
    void *probe = lib.handle ? dlsym(lib.handle, "coltune_algorithm_count") : NULL;
    if (probe == NULL || !dladdr(probe, &where)) {
        const char *why = lib.handle ? "it defines no coltune_algorithm_count: not libcoltune"
                                     : dlerror();
        if (o->parsable)
            info_kv(o, "library:error", "%s", why);
        else
            fprintf(o->f, "Intercepted calls\n  error: cannot open %s: %s (give --library "
                          "PATH)\n", path, why);
        if (lib.handle)
            dlclose(lib.handle);
        return 1;
    }
    lib.base = where.dli_fbase;
    if (!o->parsable)
        fprintf(o->f, "Intercepted calls (defined by %s; (no) = not intercepted)\n", path);
    int missing = family(o, &lib, "C", served_calls, NCOLLS, c_name);
    family(o, &lib, "start-up, statistics", startup_calls, NSTARTUP, c_name);
    missing += family(o, &lib, "requests (completion)", request_calls, NREQUEST, c_name);
#if defined(CT_HAVE_PCOLL_MPI4) || defined(CT_HAVE_PCOLL_MPIX)
    family(o, &lib, "persistent", persistent_calls, NPERSISTENT, c_init);
#else
    (void)c_init;
    if (o->parsable)
        info_kv(o, "binding:persistent", "none (the MPI library has no persistent collectives)");
    else
        fprintf(o->f, "  %-24s none: the MPI library has no persistent collectives\n",
                "persistent");
#endif
#if defined(CT_HAVE_LARGE_COUNT)
    family(o, &lib, "large count (MPI-4)", served_calls, NCOLLS, c_large);
#else
    (void)c_large;
    if (o->parsable)
        info_kv(o, "binding:large_count", "none (the MPI library has no MPI-4 large-count forms)");
    else
        fprintf(o->f, "  %-24s none: the MPI library has no MPI-4 large-count forms\n",
                "large count (MPI-4)");
#endif
#if defined(CT_FORTRAN_OPENMPI)
    family(o, &lib, "Fortran mpif.h, use mpi", served_calls, NCOLLS, f_lower);
    family(o, &lib, "Fortran use mpi_f08", served_calls, NCOLLS, f_f08);
#if defined(CT_HAVE_PCOLL_MPIX)
    family(o, &lib, "Fortran persistent", persistent_calls, NPERSISTENT, f_mpix_init);
#endif
#elif defined(CT_FORTRAN_MPICH)
    family(o, &lib, "Fortran use mpi_f08 init", startup_calls, NSTARTUP, f_f08);
#endif
    if (o->parsable)
        info_kv(o, "binding:fortran", "%s", fortran_how());
    else
        fprintf(o->f, "  %-24s %s\n", "Fortran", fortran_how());
    dlclose(lib.handle);
    return missing != 0;
}

/* ------------------------------------------------------------------ */
/* Algorithms                                                          */
/* ------------------------------------------------------------------ */

/* The restriction names of bits (the adapter "bytes" and the learner's hint
 * "across_nodes" are not restrictions: with_adapters adds them, for
 * --parsable). */
static void restrictions_text(unsigned bits, int with_adapters, char *buf, size_t len)
{
    buf[0] = '\0';
    const ct_restriction_desc *r;
    for (int i = 0; (r = ct_restriction_at(i)) != NULL; i++) {
        if (!(bits & r->bit) ||
            (!with_adapters && (r->bit == CT_A_BYTES || r->bit == CT_L_ACROSS_NODES)))
            continue;
        size_t used = strlen(buf);
        snprintf(buf + used, len - used, "%s%s", used ? "," : "", r->name);
    }
}

static void report_algorithm(const info_out *o, const ct_algorithm *a)
{
    const char *coll = ct_coll_name(a->coll);
    char rs[256], lo[32], hi[32], def[32];
    restrictions_text(a->restrictions, o->parsable, rs, sizeof rs);
    if (o->parsable) {
        info_kv(o, "algorithm", "%s:%s:summary:%s", coll, a->name, a->summary);
        info_kv(o, "algorithm", "%s:%s:restrictions:%s", coll, a->name, rs[0] ? rs : "none");
    } else {
        fprintf(o->f, "    %-22s %s\n", a->name, a->summary);
        if (rs[0])
            fprintf(o->f, "    %-22s   restrictions: %s\n", "", rs);
        if (a->restrictions & CT_A_BYTES)
            fprintf(o->f, "    %-22s   runs on bytes: non-contiguous datatypes are packed\n", "");
        if (a->restrictions & CT_L_ACROSS_NODES)
            fprintf(o->f, "    %-22s   COLTUNE_ADAPT tries it only across nodes\n", "");
    }
    for (int k = 0; k < a->nparams; k++) {
        const ct_param_desc *p = &a->params[k];
        ct_expr_format(p->min, lo, sizeof lo);
        ct_expr_format(p->max, hi, sizeof hi);
        ct_expr_format(p->def, def, sizeof def);
        if (o->parsable) {
            info_kv(o, "algorithm", "%s:%s:param:%s:range:%s:%s", coll, a->name, p->name, lo, hi);
            info_kv(o, "algorithm", "%s:%s:param:%s:default:%s", coll, a->name, p->name, def);
        } else {
            fprintf(o->f, "    %-22s   %s = %s..%s (default %s): %s\n", "", p->name, lo, hi,
                    def, p->help);
        }
    }
}

static void report_algorithms(const info_out *o)
{
    if (!o->parsable)
        fprintf(o->f, "Algorithms (parameter ranges in P ranks, Q ranks per node, N nodes; "
                      "restrictions: coltune(7))\n");
    for (int c = 0; c < CT_COLL_COUNT; c++) {
        if (!o->parsable)
            fprintf(o->f, "  %s (%s)\n", ct_coll_name((ct_coll)c),
                    ct_config_env_name((ct_coll)c));
        for (int i = 0; i < ct_algorithm_count(); i++)
            if (ct_algorithm_at(i)->coll == (ct_coll)c)
                report_algorithm(o, ct_algorithm_at(i));
    }
    if (o->parsable) {
        const ct_restriction_desc *r;
        for (int i = 0; (r = ct_restriction_at(i)) != NULL; i++)
            info_kv(o, "restriction", "%s:%s", r->name, r->meaning);
    }
}

/* ------------------------------------------------------------------ */
/* Rules file and environment                                          */
/* ------------------------------------------------------------------ */

/* The configuration's message about variable name, or NULL. */
static const char *message_about(const ct_config *cfg, const char *name)
{
    for (int i = 0; i < cfg->nerrors; i++)
        if (strcmp(cfg->error_about[i], name) == 0)
            return cfg->errors[i];
    return NULL;
}

/* The configuration's messages about the rules file, as a job prints them. */
static int rules_messages(const info_out *o, const ct_config *cfg)
{
    int n = 0;
    for (int i = 0; i < cfg->nerrors; i++) {
        if (cfg->error_about[i][0] != '\0')
            continue;
        if (o->parsable)
            info_kv(o, "rules:error", "%s", cfg->errors[i]);
        else
            fprintf(o->f, "  coltune: error: %s\n", cfg->errors[i]);
        n++;
    }
    return n;
}

static int report_rules(const info_out *o, const ct_config *cfg)
{
    const char *set = getenv("COLTUNE_RULES");
    const char *path = set ? set : CT_DEFAULT_RULES;
    const char *origin = set ? "COLTUNE_RULES" : "the installed default";
    int count[CT_COLL_COUNT];
    ct_rules_count(&cfg->rules, count);
    if (o->parsable) {
        info_kv(o, "rules:file", "%s", path);
        info_kv(o, "rules:origin", "%s", set ? "COLTUNE_RULES" : "default");
    } else {
        fprintf(o->f, "Rules file\n  %s (%s)\n", path[0] ? path : "(none)", origin);
    }
    if (set != NULL && set[0] == '\0') {
        if (o->parsable)
            info_kv(o, "rules:status", "off");
        else
            fprintf(o->f, "  COLTUNE_RULES is empty: rules are off, every call uses pmpi\n");
        return 0;
    }
    if (cfg->rules_path == NULL) {
        if (!o->parsable)
            fprintf(o->f, "  not installed: every call uses pmpi\n");
        else
            info_kv(o, "rules:status", "missing");
        return 0;
    }
    int bad = rules_messages(o, cfg);
    if (o->parsable)
        info_kv(o, "rules:status", "%s", bad ? "error" : "ok");
    for (int c = 0; c < CT_COLL_COUNT && !bad; c++) {
        if (o->parsable)
            info_kv(o, "rules:count", "%s:%d", ct_coll_name((ct_coll)c), count[c]);
        else
            fprintf(o->f, "  %-20s %d rule%s\n", ct_coll_name((ct_coll)c), count[c],
                    count[c] == 1 ? "" : "s");
    }
    return bad != 0;
}

/* What a job may keep between calls (core/cache.h) and the shared
 * windows' size, as the job's configuration sets them. */
static void report_memory(const info_out *o, const ct_config *cfg)
{
    const ct_settings *set = &cfg->set;
    if (o->parsable) {
        if (set->cache_auto)
            info_kv(o, "cache:limit", "auto:%zu", CT_CACHE_FLOOR);
        else
            info_kv(o, "cache:limit", "%zu", set->cache);
        info_kv(o, "shm:window", "%zu", set->shm_window);
        return;
    }
    fprintf(o->f, "Memory kept between calls, per process (COLTUNE_CACHE)\n");
    if (set->cache_auto)
        fprintf(o->f, "  limit: auto, the larger of %zu MiB and twice the largest need of one "
                      "call\n", CT_CACHE_FLOOR >> 20);
    else
        fprintf(o->f, "  limit: %zu bytes%s\n", set->cache,
                set->cache == 0 ? " (nothing kept: every call allocates and frees)" : "");
    fprintf(o->f, "  least recently used buffers freed first; a shared window (about 2 x %zu "
                  "bytes per rank, COLTUNE_SHM_WINDOW) made only within the limit, the least "
                  "recently used asked back\n",
            set->shm_window);
}

/* Every COLTUNE_* variable in the environment, with the job's verdict. */
static int report_environment(const info_out *o, const ct_config *cfg, int rules_bad)
{
    int bad = 0, any = 0;
    if (!o->parsable)
        fprintf(o->f, "Environment\n");
    for (char **e = environ; *e != NULL; e++) {
        if (strncmp(*e, "COLTUNE_", 8) != 0 || strchr(*e, '=') == NULL)
            continue;
        char name[128];
        size_t n = (size_t)(strchr(*e, '=') - *e);
        snprintf(name, sizeof name, "%.*s", (int)n, *e);
        const char *value = *e + n + 1;
        const char *msg = message_about(cfg, name);
        int known = ct_config_known_variable(name);
        any = 1;
        /* COLTUNE_RULES's file has its own section: its errors are there. */
        if (msg == NULL && strcmp(name, "COLTUNE_RULES") == 0 && rules_bad)
            msg = "the file has errors (Rules file above)";
        bad += msg != NULL && strcmp(name, "COLTUNE_RULES") != 0;
        const char *status = msg ? "error" : known ? "ok" : "unknown";
        if (o->parsable) { /* the value and the message last: they may hold ':' */
            info_kv(o, "env", "%s:status:%s", name, status);
            info_kv(o, "env", "%s:value:%s", name, value);
            if (msg != NULL)
                info_kv(o, "env", "%s:message:%s", name, msg);
        } else if (msg != NULL && strcmp(name, "COLTUNE_RULES") != 0) {
            fprintf(o->f, "  coltune: error: %s\n", msg); /* the job's own line */
        } else {
            fprintf(o->f, "  %s=%s: %s\n", name, value,
                    msg ? msg : known ? "ok" : "not a coltune variable: a job ignores it");
        }
    }
    if (!any && !o->parsable)
        fprintf(o->f, "  no COLTUNE_* variable is set\n");
    if (cfg->set.disabled && !o->parsable)
        fprintf(o->f, "  COLTUNE_DISABLE=1: every intercepted call is forwarded to the MPI "
                      "library\n");
    for (int c = 0; c < CT_COLL_COUNT && !o->parsable; c++)
        if (cfg->forced_set[c])
            fprintf(o->f, "  %s forces %s calls: the rules are not consulted for them\n",
                    ct_config_env_name((ct_coll)c), ct_coll_name((ct_coll)c));
    return bad != 0;
}

/* ------------------------------------------------------------------ */
/* Command line                                                        */
/* ------------------------------------------------------------------ */

static void usage(FILE *f)
{
    fprintf(f,
            "usage: coltune-info [--parsable] [--library PATH]\n"
            "       coltune-info --check FILE [--np P [--nodes N] [--ppn Q] [--cyclic]\n"
            "                    [--msg-size S] [--coll NAME]\n"
            "                    [--degree D --offnode F [--components C]]]\n"
            "                    [--parsable]\n"
            "       coltune-info --help | --version\n"
            "\n"
            "Without mpirun: coltune's version, the MPI library it was built against and the\n"
            "one found now, the calls libcoltune.so intercepts, every algorithm with its\n"
            "parameters and restrictions, the rules file a job would read, and every\n"
            "COLTUNE_* variable set here, checked as a job checks them.\n"
            "\n"
            "  --parsable       one key:value per line, for scripts\n"
            "  --library PATH   the library to inspect (default %s/libcoltune.so)\n"
            "  --check FILE     parse FILE as a job would: rules per collective, or every\n"
            "                   error as file:line:column: message\n"
            "  --np P           with --check: which rule and algorithm a call would get on\n"
            "                   P ranks (P counts both groups of an intercommunicator)\n"
            "  --nodes N        ... on N nodes (default 1, or COLTUNE_PPN's emulated nodes)\n"
            "  --ppn Q          ... of at most Q ranks each (default P/N rounded up)\n"
            "  --cyclic         ... with ranks dealt round-robin over the nodes\n"
            "  --msg-size S     ... for message size S (default: every size range)\n"
            "  --coll NAME      ... for one collective (default: all)\n"
            "  --degree D       ... for a neighbourhood of D destinations per rank (the\n"
            "                   mean) with F%% of its edges between nodes (--offnode F)\n"
            "                   and C weakly connected components (--components C,\n"
            "                   default 1): the rules' degree, offnode and components\n"
            "                   (default: rules naming them are listed, not applied)\n"
            "\n"
            "Exit status: 0 fine, 1 a problem a job would meet (rules file, variable,\n"
            "library), 2 usage error. See coltune-info(1).\n",
            CT_LIBDIR);
}

typedef struct options {
    int parsable, help, version;
    const char *library;
    check_query q;
} options;

static int number(const char *opt, const char *v, long lo, long *out)
{
    if (v != NULL && ct_size_parse(v, strlen(v), out) == 0 && *out >= lo)
        return 0;
    fprintf(stderr, "coltune-info: %s: expected a number >= %ld (k/m/g suffixes allowed), "
                    "got '%s'\n", opt, lo, v ? v : "");
    return -1;
}

static int parse_options(int argc, char **argv, options *o)
{
    memset(o, 0, sizeof *o);
    o->library = CT_LIBDIR "/libcoltune.so";
    o->q.msg_size = -1;
    o->q.degree = o->q.offnode = -1;
    o->q.components = 1;
    o->q.coll = -1;
    int components_given = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        int takes = 1, rc = 0;
        if (strcmp(a, "--parsable") == 0)
            o->parsable = 1, takes = 0;
        else if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0)
            o->help = 1, takes = 0;
        else if (strcmp(a, "--version") == 0)
            o->version = 1, takes = 0;
        else if (strcmp(a, "--cyclic") == 0)
            o->q.cyclic = 1, takes = 0;
        else if (strcmp(a, "--library") == 0 && v)
            o->library = v;
        else if (strcmp(a, "--check") == 0 && v)
            o->q.file = v;
        else if (strcmp(a, "--np") == 0)
            rc = number(a, v, 1, &o->q.P);
        else if (strcmp(a, "--nodes") == 0)
            rc = number(a, v, 1, &o->q.nodes);
        else if (strcmp(a, "--ppn") == 0)
            rc = number(a, v, 1, &o->q.ppn);
        else if (strcmp(a, "--msg-size") == 0)
            rc = number(a, v, 0, &o->q.msg_size);
        else if (strcmp(a, "--degree") == 0)
            rc = number(a, v, 0, &o->q.degree);
        else if (strcmp(a, "--offnode") == 0)
            rc = number(a, v, 0, &o->q.offnode);
        else if (strcmp(a, "--components") == 0) {
            rc = number(a, v, 0, &o->q.components);
            components_given = 1;
        }
        else if (strcmp(a, "--coll") == 0 && v) {
            ct_coll c;
            if (ct_coll_from_name(v, strlen(v), &c) != 0) {
                fprintf(stderr, "coltune-info: --coll: unknown collective '%s'\n", v);
                return -1;
            }
            o->q.coll = (int)c;
        } else {
            fprintf(stderr, "coltune-info: %s: %s\n", a,
                    a[0] == '-' && a[1] == '-' ? "unknown option or missing value"
                                               : "unexpected argument");
            return -1;
        }
        if (rc != 0)
            return -1;
        i += takes;
    }
    const int graph = o->q.degree >= 0 || o->q.offnode >= 0 || components_given;
    if (o->q.file == NULL && (o->q.P || o->q.nodes || o->q.ppn || o->q.cyclic ||
                              o->q.msg_size >= 0 || o->q.coll >= 0 || graph)) {
        fprintf(stderr, "coltune-info: --np, --nodes, --ppn, --cyclic, --msg-size, --coll, "
                        "--degree, --offnode and --components go with --check FILE\n");
        return -1;
    }
    if (o->q.P == 0 && (o->q.nodes || o->q.ppn || o->q.cyclic || o->q.msg_size >= 0 ||
                        o->q.coll >= 0 || graph)) {
        fprintf(stderr, "coltune-info: --nodes, --ppn, --cyclic, --msg-size, --coll, --degree, "
                        "--offnode and --components need --np P\n");
        return -1;
    }
    if (graph && (o->q.degree < 0 || o->q.offnode < 0 || o->q.offnode > 100)) {
        fprintf(stderr, "coltune-info: --degree D and --offnode F go together (F a "
                        "percentage, 0-100), and --components C goes with them\n");
        return -1;
    }
    return 0;
}

static int report(const info_out *o, const char *library, const ct_config *cfg)
{
    int bad = 0;
    if (o->parsable) {
        info_kv(o, "version:coltune", "%s", COLTUNE_VERSION);
        info_kv(o, "license", "%s", CT_LICENSE);
        info_kv(o, "license:file", "%s", CT_DOCDIR "/LICENSE");
        info_kv(o, "build:prefix", "%s", CT_PREFIX);
        info_kv(o, "library:path", "%s", library);
    } else {
        fprintf(o->f, "coltune %s (prefix %s)\n", COLTUNE_VERSION, CT_PREFIX);
        fprintf(o->f, "License: %s (%s/LICENSE)\n", CT_LICENSE, CT_DOCDIR);
    }
    report_mpi(o); /* a warning, not an error: the user may know better */
    bad |= report_entry_points(o, library);
    report_algorithms(o);
    int rules_bad = report_rules(o, cfg);
    bad |= rules_bad;
    report_memory(o, cfg);
    bad |= report_environment(o, cfg, rules_bad);
    return bad;
}

int main(int argc, char **argv)
{
    options opt;
    if (parse_options(argc, argv, &opt) != 0) {
        fprintf(stderr, "Try 'coltune-info --help'.\n");
        return 2;
    }
    if (opt.help) {
        usage(stdout);
        return 0;
    }
    if (opt.version) {
        printf("coltune-info (coltune) %s\nLicense: %s (%s/LICENSE)\n", COLTUNE_VERSION,
               CT_LICENSE, CT_DOCDIR);
        return 0;
    }
    info_out o = {opt.parsable, stdout};
    ct_config cfg;
    ct_config_read(&cfg, NULL);
    int rc = opt.q.file ? info_check(&o, &opt.q, &cfg) : report(&o, opt.library, &cfg);
    ct_config_free(&cfg);
    return rc;
}
