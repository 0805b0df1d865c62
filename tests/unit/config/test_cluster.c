/* test_cluster.c — the device-type catalog and cluster presets (configs/clusters.lua through
 * config_cluster.c and cluster.c): expected values come from the papers (TAG §5.2, HeterPS §5), the
 * Placeto spec and the datasheet numbers cited in clusters.lua, converted by hand. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "config/cluster.h"
#include "config/config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GIB (1024.0 * 1024.0 * 1024.0)
/* Link units: bytes per µs. */
#define GBPS_LINK 1000.0 /* 1 GB/s */
#define GBIT 125.0       /* 1 Gbit/s */

/* |got - want| <= eps (this cmocka has no assert_double_equal). */
#define assert_near(got, want, eps) assert_near_at((got), (want), (eps), #got, __LINE__)

static void assert_near_at(double got, double want, double eps, const char *what, int line)
{
    if (!(fabs(got - want) <= eps))
        fail_msg("line %d: %s is %.17g, expected %.17g (within %g)", line, what, got, want, eps);
}

static pb_cluster *build(const char *name, int n, unsigned long long seed)
{
    pb_cluster *c = NULL;
    pb_error err = {{0}};
    if (cluster_preset_seeded(name, n, seed, &c, &err) != PB_OK)
        fail_msg("%s with %d devices: unexpected error: %s", name, n, err.msg);
    assert_non_null(c);
    assert_int_equal(c->n_devices, n);
    assert_string_equal(c->name, name);
    return c;
}

/* Builds a preset that must fail; returns the message. */
static const char *build_fails(const char *name, int n, pb_error *err)
{
    pb_cluster *c = NULL;
    memset(err, 0, sizeof *err);
    if (cluster_preset(name, n, &c, err) == PB_OK)
        fail_msg("%s with %d devices: expected an error", name, n);
    assert_null(c);
    return err->msg;
}

static void assert_contains(const char *s, const char *part)
{
    if (!strstr(s, part))
        fail_msg("'%s' does not contain '%s'", s, part);
}

static double bw(const pb_cluster *c, int i, int j)
{
    return c->link_bandwidth[(size_t)i * (size_t)c->n_devices + (size_t)j];
}

static double lat(const pb_cluster *c, int i, int j)
{
    return c->link_latency[(size_t)i * (size_t)c->n_devices + (size_t)j];
}

static const pb_device_type *type_of(const pb_cluster *c, int device)
{
    assert_true(c->device_type[device] >= 0 && c->device_type[device] < c->n_types);
    return &c->types[c->device_type[device]];
}

static void assert_type(const pb_device_type *t, const char *name, double flops, double mem_bw,
                        double memory, double price)
{
    assert_string_equal(t->name, name);
    assert_near(t->peak_flops, flops, flops * 1e-12);
    assert_near(t->mem_bandwidth, mem_bw, mem_bw * 1e-12);
    assert_near(t->memory_bytes, memory, 1.0);
    assert_near(t->price_per_hour, price, 1e-12);
    /* Graph costs are K80 µs: speed is peak FLOP/s relative to one K80 die (2.8 TFLOP/s). */
    assert_near(t->speed_vs_ref, flops / 2.8e12, 1e-12);
}

/* Every pair of devices: machine link inside a machine, network between; diagonal = machine. */
static void assert_links(const pb_cluster *c, const double *intra_bw, const double *intra_lat,
                         double inter_bw, double inter_lat)
{
    for (int i = 0; i < c->n_devices; i++)
        for (int j = 0; j < c->n_devices; j++) {
            int a = c->device_machine[i], b = c->device_machine[j];
            assert_near(bw(c, i, j), a == b ? intra_bw[a] : inter_bw, 1e-9);
            assert_near(lat(c, i, j), a == b ? intra_lat[a] : inter_lat, 1e-9);
        }
}

static void assert_bus(const pb_cluster *c, double delta1, double delta2, double speed,
                       double offset)
{
    assert_near(c->delta1_us, delta1, 0);
    assert_near(c->delta2_us, delta2, 0);
    assert_near(c->transfer_speed, speed, 1e-9);
    assert_near(c->init_offset_us, offset, 0);
}

