/* nodelink.h — networkx node-link JSON in and out (the field's graph exchange format). */
#ifndef PB_NODELINK_H
#define PB_NODELINK_H

#include "placebench.h"

#include <stdio.h>

/* Upper bounds of a node's numbers: beyond them a number is a mistake (a unit slip, a corrupt
 * file), not a measurement, and sums of them would overflow to infinity. */
#define NODELINK_MAX_COST_US 1e12 /* about 11.6 days of compute for one op */
#define NODELINK_MAX_BYTES 1e15   /* 1 PB: out_size, out_sizes, mem, bytes */
#define NODELINK_MAX_FLOPS 1e21   /* a zettaflop */

/*
 * Reads a node-link JSON file.  Node attributes read: `id` (string or integer; the node's name),
 * `type` (or `op`), `cost` (µs), `out_sizes` (bytes per port) or `out_size` (bytes, one port),
 * `mem` (parameter bytes), `flops`, `bytes`, `group`, `colocation`, `placed_with` (the name of
 * the op whose device the node takes, pb_graph.placed_with).  Links come from `links` or
 * `edges` (one of them is required) with `source`, `target` and optional `port` (a port beyond
 * the sizes a node lists has size 0, as in the Placeto reference: specs/placeto.md 1.2).  Numbers
 * must be finite, >= 0 and within the NODELINK_MAX_* bounds.  Errors name the file and the node or
 * link; bare NaN, Infinity and -Infinity (as Python's json writes them) and numbers beyond the
 * range of a double are reported as such for the node and field that hold them.  On success
 * *out is caller-owned (graph_free); on failure nothing is returned.
 */
int nodelink_read(const char *path, pb_graph **out, pb_error *err);
/* The same from a string already in memory; `label` names it in errors. */
int nodelink_parse(const char *text, const char *label, pb_graph **out, pb_error *err);
/* Writes g (op level, each op with its `group` when grouped) as node-link JSON.  Attributes
 * written: `id` (the name), `type`, `cost`, `out_size` (sum of the ports), `out_sizes`, `mem`,
 * `flops` and `bytes` when non-zero, `group`, `colocation`, `placed_with`; links carry `port`. */
int nodelink_write(const char *path, const pb_graph *g, pb_error *err);
/* The same to an open stream (the caller closes it). */
int nodelink_fwrite(FILE *f, const pb_graph *g, pb_error *err);

#endif
