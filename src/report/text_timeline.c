/* text_timeline.c: the text report's Timeline section (where each
 * process's wall time went: the GPU busy, or idle and why; the copies; one
 * iteration) and the program findings' entries in "What to do first".
 * Formatting only: the figures are ga_tl_proc's (program.c). */
#include "text.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Copies of one direction: bytes, count, time, memory kinds, overlap. */
static void copies_line(tctx *t, const ga_tl_device *d, int dir)
{
	ga_buf s = {0};
	ga_copy_stat all = {0};
	char b1[64], b2[64], b3[64];

	for (int m = 0; m < GA_MEM__N; m++)
		ga_copy_stat_add(&all, &d->copy[dir][m]);
	if (!all.count)
		return;
	ga_spaces(&t->b, 2);
	ga_buf_printf(&s, "%s: %s in %ld %s, %s", ga_dir_words(dir),
	              ga_fmt_bytes(all.bytes, b1, sizeof(b1)), all.count,
	              ga_plural((size_t)all.count, "copy", "copies"),
	              tx_dur_nb(all.ns, b2, sizeof(b2)));
	if (all.ns > 0)
		ga_buf_printf(&s, " (%.1f GB/s)", all.bytes / all.ns);
	for (int m = 0; m < GA_MEM__N; m++) {
		const ga_copy_stat *c = &d->copy[dir][m];
		if (c->count && c->count < all.count)
			ga_buf_printf(&s, "; %s %s", ga_mem_name(m), ga_fmt_bytes(c->bytes, b3, sizeof(b3)));
		else if (c->count)
			ga_buf_printf(&s, ", %s", ga_mem_name(m));
	}
	if (d->dir_ns[dir] > 0)
		ga_buf_printf(&s, "; %s%% of it beside a kernel",
		              ga_fmt_share(d->overlap_ns[dir] / d->dir_ns[dir], b3, sizeof(b3)));
	tx_wrap_buf(t, &s, 2, 4);
}

static void proc_block(tctx *t, const ga_analysis *a, const ga_tl_proc *pr)
{
	const ga_timeline *tl = pr->tl;
	ga_buf s = {0};
	char b1[64], b2[64], b3[64], b4[64], b5[64], b6[64], b7[64];
	double idle = 0;

	for (int k = 0; k < GA_IDLE__N; k++)
		idle += pr->idle_share[k];
	const ga_rank *k = ga_rank_of(a, pr->pid);
	if (k && a->ranks.multi)
		ga_buf_printf(&s, "rank %ld (pid %d%s%s): ", k->info->rank, k->info->os_pid,
		              k->info->host ? ", " : "", k->info->host ? k->info->host : "");
	else
		ga_buf_printf(&s, "pid %d: ", pr->pid);
	ga_buf_printf(&s, "%s of wall time", tx_dur_nb(pr->wall_ns, b1, sizeof(b1)));
	if (tl->excluded_ns > 0)
		ga_buf_printf(&s, " (and %s of the profiler's own, left out)",
		              tx_dur_nb(tl->excluded_ns, b2, sizeof(b2)));
	ga_buf_printf(&s, ", %zu %s%s", pr->n_devices, ga_plural(pr->n_devices, "GPU", "GPUs"),
	              tl->complete ? "" : "; cut short: the process did not end normally");
	tx_wrap_buf(t, &s, 0, 2);
	ga_spaces(&t->b, 2);
	ga_buf_printf(&s, "GPU busy %s%% (kernels %s%%, copies %s%%); idle %s%%: the host "
	              "launching %s%%, in its own code %s%%, waiting in CUDA calls %s%%",
	              ga_fmt_share(pr->busy_share, b1, sizeof(b1)), ga_fmt_share(pr->kernel_share, b2, sizeof(b2)),
	              ga_fmt_share(pr->copy_share, b3, sizeof(b3)), ga_fmt_share(idle, b4, sizeof(b4)),
	              ga_fmt_share(pr->idle_share[GA_IDLE_LAUNCHING], b5, sizeof(b5)),
	              ga_fmt_share(pr->idle_share[GA_IDLE_OTHER], b6, sizeof(b6)),
	              ga_fmt_share(pr->idle_share[GA_IDLE_BLOCKING], b7, sizeof(b7)));
	tx_wrap_buf(t, &s, 2, 4);
	for (int dir = 0; dir < GA_DIR__N; dir++)
		copies_line(t, &pr->sum, dir);
	ga_spaces(&t->b, 2);
	ga_buf_printf(&s, "host: %ld %s (%s inside them), %ld %s (%s), %ld copy %s (%s), %ld "
	              "%s (%s)",
	              tl->host_calls[GA_HOST_LAUNCH],
	              ga_plural((size_t)tl->host_calls[GA_HOST_LAUNCH], "launch", "launches"),
	              tx_dur_nb(tl->host_ns[GA_HOST_LAUNCH], b1, sizeof(b1)),
	              tl->host_calls[GA_HOST_SYNC],
	              ga_plural((size_t)tl->host_calls[GA_HOST_SYNC], "synchronisation",
	                        "synchronisations"),
	              tx_dur_nb(tl->host_ns[GA_HOST_SYNC], b2, sizeof(b2)),
	              tl->host_calls[GA_HOST_COPY],
	              ga_plural((size_t)tl->host_calls[GA_HOST_COPY], "call", "calls"),
	              tx_dur_nb(tl->host_ns[GA_HOST_COPY], b3, sizeof(b3)),
	              tl->host_calls[GA_HOST_ALLOC],
	              ga_plural((size_t)tl->host_calls[GA_HOST_ALLOC], "allocation", "allocations"),
	              tx_dur_nb(tl->host_ns[GA_HOST_ALLOC], b4, sizeof(b4)));
	tx_wrap_buf(t, &s, 2, 4);
	if (tl->iterations > 0) {
		ga_spaces(&t->b, 2);
		ga_buf_printf(&s, "loop: %ld %s of %ld %s", tl->iterations,
		              ga_plural((size_t)tl->iterations, "iteration", "iterations"), tl->period,
		              ga_plural((size_t)tl->period, "launch", "launches"));
		if (isfinite(tl->iteration_ns))
			ga_buf_printf(&s, ", %s each", tx_dur_nb(tl->iteration_ns, b1, sizeof(b1)));
		if (tl->window_is_iteration && pr->iteration_devices)
			ga_buf_printf(&s, "; in the last one measured whole the GPU was busy %s%%",
			              ga_fmt_share(pr->iteration_busy_share, b2, sizeof(b2)));
		tx_wrap_buf(t, &s, 2, 4);
	}
}