/* ---------------------------------------------------------------- placeto-k80 */

static void test_placeto_k80(void **state)
{
    (void)state;
    for (int n = 1; n <= 8; n++) {
        pb_cluster *c = build("placeto-k80", n, 1);
        assert_int_equal(c->struct_size, sizeof *c);
        assert_int_equal(c->n_types, 1);
        assert_int_equal(c->n_machines, 1);
        assert_type(&c->types[0], "K80", 2.8e12, 240e9, 12 * GIB, 0.90);
        for (int i = 0; i < n; i++) {
            assert_int_equal(c->device_type[i], 0);
            assert_int_equal(c->device_machine[i], 0);
            for (int j = 0; j < n; j++) {
                assert_near(bw(c, i, j), 7600.0, 0);
                assert_near(lat(c, i, j), 0.0, 0);
            }
        }
        /* specs/placeto.md §1: delta1 5.7 µs, delta2 25 µs, 7600 bytes/µs, no initial offset. */
        assert_bus(c, 5.7, 25.0, 7600.0, 0.0);
        cluster_free(c);
    }
}

/* cluster_preset is the seeded variant with seed 1; presets without draws ignore the seed. */
static void test_default_seed(void **state)
{
    (void)state;
    pb_cluster *a = NULL, *b = build("tag-random", 12, 1), *k = build("placeto-k80", 3, 99);
    pb_error err;
    assert_int_equal(cluster_preset("tag-random", 12, &a, &err), PB_OK);
    assert_memory_equal(a->device_type, b->device_type, 12 * sizeof(int));
    assert_memory_equal(a->link_bandwidth, b->link_bandwidth, 144 * sizeof(double));
    assert_near(bw(k, 0, 1), 7600.0, 0);
    cluster_free(a);
    cluster_free(b);
    cluster_free(k);
}

/* ---------------------------------------------------------------- GDP's machine */

/* A host CPU (2 x 20-core Xeon E5-2698 v4 at 2.2 GHz, 32 fp32 FLOP per cycle and core, 8 DDR4-2133
 * channels, 512 GiB) and 8 P100s, all on PCIe 3.0 (12 GB/s, 5 µs). */
static void test_gdp_p100(void **state)
{
    (void)state;
    pb_cluster *c = build("gdp-p100", 9, 1);
    assert_int_equal(c->n_machines, 1);
    assert_int_equal(c->n_types, 2);
    assert_type(type_of(c, 0), "CPU-host", 40 * 32 * 2.2e9, 8 * 17.06e9, 512 * GIB, 0.0);
    for (int i = 1; i < 9; i++)
        assert_type(type_of(c, i), "P100", 9.3e12, 732e9, 16 * GIB, 1.46);
    assert_near(bw(c, 0, 1), 12000.0, 0);
    assert_near(bw(c, 3, 8), 12000.0, 0);
    cluster_free(c);
}

/* ---------------------------------------------------------------- TAG testbed and cloud */

/* TAG's code (specs/tag.md §5): [("v100", 30<<30, 8000, 4), ("1080ti", 9<<30, 3000, 8),
 * ("p100", 10<<30, 3000, 4)], 2810 B/µs between the groups, 12 µs on every transfer. */
static void test_tag_testbed_code(void **state)
{
    (void)state;
    pb_cluster *c = build("tag-testbed-code", 16, 1);
    assert_int_equal(c->n_machines, 3);
    for (int i = 0; i < 16; i++) {
        int m = i < 4 ? 0 : i < 12 ? 1 : 2;
        assert_int_equal(c->device_machine[i], m);
        static const double memory[3] = {30 * GIB, 9 * GIB, 10 * GIB};
        assert_near(type_of(c, i)->memory_bytes, memory[m], 0);
    }
    assert_string_equal(type_of(c, 0)->name, "V100-30G");
    assert_near(type_of(c, 0)->peak_flops, 15.7e12, 1);
    double intra_bw[3] = {8000, 3000, 3000}, intra_lat[3] = {12, 12, 12};
    assert_links(c, intra_bw, intra_lat, 2810, 12);
    cluster_free(c);
}

