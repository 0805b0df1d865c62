/* embed_cache.c — forward() through prepare and forward_batch, for the batched embeddings. */
#include "embed_cache.h"

int embed_cache_forward(embed_cache *c, const pb_embedding_ops *ops, void *instance, pb_nn_tape *t,
                        const pb_graph *g, pb_nn_tensor *x, pb_nn_tensor **out, pb_error *err)
{
    if (!c->prepared || c->graph != g || c->n_nodes != g->n_nodes) {
        void *prep;
        if (ops->prepare(instance, g, &prep, err))
            return PB_ERR;
        embed_cache_free(c, ops, instance);
        *c = (embed_cache){g, g->n_nodes, prep};
    }
    return ops->forward_batch(instance, c->prepared, t, x, 1, NULL, out, err);
}

void embed_cache_free(embed_cache *c, const pb_embedding_ops *ops, void *instance)
{
    if (c->prepared)
        ops->release(instance, c->prepared);
    *c = (embed_cache){0};
}
