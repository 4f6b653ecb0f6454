/* markdown_ranks.c: the Markdown report's Ranks section, the text
 * report's (text_ranks.c) as a table and a list of stragglers, and an
 * entry's "on N of M ranks".  Formatting only: the figures are
 * ga_ranks' (analyze/ranks.c). */
#include "markdown.h"

#include <math.h>
#include <string.h>

/* A host name as a code span: only the characters of a host name, any
 * other as '?' (nothing to escape then). */
static void host(ga_buf *b, const char *h)
{
	if (!h) {
		ga_buf_puts(b, "-");
		return;
	}
	ga_buf_putc(b, '`');
	for (const char *c = h; *c; c++)
		ga_buf_putc(b, (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
		               (*c >= '0' && *c <= '9') || strchr(".-_:", *c) ? *c : '?');
	ga_buf_putc(b, '`');
}

static void straggler_item(ga_buf *b, const ga_analysis *a, const ga_rank *k)
{
	const ga_pfinding *f = &a->pfindings[k->straggler];

	ga_buf_printf(b, "- **Straggler: rank %ld** (", k->info->rank);
	host(b, k->info->host);
	ga_straggler_words(b, a, k, ga_fmt_duration);
	ga_buf_printf(b, " (`%s`).\n", f->rule->id);
}

void md_ranks(ga_buf *b, const ga_analysis *a)
{
	const ga_ranks *r = &a->ranks;
	char d[32];

	ga_buf_puts(b, "\n#### Ranks\n\n");
	ga_buf_printf(b, "%zu %s", r->n, ga_plural(r->n, "rank", "ranks"));
	if (r->world_size >= 0)
		ga_buf_printf(b, " of world size %ld", r->world_size);
	ga_buf_printf(b, " on %zu %s; compute is a rank's GPU time outside communication "
	              "kernels, against the median of %s.\n\n", r->n_hosts,
	              ga_plural(r->n_hosts, "host", "hosts"),
	              ga_fmt_duration(r->median_compute_ns, d, sizeof(d)));
	ga_buf_puts(b, "| Rank | Host | PID | GPU | GPU time | Busy | Comm | Compute vs median | "
	               "Top finding |\n");
	ga_buf_puts(b, "|-----:|------|----:|-----|---------:|-----:|-----:|------------------:|"
	               "-------------|\n");
	for (size_t i = 0; i < r->n; i++) {
		const ga_rank *k = &r->v[i];
		const ga_rule *top = k->has_top ? ga_do_rule(a, &k->top) : NULL;
		char t[32], p1[32], p2[32], c[32];
		ga_buf_printf(b, "| %ld | ", k->info->rank);
		host(b, k->info->host);
		ga_buf_printf(b, " | %d | ", k->info->os_pid);
		for (size_t g = 0; g < k->info->n_gpus; g++)
			ga_buf_printf(b, "%s%d", g ? ", " : "", k->info->gpus[g].index);
		ga_buf_printf(b, "%s | %s | %s | %s | %s | ", k->info->n_gpus ? "" : "-",
		              ga_fmt_duration(k->gpu_ns, t, sizeof(t)), ga_fmt_pct_cell(k->busy_share, p1, sizeof(p1)),
		              ga_fmt_pct_cell(k->comm_share, p2, sizeof(p2)), ga_fmt_change(k->vs_median, c, sizeof(c)));
		if (top && top->id)
			ga_buf_printf(b, "`%s`", top->id);
		ga_buf_puts(b, k->straggler >= 0 ? " **(straggler)** |\n" : " |\n");
	}
	if (r->n_stragglers)
		ga_buf_putc(b, '\n');
	for (size_t i = 0; i < r->n_stragglers; i++)
		straggler_item(b, a, &r->v[r->stragglers[i]]);
}

void md_on_ranks(ga_buf *b, const ga_analysis *a, const ga_do *d)
{
	const ga_rank *k;
	if (!d->on_ranks)
		return;
	ga_buf_printf(b, "; on %zu of %zu ranks", d->on_ranks, a->ranks.n);
	if ((k = ga_rank_of(a, ga_do_pid(a, d))))
		ga_buf_printf(b, " (the figures are rank %ld's)", k->info->rank);
}