/* TAG §5.2: 4 x V100 32GB with NVLink; 4 machines of 2 x 1080Ti; 2 machines of 2 x P100;
 * PCIe inside those; a 100 Gbps switch. */
static void test_tag_testbed(void **state)
{
    (void)state;
    pb_cluster *c = build("tag-testbed", 16, 1);
    static const int machine[16] = {0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6};
    assert_int_equal(c->n_machines, 7);
    assert_int_equal(c->n_types, 3);
    for (int i = 0; i < 16; i++) {
        assert_int_equal(c->device_machine[i], machine[i]);
        const char *want = i < 4 ? "V100-32G" : i < 12 ? "1080Ti" : "P100";
        assert_string_equal(type_of(c, i)->name, want);
    }
    /* V100 SXM2: 15.7 TFLOP/s, 900 GB/s; AWS p3dn.24xlarge 31.212 USD/h for 8 GPUs. */
    assert_type(type_of(c, 0), "V100-32G", 15.7e12, 900e9, 32 * GIB, 31.212 / 8);
    /* GTX 1080 Ti: 3584 x 2 x 1582 MHz; not rented by clouds, so not priced. */
    assert_type(type_of(c, 4), "1080Ti", 3584 * 2 * 1582e6, 484e9, 11 * GIB, 0.0);
    assert_type(type_of(c, 12), "P100", 9.3e12, 732e9, 16 * GIB, 1.46);
    /* NVLink 2: two links per pair at ~24 GB/s each (47.9 GB/s measured); PCIe 3.0 ~12 GB/s;
     * 100 Gbit/s = 12.5 GB/s.  Latencies: NVLink 2 µs, PCIe 5 µs, the switch 5 µs. */
    double intra_bw[7] = {48 * GBPS_LINK}, intra_lat[7] = {2};
    for (int k = 1; k < 7; k++) {
        intra_bw[k] = 12 * GBPS_LINK;
        intra_lat[k] = 5;
    }
    assert_links(c, intra_bw, intra_lat, 100 * GBIT, 5);
    assert_near(bw(c, 0, 1), 48000.0, 0);
    assert_near(bw(c, 0, 4), 12500.0, 0);
    /* The Placeto bus of a non-Placeto cluster runs at its slowest link: PCIe's 12 GB/s. */
    assert_bus(c, 5.7, 25.0, 12000.0, 0.0);
    cluster_free(c);
}

/* A fixed-size preset takes its first n devices, machine by machine. */
static void test_first_devices(void **state)
{
    (void)state;
    pb_cluster *c = build("tag-testbed", 5, 1);
    assert_int_equal(c->n_machines, 2);
    assert_int_equal(c->n_types, 2);
    for (int i = 0; i < 4; i++)
        assert_int_equal(c->device_machine[i], 0);
    assert_int_equal(c->device_machine[4], 1);
    assert_string_equal(type_of(c, 4)->name, "1080Ti");
    assert_near(bw(c, 3, 4), 12500.0, 0);
    /* Machine 1 holds one device: no PCIe transfer, so the slowest link is the network. */
    assert_bus(c, 5.7, 25.0, 12500.0, 0.0);
    cluster_free(c);

    c = build("tag-testbed", 1, 1);
    assert_int_equal(c->n_machines, 1);
    assert_bus(c, 5.7, 25.0, 48000.0, 0.0);
    cluster_free(c);

    pb_error err;
    const char *msg = build_fails("tag-testbed", 17, &err);
    assert_contains(msg, "cluster 'tag-testbed'");
    assert_contains(msg, "has 16 devices; devices = 17 does not fit");
    msg = build_fails("tag-cloud", 33, &err);
    assert_contains(msg, "has 32 devices");
    msg = build_fails("heterps", 705, &err);
    assert_contains(msg, "has 704 devices");
    msg = build_fails("placeto-k80", 0, &err);
    assert_contains(msg, "must be 1..4096");
}

