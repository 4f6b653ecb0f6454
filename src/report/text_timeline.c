/* text_timeline.c: the text report's Timeline section (where each
 * process's wall time went: the GPU busy, or idle and why; the copies; one
 * iteration) and the program findings' entries in "What to do first".
 * Formatting only: the figures are ga_tl_proc's (program.c). */
#include "text.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

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
		if (ga_tl_copies_words(&s, &pr->sum, dir, tx_dur_nb)) {
			ga_spaces(&t->b, 2);
			tx_wrap_buf(t, &s, 2, 4);
		}
	ga_spaces(&t->b, 2);
	ga_tl_host_words(&s, tl, tx_dur_nb);
	tx_wrap_buf(t, &s, 2, 4);
	if (ga_tl_loop_words(&s, pr, tx_dur_nb)) {
		ga_spaces(&t->b, 2);
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
