/* text_ranks.c: the text report's Ranks section (a row per rank: host,
 * pid, GPU, GPU time, busy and communication shares, compute against the
 * median, top finding; then the stragglers), and the "on N of M ranks"
 * line of an entry of "What to do first".  Formatting only: the figures
 * are ga_ranks' (analyze/ranks.c). */
#include "text.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define HOST_COLS 16   /* a host name is cut to this many columns */

static void gpus_text(const ga_proc_info *pi, char *buf, size_t len)
{
	size_t n = 0;
	buf[0] = '\0';
	for (size_t g = 0; g < pi->n_gpus && n + 1 < len; g++)
		n += (size_t)snprintf(buf + n, len - n, "%s%d", g ? "," : "", pi->gpus[g].index);
	if (!pi->n_gpus)
		snprintf(buf, len, "-");
}

static char *host_text(const ga_proc_info *pi)
{
	return ga_short_name(pi->host ? pi->host : "-", HOST_COLS);
}

typedef struct {
	int rank, host, pid, gpu;
} widths;

static void row(tctx *t, const ga_analysis *a, const ga_rank *k, const widths *w)
{
	char gpus[64], b1[64], b2[64], b3[64], b4[64];
	char *host = host_text(k->info);
	const ga_rule *top = k->has_top ? ga_do_rule(a, &k->top) : NULL;

	gpus_text(k->info, gpus, sizeof(gpus));
	ga_buf_printf(&t->b, " %*ld  %-*s  %*d  %*s  %8s  %6s  %6s  %7s  %s%s\n", w->rank,
	              k->info->rank, w->host, host, w->pid, k->info->os_pid, w->gpu, gpus,
	              ga_fmt_duration(k->gpu_ns, b1, sizeof(b1)),
	              ga_fmt_pct_cell(k->busy_share, b2, sizeof(b2)), ga_fmt_pct_cell(k->comm_share, b3, sizeof(b3)),
	              ga_fmt_change(k->vs_median, b4, sizeof(b4)),
	              top && top->id ? top->id : "-", k->straggler >= 0 ? " (straggler)" : "");
	free(host);
}

static void straggler_line(tctx *t, const ga_analysis *a, const ga_rank *k)
{
	const ga_pfinding *f = &a->pfindings[k->straggler];
	char *host = host_text(k->info);
	ga_buf s = {0};

	ga_buf_printf(&s, "straggler: rank %ld (%s", k->info->rank, host);
	ga_straggler_words(&s, a, k, tx_dur_nb);
	if (f->estimate_missing)
		ga_buf_printf(&s, " (%s: estimate needs %s)", f->rule->id, f->estimate_missing);
	else
		ga_buf_printf(&s, " (%s)", f->rule->id);
	tx_wrap_buf(t, &s, 0, 2);
	free(host);
}

void tx_ranks(tctx *t, const ga_analysis *a)
{
	const ga_ranks *r = &a->ranks;
	widths w = {4, 4, 3, 3};
	ga_buf s = {0};
	char b1[64];

	ga_buf_putc(&t->b, '\n');
	tx_heading(t, "Ranks");
	ga_buf_printf(&s, "%zu %s", r->n, ga_plural(r->n, "rank", "ranks"));
	if (r->world_size >= 0)
		ga_buf_printf(&s, " of world size %ld", r->world_size);
	ga_buf_printf(&s, " on %zu %s. GPU time: the rank's kernels; busy: of its wall time; "
	              "comm: of its GPU time, in communication kernels; compute: its GPU time "
	              "outside them, against the median of %s.", r->n_hosts,
	              ga_plural(r->n_hosts, "host", "hosts"),
	              tx_dur_nb(r->median_compute_ns, b1, sizeof(b1)));
	tx_wrap_buf(t, &s, 0, 2);
	for (size_t i = 0; i < r->n; i++) {
		const ga_rank *k = &r->v[i];
		char gpus[64], num[32];
		char *host = host_text(k->info);
		gpus_text(k->info, gpus, sizeof(gpus));
		int n = snprintf(num, sizeof(num), "%ld", k->info->rank);
		w.rank = n > w.rank ? n : w.rank;
		n = (int)ga_text_width(host);
		w.host = n > w.host ? n : w.host;
		n = snprintf(num, sizeof(num), "%d", k->info->os_pid);
		w.pid = n > w.pid ? n : w.pid;
		n = (int)strlen(gpus);
		w.gpu = n > w.gpu ? n : w.gpu;
		free(host);
	}
	ga_buf_printf(&t->b, " %*s  %-*s  %*s  %*s  %8s  %6s  %6s  %7s  %s\n", w.rank, "rank", w.host,
	              "host", w.pid, "pid", w.gpu, "GPU", "GPU time", "busy", "comm", "compute",
	              "top finding");
	for (size_t i = 0; i < r->n; i++)
		row(t, a, &r->v[i], &w);
	for (size_t i = 0; i < r->n_stragglers; i++)
		straggler_line(t, a, &r->v[r->stragglers[i]]);
}

void tx_on_ranks(tctx *t, const ga_analysis *a, const ga_do *d)
{
	const ga_rank *k;
	ga_buf s = {0};

	if (!d->on_ranks)
		return;
	ga_spaces(&t->b, 4);
	ga_buf_printf(&s, "on %zu of %zu ranks", d->on_ranks, a->ranks.n);
	if ((k = ga_rank_of(a, ga_do_pid(a, d))))
		ga_buf_printf(&s, "; the figures are rank %ld's", k->info->rank);
	tx_wrap_buf(t, &s, 4, 6);
}