/* TAG §5.2: two machines of 8 x V100 16GB and four of 4 x T4, 10 Gbps between machines. */
static void test_tag_cloud(void **state)
{
    (void)state;
    pb_cluster *c = build("tag-cloud", 32, 1);
    assert_int_equal(c->n_machines, 6);
    assert_int_equal(c->n_types, 2);
    for (int i = 0; i < 32; i++) {
        int want = i < 16 ? i / 8 : 2 + (i - 16) / 4;
        assert_int_equal(c->device_machine[i], want);
        assert_string_equal(type_of(c, i)->name, i < 16 ? "V100-16G" : "T4");
    }
    assert_type(type_of(c, 0), "V100-16G", 15.7e12, 900e9, 16 * GIB, 3.06);
    assert_type(type_of(c, 31), "T4", 8.1e12, 320e9, 16 * GIB, 0.526);
    /* One NVLink 2 link (~24 GB/s) inside the V100 machines, PCIe 3.0 inside the T4 ones,
     * 10 Gbit/s = 1.25 GB/s between machines (TCP, 25 µs). */
    double intra_bw[6] = {24 * GBPS_LINK, 24 * GBPS_LINK, 12 * GBPS_LINK,
                          12 * GBPS_LINK, 12 * GBPS_LINK, 12 * GBPS_LINK};
    double intra_lat[6] = {2, 2, 5, 5, 5, 5};
    assert_links(c, intra_bw, intra_lat, 10 * GBIT, 25);
    assert_near(bw(c, 0, 31), 1250.0, 0);
    assert_bus(c, 5.7, 25.0, 1250.0, 0.0);
    cluster_free(c);
}

/* ---------------------------------------------------------------- HeterPS */

/* HeterPS §5: 4 GPU servers (8 V100 + 2 x 24 cores) and 10 CPU servers (2 x 24 cores), 100 Gbps
 * InfiniBand, 2.42 USD/h per GPU and 0.04 USD/h per core. */
static void test_heterps(void **state)
{
    (void)state;
    pb_cluster *c = build("heterps", 704, 1);
    assert_int_equal(c->n_machines, 14);
    assert_int_equal(c->n_types, 2);
    int gpus = 0, cores = 0;
    for (int i = 0; i < 704; i++) {
        int machine = i < 224 ? i / 56 : 4 + (i - 224) / 48;
        int gpu = i < 224 && i % 56 < 8;
        assert_int_equal(c->device_machine[i], machine);
        assert_string_equal(type_of(c, i)->name, gpu ? "V100-16G" : "CPU");
        gpus += gpu;
        cores += !gpu;
    }
    assert_int_equal(gpus, 32);
    assert_int_equal(cores, 14 * 48);
    /* The paper's prices replace the catalog's. */
    assert_type(type_of(c, 0), "V100-16G", 15.7e12, 900e9, 16 * GIB, 2.42);
    /* A Xeon Gold 6271C core: 2 FMA units x 16 lanes x 2 FLOP x 2.6 GHz; 6 DDR4-2933 channels
     * shared by 24 cores; a 48th of 512 GiB. */
    assert_type(type_of(c, 8), "CPU", 166.4e9, 6 * 2933e6 * 8 / 24, 512 * GIB / 48, 0.04);
    double intra_bw[14], intra_lat[14];
    for (int k = 0; k < 14; k++) {
        intra_bw[k] = k < 4 ? 12 * GBPS_LINK : 10 * GBPS_LINK; /* PCIe 3.0 / memory copy */
        intra_lat[k] = k < 4 ? 5 : 1;
    }
    assert_links(c, intra_bw, intra_lat, 100 * GBIT, 2);
    assert_bus(c, 5.7, 25.0, 10000.0, 0.0);
    cluster_free(c);
}

/* ---------------------------------------------------------------- tag-random */

static const char *const random_types[] = {"V100-32G", "1080Ti", "P100"};

/* TAG §5.2's ranges: [1, 6] machines, [1, 8] GPUs of one of three types per machine,
 * [64, 160] Gbps inside a machine, [20, 50] Gbps between two machines. */
