/* timeline_words.c: the timeline's and the ranks' sentences that the
 * text, Markdown and HTML reports share (report.h).  Each appends plain
 * text, with no markup, and takes the format's own duration writer. */
#include <math.h>

#include "report.h"

int ga_tl_copies_words(ga_buf *s, const ga_tl_device *d, int dir, ga_dur_fmt dur)
{
	ga_copy_stat all = {0};
	char b1[64], b2[64], b3[64];

	for (int m = 0; m < GA_MEM__N; m++)
		ga_copy_stat_add(&all, &d->copy[dir][m]);
	if (!all.count)
		return 0;
	ga_buf_printf(s, "%s: %s in %ld %s, %s", ga_dir_words(dir),
	              ga_fmt_bytes(all.bytes, b1, sizeof(b1)), all.count,
	              ga_plural((size_t)all.count, "copy", "copies"), dur(all.ns, b2, sizeof(b2)));
	if (all.ns > 0)
		ga_buf_printf(s, " (%.1f GB/s)", all.bytes / all.ns);
	for (int m = 0; m < GA_MEM__N; m++) {
		const ga_copy_stat *c = &d->copy[dir][m];
		if (c->count && c->count < all.count)
			ga_buf_printf(s, "; %s %s", ga_mem_name(m), ga_fmt_bytes(c->bytes, b3, sizeof(b3)));
		else if (c->count)
			ga_buf_printf(s, ", %s", ga_mem_name(m));
	}
	if (d->dir_ns[dir] > 0)
		ga_buf_printf(s, "; %s%% of it beside a kernel",
		              ga_fmt_share(d->overlap_ns[dir] / d->dir_ns[dir], b3, sizeof(b3)));
	return 1;
}

void ga_tl_host_words(ga_buf *s, const ga_timeline *tl, ga_dur_fmt dur)
{
	static const char *const what[][2] = {
		[GA_HOST_LAUNCH] = { "launch", "launches" },
		[GA_HOST_SYNC] = { "synchronisation", "synchronisations" },
		[GA_HOST_COPY] = { "copy call", "copy calls" },
		[GA_HOST_ALLOC] = { "allocation", "allocations" },
	};
	char d[64];

	ga_buf_puts(s, "host:");
	for (int k = GA_HOST_LAUNCH; k <= GA_HOST_ALLOC; k++)
		ga_buf_printf(s, "%s %ld %s (%s%s)", k != GA_HOST_LAUNCH ? "," : "", tl->host_calls[k],
		              ga_plural((size_t)tl->host_calls[k], what[k][0], what[k][1]),
		              dur(tl->host_ns[k], d, sizeof(d)),
		              k == GA_HOST_LAUNCH ? " inside them" : "");
}

int ga_tl_loop_words(ga_buf *s, const ga_tl_proc *pr, ga_dur_fmt dur)
{
	const ga_timeline *tl = pr->tl;
	char b1[64], b2[64];

	if (tl->iterations <= 0)
		return 0;
	ga_buf_printf(s, "loop: %ld %s of %ld %s", tl->iterations,
	              ga_plural((size_t)tl->iterations, "iteration", "iterations"), tl->period,
	              ga_plural((size_t)tl->period, "launch", "launches"));
	if (isfinite(tl->iteration_ns))
		ga_buf_printf(s, ", %s each", dur(tl->iteration_ns, b1, sizeof(b1)));
	if (tl->window_is_iteration && pr->iteration_devices)
		ga_buf_printf(s, "; in one of them measured whole the GPU was busy %s%%",
		              ga_fmt_share(pr->iteration_busy_share, b2, sizeof(b2)));
	return 1;
}

void ga_straggler_words(ga_buf *s, const ga_analysis *a, const ga_rank *k, ga_dur_fmt dur)
{
	const ga_pfinding *f = &a->pfindings[k->straggler];
	char b1[64], b2[64], b3[64], b4[64];

	ga_buf_printf(s, ", pid %d): compute %s, %s against the median %s; the other ranks wait "
	              "for it at every collective", k->info->os_pid, dur(k->compute_ns, b1, sizeof(b1)),
	              ga_fmt_change(k->vs_median, b2, sizeof(b2)),
	              dur(a->ranks.median_compute_ns, b3, sizeof(b3)));
	if (!f->estimate_missing)
		ga_buf_printf(s, ": saves %s%s%% of its wall time computing no longer than the next "
		              "slowest rank", ga_fmt_pct(f->estimate, 0, b4, sizeof(b4))[0] == '<'
		              ? "" : "~", b4);
}
