/* text_ops.c: the text report's "Operations": each NVTX operation's share
 * of the GPU time, its kernels and the finding that saves most of its time
 * (ga_analysis.ops, src/analyze/ops.c). */
#include "text.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TOP_OPS 10          /* shown unless verbose */

/* " 1. aten::addmm: 41.0% of GPU time, 2 kernels, 8 launches", the path
 * when the operation is nested, and its top finding. */
static void op_entry(tctx *t, const ga_analysis *a, const ga_op *op, size_t i)
{
	ga_buf s = { 0 };
	char pct[32], num[32];

	snprintf(num, sizeof(num), "%2zu. ", i + 1);
	ga_buf_puts(&t->b, num);
	ga_buf_printf(&s, "%s: %s%% of GPU time, %zu %s, %ld %s", op->name,
	              ga_fmt_pct(op->share, 1, pct, sizeof(pct)), op->n_kernels,
	              ga_plural(op->n_kernels, "kernel", "kernels"), op->launches,
	              ga_plural((size_t)op->launches, "launch", "launches"));
	tx_wrap_buf(t, &s, strlen(num), 4);
	if (op->path && strcmp(op->path, op->name) != 0) {
		ga_spaces(&t->b, 4);
		ga_buf_printf(&s, "in %s", op->path);
		tx_wrap_buf(t, &s, 4, 6);
	}
	if (op->top_finding >= 0 && (size_t)op->top_finding < a->n_findings) {
		const ga_finding *f = &a->findings[op->top_finding];
		char *name = tx_kernel_name(&a->groups[f->group], t->width / 2);
		ga_spaces(&t->b, 4);
		ga_buf_printf(&s, "top finding: %s: %s (saves %s%% of GPU time)", name,
		              tx_rule_title(f->rule), ga_fmt_pct(op->top_saving, 1, pct, sizeof(pct)));
		tx_wrap_buf(t, &s, 4, 6);
		free(name);
	}
}

void tx_operations(tctx *t, const ga_analysis *a)
{
	size_t shown = a->n_ops;

	if (!a->ops_shown)
		return;
	ga_buf_putc(&t->b, '\n');
	tx_heading(t, "Operations");
	if (a->n_ops == 0) {
		ga_wrap(&t->b, "No launch was in an NVTX range (PyTorch: run the model under "
		        "`with torch.autograd.profiler.emit_nvtx():`).", 0, 0, t->width);
		return;
	}
	if (!t->verbose && shown > TOP_OPS)
		shown = TOP_OPS;
	for (size_t i = 0; i < shown; i++)
		op_entry(t, a, &a->ops[i], i);
	if (shown < a->n_ops) {
		ga_buf s = { 0 };
		size_t more = a->n_ops - shown;
		ga_buf_printf(&s, "%zu more %s (--verbose lists all).", more,
		              ga_plural(more, "operation", "operations"));
		tx_wrap_buf(t, &s, 0, 0);
	}
}