static void check_random(const pb_cluster *c, int *types_seen, int *machines_seen)
{
    int n = c->n_devices, m = c->n_machines;
    assert_true(m >= 1 && m <= 6);
    machines_seen[m] = 1;
    int per[6] = {0}, type[6];
    for (int i = 0; i < n; i++) {
        int k = c->device_machine[i];
        assert_true(k >= 0 && k < m);
        if (per[k]++ == 0)
            type[k] = c->device_type[i];
        assert_int_equal(c->device_type[i], type[k]); /* one type per machine */
        int known = -1;
        for (int t = 0; t < 3; t++)
            if (strcmp(type_of(c, i)->name, random_types[t]) == 0)
                known = t;
        assert_true(known >= 0);
        types_seen[known] = 1;
    }
    for (int k = 0; k < m; k++)
        assert_true(per[k] >= 1 && per[k] <= 8);
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            int a = c->device_machine[i], b = c->device_machine[j];
            double v = bw(c, i, j);
            if (a == b) {
                assert_true(v >= 64 * GBIT && v <= 160 * GBIT);
                assert_near(lat(c, i, j), 5.0, 0);
            } else {
                assert_true(v >= 20 * GBIT && v <= 50 * GBIT);
                assert_near(v, bw(c, j, i), 0); /* one value per pair of machines */
                assert_near(lat(c, i, j), 25.0, 0);
            }
        }
}

static void test_random_ranges(void **state)
{
    (void)state;
    int types_seen[3] = {0}, machines_seen[7] = {0};
    for (unsigned long long seed = 1; seed <= 400; seed++) {
        int n = 1 + (int)((seed * 7) % 48);
        pb_cluster *c = build("tag-random", n, seed);
        check_random(c, types_seen, machines_seen);
        cluster_free(c);
    }
    for (int t = 0; t < 3; t++)
        assert_true(types_seen[t]);
    for (int m = 1; m <= 6; m++)
        if (!machines_seen[m])
            fail_msg("no topology with %d machines in 400 seeds", m);
    pb_error err;
    assert_contains(build_fails("tag-random", 49, &err), "devices must be 1..48 (got 49)");
    /* 48 GPUs need all 6 machines full. */
    pb_cluster *c = build("tag-random", 48, 5);
    assert_int_equal(c->n_machines, 6);
    cluster_free(c);
}

static int same_cluster(const pb_cluster *a, const pb_cluster *b)
{
    size_t n = (size_t)a->n_devices;
    if (a->n_devices != b->n_devices || a->n_machines != b->n_machines)
        return 0;
    for (size_t i = 0; i < n; i++)
        if (a->device_machine[i] != b->device_machine[i] ||
            strcmp(a->types[a->device_type[i]].name, b->types[b->device_type[i]].name) != 0)
            return 0;
    return memcmp(a->link_bandwidth, b->link_bandwidth, n * n * sizeof(double)) == 0;
}

static void test_random_seeded(void **state)
{
    (void)state;
    for (unsigned long long seed = 0; seed < 20; seed++) {
        pb_cluster *a = build("tag-random", 16, seed), *b = build("tag-random", 16, seed);
        assert_true(same_cluster(a, b));
        assert_memory_equal(a->link_latency, b->link_latency, 256 * sizeof(double));
        assert_near(a->transfer_speed, b->transfer_speed, 0);
        pb_cluster *next = build("tag-random", 16, seed + 1);
        assert_false(same_cluster(a, next));
        cluster_free(a);
        cluster_free(b);
        cluster_free(next);
    }
    /* Seeds above 2^63 are used as given (two's complement in Lua), still deterministic. */
    pb_cluster *a = build("tag-random", 7, ~0ULL), *b = build("tag-random", 7, ~0ULL);
    assert_true(same_cluster(a, b));
    cluster_free(a);
    cluster_free(b);
}

/* ---------------------------------------------------------------- names and errors */

