/*
 * rules_check.c - a test tool (no MPI runtime): parses a rules file with
 * coltune's own parser, which accepts only registered collectives and
 * algorithms with in-range parameters, and reports which rule serves each
 * cell of a grid.
 *
 *   rules_check FILE COLLECTIVE P1,P2,... SIZE1,SIZE2,...
 *
 * Prints "P size -> line: spec" per cell (nodes = 1, ppn = P) and exits 1 if
 * the file does not parse or some cell is served by no rule at all.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "select/rules.h"

static int served_by(const ct_ruleset *rs, ct_coll coll, long P, long size)
{
    const long values[CT_KEY_COUNT] = {[CT_KEY_COMM_SIZE] = P, [CT_KEY_MSG_SIZE] = size,
                                       [CT_KEY_NODES] = 1, [CT_KEY_PPN] = P};
    for (int i = 0; i < rs->count; i++) {
        const ct_rule *r = &rs->rules[i];
        int match = r->coll == coll;
        for (int k = 0; k < CT_KEY_COUNT && match; k++)
            if (r->key_mask & (1u << k))
                match = ct_range_contains(r->range[k], values[k]);
        if (match)
            return i;
    }
    return -1;
}

int main(int argc, char **argv)
{
    ct_ruleset rs;
    ct_coll coll;
    char msg[1024];
    if (argc != 5) {
        fprintf(stderr, "usage: rules_check FILE COLLECTIVE P,P,... SIZE,SIZE,...\n");
        return 2;
    }
    if (ct_rules_load(argv[1], &rs, msg, sizeof msg) != 0) {
        fprintf(stderr, "rules_check: %s\n", msg);
        return 1;
    }
    if (ct_coll_from_name(argv[2], strlen(argv[2]), &coll) != 0) {
        fprintf(stderr, "rules_check: unknown collective '%s'\n", argv[2]);
        ct_rules_free(&rs);
        return 2;
    }
    int bad = 0;
    char *ps = strdup(argv[3]);
    for (char *p = strtok(ps, ","); p != NULL; p = strtok(NULL, ",")) {
        char *ss = strdup(argv[4]), *save = NULL;
        for (char *s = strtok_r(ss, ",", &save); s != NULL; s = strtok_r(NULL, ",", &save)) {
            int i = served_by(&rs, coll, atol(p), atol(s));
            if (i < 0) {
                printf("P=%s size=%s -> no rule\n", p, s);
                bad = 1;
            } else {
                printf("P=%s size=%s -> line %d: %s\n", p, s, rs.rules[i].line,
                       rs.rules[i].spec.alg->name);
            }
        }
        free(ss);
    }
    free(ps);
    ct_rules_free(&rs);
    return bad;
}
