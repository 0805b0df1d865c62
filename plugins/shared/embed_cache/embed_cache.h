/* embed_cache.h — an embedding's forward() in terms of its prepare/release/forward_batch: the
 * graph forward() last saw stays prepared, and a pass is forward_batch with batch 1. */
#ifndef EMBEDDING_EMBED_CACHE_H
#define EMBEDDING_EMBED_CACHE_H

#include "placebench.h"
#include "placebench/nn.h"

/* Zero-initialised in the embedding's instance; freed with embed_cache_free in destroy(). */
typedef struct embed_cache {
    const pb_graph *graph; /* the graph `prepared` is for, NULL when none */
    int n_nodes;           /* its node count then, so that another graph allocated where a
                              freed one was is not taken for it */
    void *prepared;        /* from ops->prepare, owned */
} embed_cache;

/* ops->forward of an embedding whose ops (its own table) has prepare, release and
 * forward_batch: prepares g unless it is the cached graph (releasing the previous one), then
 * records forward_batch of the one feature block x with the instance's own seeds. */
int embed_cache_forward(embed_cache *c, const pb_embedding_ops *ops, void *instance, pb_nn_tape *t,
                        const pb_graph *g, pb_nn_tensor *x, pb_nn_tensor **out, pb_error *err);

/* Releases the cached graph's prepared data, if any. */
void embed_cache_free(embed_cache *c, const pb_embedding_ops *ops, void *instance);

#endif