static void test_presets_and_unknown(void **state)
{
    (void)state;
    cfg_preset *p;
    int n;
    pb_error err;
    assert_int_equal(cluster_presets(&p, &n, &err), PB_OK);
    static const char *const want[] = {"gdp-p100",    "heterps",     "heterps-types",
                                       "placeto-k80", "tag-cloud",   "tag-random",
                                       "tag-sfb",     "tag-testbed", "tag-testbed-code"};
    assert_int_equal(n, 9);
    for (int i = 0; i < n; i++) {
        assert_string_equal(p[i].name, want[i]);
        assert_true(strlen(p[i].about) > 10);
    }
    config_cluster_presets_free(p, n);
    assert_string_equal(build_fails("tag-testbd", 4, &err),
                        "unknown cluster preset 'tag-testbd' (did you mean 'tag-testbed'?)");
    assert_string_equal(build_fails("nothing-like-it", 4, &err),
                        "unknown cluster preset 'nothing-like-it' (presets: gdp-p100, "
                        "heterps, heterps-types, placeto-k80, tag-cloud, tag-random, "
                        "tag-sfb, tag-testbed, tag-testbed-code)");
}

/* ---------------------------------------------------------------- config_cluster on own text */

/* A catalog with one preset "p" whose build body is `body` (n and seed in scope). */
static int eval_catalog(const char *body, int n, cfg_cluster **out, pb_error *err)
{
    static char text[4096];
    snprintf(text, sizeof text,
             "local device_types = { G = { peak_flops = 1e12, mem_bandwidth = 1e11,\n"
             "  memory_bytes = 1e9, price_per_hour = 1, speed_vs_ref = 2 } }\n"
             "local presets = { p = { about = 'test preset', build = function(n, seed)\n"
             "%s\n"
             "end } }\n"
             "return { device_types = device_types, presets = presets }\n",
             body);
    cfg_text src = {"test/catalog.lua", text, strlen(text)};
    memset(err, 0, sizeof *err);
    *out = NULL;
    return config_cluster(&src, "p", n, 7, out, err);
}

static const char *catalog_fails(const char *body, int n, pb_error *err)
{
    cfg_cluster *c;
    if (eval_catalog(body, n, &c, err) == PB_OK)
        fail_msg("expected an error for: %s", body);
    assert_null(c);
    return err->msg;
}

#define ONE_MACHINE "machines = { { bandwidth = 100, latency = 1 } }"
#define BUS "placeto = { delta1 = 1, delta2 = 2, transfer_speed = 3, init_offset = 4 }"

static void test_catalog_ok(void **state)
{
    (void)state;
    cfg_cluster *c;
    pb_error err;
    /* Two machines, a matrix network, a per-cluster price, and math.random seeded by `seed`. */
    const char *body = "local r1 = math.random(1000000); math.randomseed(seed);\n"
                       "assert(r1 == math.random(1000000))\n"
                       "return { devices = { { type = 'G', machine = 1 }, { type = 'H', "
                       "machine = 2 } },\n"
                       "machines = { { bandwidth = 100, latency = 1 }, { bandwidth = 200, "
                       "latency = 0 } },\n"
                       "network = { bandwidth = { { 0, 30 }, { 40, 0 } }, latency = 9 },\n"
                       "types = { H = { peak_flops = 3, mem_bandwidth = 4, memory_bytes = 5, "
                       "price_per_hour = 0, speed_vs_ref = 6 } },\n" BUS " }";
    if (eval_catalog(body, 2, &c, &err) != PB_OK)
        fail_msg("unexpected error: %s", err.msg);
    assert_string_equal(c->name, "p");
    assert_int_equal(c->n_devices, 2);
    assert_int_equal(c->n_machines, 2);
    assert_int_equal(c->n_types, 2);
    assert_string_equal(c->types[0].name, "G");
    assert_string_equal(c->types[1].name, "H");
    assert_near(c->types[0].peak_flops, 1e12, 0);
    assert_near(c->types[1].speed_vs_ref, 6, 0);
    assert_int_equal(c->device_machine[1], 1);
    assert_near(c->intra_bandwidth[1], 200, 0);
    assert_near(c->inter_bandwidth[1], 30, 0);
    assert_near(c->inter_bandwidth[2], 40, 0);
    assert_near(c->inter_latency[1], 9, 0);
    assert_near(c->delta1_us, 1, 0);
    assert_near(c->init_offset_us, 4, 0);
    config_cluster_free(c);
}

