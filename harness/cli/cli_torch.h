/* cli_torch.h — `placebench dataset import --torch MODEL`: real training graphs from PyTorch. */
#ifndef PB_CLI_TORCH_H
#define PB_CLI_TORCH_H

/* Runs harness/data/torch_export.py on MODEL (inception_v3, resnet101, vgg19, bert) with the
 * Python named by $PLACEBENCH_PYTHON (default python3), validates its node-link output like any
 * graph and writes it to `out`.  batch <= 0: the exporter's default.  0 or 1 (message printed). */
int cli_torch_import(const char *model, int batch, const char *out);

#endif