void tx_timeline(tctx *t, const ga_analysis *a)
{
	if (!a->n_tl)
		return;
	size_t hidden = 0;
	ga_buf_putc(&t->b, '\n');
	tx_heading(t, "Timeline");
	for (size_t j = 0; j < a->n_tl; j++) {
		/* of many ranks, the first and the stragglers, in rank order */
		const ga_tl_proc *pr = ga_rank_tl(a, j);
		const ga_rank *k = a->ranks.multi ? ga_rank_of(a, pr->pid) : NULL;
		if (k && !k->shown && !t->verbose)
			hidden++;
		else
			proc_block(t, a, pr);
	}
	if (hidden) {
		ga_buf s = {0};
		ga_buf_printf(&s, "%zu more %s: their busy shares are in the Ranks table, "
		              "--verbose shows each one's timeline.", hidden,
		              ga_plural(hidden, "rank", "ranks"));
		tx_wrap_buf(t, &s, 0, 2);
	}
}

void tx_program_entry(tctx *t, const ga_analysis *a, const ga_pfinding *f, size_t i)
{
	ga_buf s = {0};
	char num[32], b1[64], b2[64], b3[64];

	if (i && t->verbose)
		ga_buf_putc(&t->b, '\n');
	snprintf(num, sizeof(num), "%2zu. ", i + 1);
	ga_buf_puts(&t->b, num);
	/* of several ranks, the "on N of M ranks" line names the rank */
	char *line = a->n_tl > 1 && !(a->ranks.multi && ga_rank_of(a, f->pid))
	             ? ga_xasprintf("%s (pid %d)", tx_rule_title(f->rule), f->pid)
	             : ga_xstrdup(tx_rule_title(f->rule));
	if (i == 0 && t->color)
		ga_buf_printf(&s, C_BOLD "%s" C_RESET, line);
	else
		ga_buf_puts(&s, line);
	free(line);
	tx_wrap_buf(t, &s, strlen(num), 4);
	ga_spaces(&t->b, 4);
	tx_severity_tag(t, &s, f->rule->severity);
	if (f->estimate_missing) {
		ga_buf_printf(&s, "estimate needs %s", f->estimate_missing);
	} else {
		ga_fmt_pct(f->estimate, 0, b1, sizeof(b1));
		ga_buf_printf(&s, "saves %s%s%% of wall time, estimated %s%s, fix %s",
		              b1[0] == '<' ? "" : "~", b1, ga_fmt_speedup(f->speedup, b2, sizeof(b2)),
		              f->affects < 1 ? " on the part it changes" : "",
		              ga_fmt_speedup_range(f->speedup_min, f->speedup_max, b3, sizeof(b3)));
	}
	tx_wrap_buf(t, &s, 4, 6);
	if (t->verbose && f->rule->model) {
		ga_spaces(&t->b, 4);
		ga_buf_printf(&s, "model: %s", f->rule->model);
		tx_wrap_buf(t, &s, 4, 6);
	}
	if (f->n_evidence) {
		ga_spaces(&t->b, 4);
		ga_buf_puts(&s, "evidence: ");
		tx_evidence_list(&s, f->evidence, f->n_evidence);
		tx_wrap_buf(t, &s, 4, 6);
	}
}