static void test_catalog_errors(void **state)
{
    (void)state;
    pb_error err;
    const char *msg;
    msg = catalog_fails(
        "return { devices = { { type = 'Q', machine = 1 } }, " ONE_MACHINE ", " BUS " }", 1, &err);
    assert_string_equal(msg, "test/catalog.lua: cluster 'p': devices[1]: unknown device type "
                             "'Q' (did you mean 'G'?)");
    msg = catalog_fails("return { devices = { { type = 'G', machine = 1 } }, " ONE_MACHINE
                        ", netwrok = {}, " BUS " }",
                        1, &err);
    assert_contains(msg, "unknown key 'netwrok' (did you mean 'network'?)");
    msg = catalog_fails("return { devices = { { type = 'G', machine = 1 } }, "
                        "machines = { { bandwidth = -1, latency = 1 } }, " BUS " }",
                        1, &err);
    assert_string_equal(msg, "test/catalog.lua: cluster 'p': machines[1].bandwidth is -1; it "
                             "must be a finite number > 0");
    msg = catalog_fails(
        "return { devices = { { type = 'G', machine = 1 } }, " ONE_MACHINE ", " BUS " }", 3, &err);
    assert_contains(msg, "the preset built 1 devices for devices = 3");
    msg = catalog_fails(
        "return { devices = { { type = 'G', machine = 2 } }, " ONE_MACHINE ", " BUS " }", 1, &err);
    assert_contains(msg, "devices[1].machine must be an integer in 1..1");
    msg = catalog_fails("return { devices = { { type = 'G', machine = 1 } }, machines = { "
                        "{ bandwidth = 1, latency = 0 }, { bandwidth = 1, latency = 0 } }, "
                        "network = { bandwidth = 1, latency = 0 }, " BUS " }",
                        1, &err);
    assert_contains(msg, "machines[2] holds no device");
    msg = catalog_fails("return { devices = { { type = 'G', machine = 1 }, { type = 'G', "
                        "machine = 2 } }, machines = { { bandwidth = 1, latency = 0 }, "
                        "{ bandwidth = 1, latency = 0 } }, " BUS " }",
                        2, &err);
    assert_contains(msg, "'network' must be a table");
    msg = catalog_fails("return { devices = { { type = 'G', machine = 1 } }, " ONE_MACHINE " }", 1,
                        &err);
    assert_contains(msg, "'placeto' must be a table");
    msg = catalog_fails("return nil, 'wants an even number of devices'", 3, &err);
    assert_string_equal(msg, "cluster 'p': wants an even number of devices");
    /* The sandbox of configs: no io, no include. */
    msg = catalog_fails("return io.open('/etc/passwd')", 1, &err);
    assert_contains(msg, "test/catalog.lua:4:");
    assert_contains(msg, "'io' is not available");
    msg = catalog_fails("return include('x.lua')", 1, &err);
    assert_contains(msg, "test/catalog.lua:4:");
    /* A syntax error names the line. */
    msg = catalog_fails("return {", 1, &err);
    assert_contains(msg, "test/catalog.lua:");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_placeto_k80),
        cmocka_unit_test(test_default_seed),
        cmocka_unit_test(test_gdp_p100),
        cmocka_unit_test(test_tag_testbed),
        cmocka_unit_test(test_tag_testbed_code),
        cmocka_unit_test(test_first_devices),
        cmocka_unit_test(test_tag_cloud),
        cmocka_unit_test(test_heterps),
        cmocka_unit_test(test_random_ranges),
        cmocka_unit_test(test_random_seeded),
        cmocka_unit_test(test_presets_and_unknown),
        cmocka_unit_test(test_catalog_ok),
        cmocka_unit_test(test_catalog_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
