/* markdown_timeline.c: the Markdown report's Timeline section, the text
 * report's figures (text_timeline.c) as two tables and a list: per process
 * its wall time, the GPU busy and idle by what the host was doing; the
 * copies per direction; the host's CUDA calls and the loop's iteration.
 * Every string here is a number or a fixed name: nothing to escape.
 * Formatting only: the figures are ga_tl_proc's (program.c). */
#include "markdown.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* One row per process: wall time, GPU busy, idle by cause. */
static void shares_table(ga_buf *b, const ga_analysis *a)
{
	ga_buf_puts(b, "| Process | Wall time | GPUs | GPU busy | Kernels | Copies | Idle | "
	               "Idle: host launching | Idle: host in its own code | Idle: host waiting "
	               "in CUDA calls |\n");
	ga_buf_puts(b, "|--------:|----------:|-----:|---------:|--------:|-------:|-----:|"
	               "---------------------:|---------------------------:|"
	               "-------------------------------:|\n");
	for (size_t i = 0; i < a->n_tl; i++) {
		const ga_tl_proc *pr = &a->tl[i];
		/* one buffer per value printed by one call */
		char w[32], x[32], p1[32], p2[32], p3[32], p4[32], p5[32], p6[32], p7[32];
		double idle = 0;
		for (int k = 0; k < GA_IDLE__N; k++)
			idle += pr->idle_share[k];
		ga_buf_printf(b, "| %d | %s", pr->pid, ga_fmt_duration(pr->wall_ns, w, sizeof(w)));
		if (pr->tl->excluded_ns > 0)
			ga_buf_printf(b, " (and %s of the profiler's own, left out)",
			              ga_fmt_duration(pr->tl->excluded_ns, x, sizeof(x)));
		if (!pr->tl->complete)
			ga_buf_puts(b, " (cut short: the process did not end normally)");
		ga_buf_printf(b, " | %zu | %s%% | %s%% | %s%% | %s%% | %s%% | %s%% | %s%% |\n",
		              pr->n_devices, ga_fmt_share(pr->busy_share, p1, sizeof(p1)),
		              ga_fmt_share(pr->kernel_share, p2, sizeof(p2)), ga_fmt_share(pr->copy_share, p3, sizeof(p3)),
		              ga_fmt_share(idle, p4, sizeof(p4)),
		              ga_fmt_share(pr->idle_share[GA_IDLE_LAUNCHING], p5, sizeof(p5)),
		              ga_fmt_share(pr->idle_share[GA_IDLE_OTHER], p6, sizeof(p6)),
		              ga_fmt_share(pr->idle_share[GA_IDLE_BLOCKING], p7, sizeof(p7)));
	}
}

/* One row per process and direction with copies. */
static void copy_row(ga_buf *b, int pid, const ga_tl_device *d, int dir, int *any)
{
	ga_copy_stat all = {0};
	char b1[64], b2[64], b3[64];
	int kinds = 0;

	for (int m = 0; m < GA_MEM__N; m++)
		ga_copy_stat_add(&all, &d->copy[dir][m]);
	if (!all.count)
		return;
	if (!*any) {
		ga_buf_puts(b, "\n| Process | Copies | Bytes | Count | Time | GB/s | Memory | "
		               "Beside a kernel |\n");
		ga_buf_puts(b, "|--------:|--------|------:|------:|-----:|-----:|--------|"
		               "----------------:|\n");
		*any = 1;
	}
	ga_buf_printf(b, "| %d | %s | %s | %ld | %s | ", pid, ga_dir_words(dir),
	              ga_fmt_bytes(all.bytes, b1, sizeof(b1)), all.count,
	              ga_fmt_duration(all.ns, b2, sizeof(b2)));
	if (all.ns > 0)
		ga_buf_printf(b, "%.1f", all.bytes / all.ns);
	ga_buf_puts(b, " | ");
	for (int m = 0; m < GA_MEM__N; m++) {
		const ga_copy_stat *c = &d->copy[dir][m];
		if (!c->count)
			continue;
		ga_buf_printf(b, "%s%s", kinds++ ? ", " : "", ga_mem_name(m));
		if (c->count < all.count)
			ga_buf_printf(b, " %s", ga_fmt_bytes(c->bytes, b3, sizeof(b3)));
	}
	ga_buf_puts(b, " | ");
	if (d->dir_ns[dir] > 0)
		ga_buf_printf(b, "%s%%", ga_fmt_share(d->overlap_ns[dir] / d->dir_ns[dir], b3, sizeof(b3)));
	ga_buf_puts(b, " |\n");
}

/* The host's calls and the loop, a list item each per process. */
static void host_items(ga_buf *b, const ga_tl_proc *pr)
{
	ga_buf_printf(b, "- pid %d, ", pr->pid);
	ga_tl_host_words(b, pr->tl, ga_fmt_duration);
	ga_buf_putc(b, '\n');
	ga_buf w = {0};
	if (ga_tl_loop_words(&w, pr, ga_fmt_duration))
		ga_buf_printf(b, "- pid %d, %s\n", pr->pid, w.s);
	ga_buf_free(&w);
}

void md_timeline(ga_buf *b, const ga_analysis *a)
{
	int any = 0;

	if (!a->n_tl)
		return;
	ga_buf_puts(b, "\n#### Timeline\n\n");
	shares_table(b, a);
	for (size_t i = 0; i < a->n_tl; i++)
		for (int dir = 0; dir < GA_DIR__N; dir++)
			copy_row(b, a->tl[i].pid, &a->tl[i].sum, dir, &any);
	ga_buf_putc(b, '\n');
	for (size_t i = 0; i < a->n_tl; i++)
		host_items(b, &a->tl[i]);
}
