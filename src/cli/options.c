/* options.c — the engine options that more than one subcommand takes (serve, call): the
 * capacity mode, its clock, the split-for-heat delay and the account quota, and the cache
 * size, read into qr_options; and the --help every subcommand answers. Each subcommand parses the
 * rest of its own command line. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"

int cli_capacity_option(const char *prog, const char *flag, const char *value, qr_options *o)
{
    if (strcmp(flag, "--capacity-account-units") == 0) {
        char *end;
        double v = strtod(value, &end);
        if (*value && *end == '\0' && v >= 0 && v <= 1e12) {
            o->account_table_units = v > 0 ? v : -1; /* 0: no quota */
            return 0;
        }
        fprintf(stderr,
                "%s: --capacity-account-units wants a number of units (0: none), not '%s'\n", prog,
                value);
        return -1;
    }
    if (strcmp(flag, "--capacity-split-seconds") == 0) {
        char *end;
        double v = strtod(value, &end);
        if (*value && *end == '\0' && v > 0 && v <= 86400) {
            o->capacity_split_seconds = v;
            return 0;
        }
        fprintf(stderr, "%s: --capacity-split-seconds wants seconds from 0 to 86400, not '%s'\n",
                prog, value);
        return -1;
    }
    if (strcmp(flag, "--capacity-clock") == 0) {
        if (strcmp(value, "manual") == 0 || strcmp(value, "monotonic") == 0) {
            o->capacity_clock =
                value[0] == 'm' && value[1] == 'a' ? QR_CLOCK_MANUAL : QR_CLOCK_MONOTONIC;
            return 0;
        }
        fprintf(stderr, "%s: --capacity-clock is manual or monotonic, not '%s'\n", prog, value);
        return -1;
    }
    static const char *const modes[] = {"enforce", "observe", "off"};
    for (int m = 0; m < 3; m++)
        if (strcmp(value, modes[m]) == 0) {
            o->capacity = m == 0   ? QR_CAPACITY_ENFORCE
                          : m == 1 ? QR_CAPACITY_OBSERVE
                                   : QR_CAPACITY_OFF;
            return 0;
        }
    fprintf(stderr, "%s: --capacity is enforce, observe or off, not '%s'\n", prog, value);
    return -1;
}

int cli_cache_size_option(const char *prog, const char *value, qr_options *o)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(value, &end, 10);
    unsigned shift = 0;
    if (*end == 'K' || *end == 'k')
        shift = 10;
    else if (*end == 'M' || *end == 'm')
        shift = 20;
    else if (*end == 'G' || *end == 'g')
        shift = 30;
    if (shift) end++;
    /* At least 8 MB, at most 1 TB. */
    if (errno == 0 && value[0] >= '0' && value[0] <= '9' && *end == '\0' && v <= (1ull << 40) &&
        (v << shift) >= (8ull << 20) && (v << shift) <= (1ull << 40)) {
        o->cache_size = v << shift;
        return 0;
    }
    fprintf(stderr,
            "%s: --cache-size wants a number of bytes from 8M to 1024G (K, M or G may follow "
            "it), not '%s'\n",
            prog, value);
    return -1;
}

int cli_wants_help(int argc, char **argv)
{
    for (int i = 0; i < argc; i++)
        if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) return 1;
    return 0;
}
