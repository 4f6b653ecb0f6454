/* html_ranks.c: the HTML report's Ranks section, the text report's
 * (text_ranks.c) as a table and the stragglers, and an entry's "on N of M
 * ranks".  Formatting only: the figures are ga_ranks' (analyze/ranks.c). */
#include "html.h"

#include <math.h>
#include <string.h>

/* A host name: only the characters of a host name, any other as '?' (no
 * markup can pass). */
static void host(ga_buf *b, const char *h)
{
	for (const char *c = h ? h : "-"; *c; c++)
		ga_buf_putc(b, (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
		               (*c >= '0' && *c <= '9') || strchr(".-_:", *c) ? *c : '?');
}

void ht_ranks(ga_buf *b, const ga_analysis *a)
{
	const ga_ranks *r = &a->ranks;
	char d[32];

	if (!r->multi)
		return;
	ga_buf_printf(b, "<h2>Ranks</h2>\n<p>%zu %s", r->n, ga_plural(r->n, "rank", "ranks"));
	if (r->world_size >= 0)
		ga_buf_printf(b, " of world size %ld", r->world_size);
	ga_buf_printf(b, " on %zu %s; compute is a rank's GPU time outside communication kernels, "
	              "against the median of %s.</p>\n<table>\n<tr><th>rank</th><th>host</th>"
	              "<th>pid</th><th>GPU</th><th>GPU time</th><th>busy</th><th>comm</th>"
	              "<th>compute vs median</th><th>top finding</th></tr>\n", r->n_hosts,
	              ga_plural(r->n_hosts, "host", "hosts"),
	              ga_fmt_duration(r->median_compute_ns, d, sizeof(d)));
	for (size_t i = 0; i < r->n; i++) {
		const ga_rank *k = &r->v[i];
		const ga_rule *top = k->has_top ? ga_do_rule(a, &k->top) : NULL;
		char t[32], p1[32], p2[32], c[32];
		ga_buf_printf(b, "<tr%s><td>%ld</td><td>", k->straggler >= 0 ? " class=\"sev-high\"" : "",
		              k->info->rank);
		host(b, k->info->host);
		ga_buf_printf(b, "</td><td>%d</td><td>", k->info->os_pid);
		for (size_t g = 0; g < k->info->n_gpus; g++)
			ga_buf_printf(b, "%s%d", g ? ", " : "", k->info->gpus[g].index);
		ga_buf_printf(b, "</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>",
		              ga_fmt_duration(k->gpu_ns, t, sizeof(t)), ga_fmt_pct_cell(k->busy_share, p1, sizeof(p1)),
		              ga_fmt_pct_cell(k->comm_share, p2, sizeof(p2)), ga_fmt_change(k->vs_median, c, sizeof(c)));
		if (top && top->id)
			ga_buf_puts(b, top->id);   /* [a-z0-9-]: nothing to escape */
		ga_buf_puts(b, k->straggler >= 0 ? " (straggler)</td></tr>\n" : "</td></tr>\n");
	}
	ga_buf_puts(b, "</table>\n");
	for (size_t i = 0; i < r->n_stragglers; i++) {
		const ga_rank *k = &r->v[r->stragglers[i]];
		const ga_pfinding *f = &a->pfindings[k->straggler];
		ga_buf_printf(b, "<p><b>Straggler: rank %ld</b> (", k->info->rank);
		host(b, k->info->host);
		ga_straggler_words(b, a, k, ga_fmt_duration);
		ga_buf_puts(b, " (");
		ga_buf_puts(b, f->rule->id);
		ga_buf_puts(b, ").</p>\n");
	}
}

void ht_on_ranks(ga_buf *b, const ga_analysis *a, const ga_do *d)
{
	const ga_rank *k;
	if (!d || !d->on_ranks)
		return;
	ga_buf_printf(b, "<br>on %zu of %zu ranks", d->on_ranks, a->ranks.n);
	if ((k = ga_rank_of(a, ga_do_pid(a, d))))
		ga_buf_printf(b, "; the figures are rank %ld's", k->info->rank);
}
