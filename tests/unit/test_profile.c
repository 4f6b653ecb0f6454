/* test_profile.c: the profile model (profile.c) and its JSON form
 * (profile_json.c).
 *
 * Every profile in this file is SYNTHETIC: device figures, kernel names and
 * metric values are made up to exercise the code, not measured on a GPU. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "profile/json_fast.h"
#include "profile/profile.h"

/* The smallest valid profile, with a placeholder for the launches array. */
#define HEAD "{\"format\": \"gpuadvise-profile\", \"schema\": 1, " \
             "\"device\": {\"name\": \"Synthetic GPU\", \"sm_count\": 4}, "

/* ------------------------------------------------------------------------ */
/* Helpers                                                                  */

/* Load text that must be rejected; check the code and the exact message. */
static void expect_error(const char *text, ga_errcode code, const char *msg)
{
	ga_profile p;
	ga_error err = {0};

	int rc = ga_profile_load_string(&p, text, "t.json", &err);
	if (rc == 0 || strcmp(err.msg, msg) != 0)
		print_error("input:    %s\nexpected: %s\ngot:      %s (rc %d)\n", text, msg,
		            err.msg, rc);
	assert_int_equal(rc, -1);
	assert_int_equal(err.code, code);
	assert_string_equal(err.msg, msg);
	/* A failed load leaves the profile empty. */
	assert_int_equal(p.n_launches, 0);
	assert_int_equal(p.n_metrics, 0);
	assert_null(p.metrics);
	assert_null(p.launches);
	assert_null(p.device.name);
	assert_int_equal(p.collection.app_status, -1);
	ga_profile_free(&p);
}

static void load_ok(ga_profile *p, const char *text)
{
	ga_error err = {0};

	int rc = ga_profile_load_string(p, text, "t.json", &err);
	if (rc != 0)
		print_error("unexpected error: %s\n", err.msg);
	assert_int_equal(rc, 0);
}

static void assert_same_double(double a, double b)
{
	if (isnan(a) || isnan(b)) {
		assert_true(isnan(a));
		assert_true(isnan(b));
	} else {
		/* Exact: the writer must round-trip doubles bit for bit. */
		assert_true(memcmp(&a, &b, sizeof(a)) == 0);
	}
}

static void assert_same_str(const char *a, const char *b)
{
	if (!a || !b) {
		assert_null(a);
		assert_null(b);
	} else {
		assert_string_equal(a, b);
	}
}

/* A synthetic profile covering every field. */
static void build_sample(ga_profile *p)
{
	ga_launch *l;

	ga_profile_init(p);
	p->device.name = ga_xstrdup("Synthetic GPU 80GB");
	p->device.chip = ga_xstrdup("SYN100");
	p->device.cc_major = 9;
	p->device.cc_minor = 0;
	p->device.sm_count = 132;
	p->device.sm_clock_mhz = 1980.5;
	p->device.mem_clock_mhz = 2619;
	p->device.bus_width_bits = 5120;
	p->device.mem_bandwidth_gbs = 3352.32;
	p->device.l2_bytes = 52428800;
	p->device.max_threads_per_sm = 2048;
	p->device.max_blocks_per_sm = 32;
	p->device.regs_per_sm = 65536;
	p->device.smem_per_sm = 233472;
	p->device.smem_per_block_optin = 232448;
	p->device.warp_size = 32;
	p->device.driver_version = 13000;
	p->device.cupti_version = 26;

	p->collection.tool_version = ga_xstrdup("0.1.0");
	p->collection.date = ga_xstrdup("2025-01-02T03:04:05Z");
	p->collection.mode = ga_xstrdup("synthetic");
	p->collection.command = ga_xstrdup("./app --size 1024 \"quoted\" \\ back\tslash");
	p->collection.host = NULL; /* optional: omitted */
	p->collection.passes = 7;
	p->collection.wall_seconds = 12.25;
	p->collection.app_status = 3;
	p->collection.app_signal = 9;
	p->collection.incomplete = 1;
	p->collection.note = ga_xstrdup("stopped early (synthetic)");
	p->collection.min_share_pct = 2.5;
	p->collection.profiler_measure_seconds = 3.5;
	p->collection.loop_replay_launches = 48;
	p->collection.graph_launches = 5;
	p->collection.quick = 1;
	{
		/* One kernel left short of metric sets by --min-share, one not. */
		ga_unprofiled u[2] = {
			{ga_xstrdup("reduce"), 7, {1, 1, 1}, {1024, 1, 1}, 99, 1},
			{ga_xstrdup("_Z5saxpyIfEviT_PKS0_PS0_"), 4242, {4096, 2, 1}, {256, 1, 4}, 3, 0},
		};
		for (size_t i = 0; i < 2; i++)
			GA_PUSH(p->unprofiled, p->n_unprofiled, p->cap_unprofiled, u[i]);
	}

	ga_profile_add_metric(p, "sm__throughput.avg.pct_of_peak_sustained_elapsed");
	ga_profile_add_metric(p, "dram__bytes.sum");
	ga_profile_add_metric(p, "a_metric_after_b");

	l = ga_profile_add_launch(p);
	l->name = ga_xstrdup("void saxpy<float>(int, float, float const*, float*)");
	l->mangled = ga_xstrdup("_Z5saxpyIfEviT_PKS0_PS0_");
	l->pid = 4242;
	l->index = 17;
	l->grid[0] = 4096; l->grid[1] = 2; l->grid[2] = 1;
	l->block[0] = 256; l->block[1] = 1; l->block[2] = 4;
	l->registers = 40;
	l->smem_static = 1024;
	l->smem_dynamic = 49152;
	l->stream = 13;
	l->context = 1;
	l->duration_ns = 123456.789;
	l->range_ns = 131456.25;           /* measured in a loop's range */
	l->occ_theoretical_pct = 200.0 / 3.0; /* needs all 17 digits */
	l->occ_limit_blocks = 32;
	l->occ_limit_registers = 6;
	l->occ_limit_smem = 4;
	l->occ_limit_warps = 8;
	l->occ_limiter = ga_xstrdup("shared_memory");
	l->values[0] = 0.1;                 /* not exactly representable */
	l->values[1] = 1.0e300;
	l->values[2] = NAN;                 /* missing */

	l = ga_profile_add_launch(p);
	l->name = ga_xstrdup("reduce");
	l->mangled = ga_xstrdup("reduce");
	l->grid[0] = 1; l->grid[1] = 1; l->grid[2] = 1;
	l->block[0] = 1024; l->block[1] = 1; l->block[2] = 1;
	l->duration_ns = NAN;               /* unknown */
	l->index = -1;
	l->pid = -5;
	l->values[0] = -0.0;
	l->values[1] = 5e-324;              /* smallest denormal */
	l->values[2] = 3;
}

/* The kernel a launch or an unprofiled entry belongs to. */
static void compare_kernel(const char *mangled_a, int pid_a, const unsigned grid_a[3],
                           const unsigned block_a[3], const char *mangled_b, int pid_b,
                           const unsigned grid_b[3], const unsigned block_b[3])
{
	assert_same_str(mangled_a, mangled_b);
	assert_int_equal(pid_a, pid_b);
	for (int j = 0; j < 3; j++) {
		assert_int_equal(grid_a[j], grid_b[j]);
		assert_int_equal(block_a[j], block_b[j]);
	}
}

static void compare_profiles(const ga_profile *a, const ga_profile *b)
{
	size_t i, j;

	assert_int_equal(b->schema, GA_PROFILE_SCHEMA);
	assert_same_str(a->device.name, b->device.name);
	assert_same_str(a->device.chip, b->device.chip);
	assert_int_equal(a->device.cc_major, b->device.cc_major);
	assert_int_equal(a->device.cc_minor, b->device.cc_minor);
	assert_int_equal(a->device.sm_count, b->device.sm_count);
	assert_same_double(a->device.sm_clock_mhz, b->device.sm_clock_mhz);
	assert_same_double(a->device.mem_clock_mhz, b->device.mem_clock_mhz);
	assert_int_equal(a->device.bus_width_bits, b->device.bus_width_bits);
	assert_same_double(a->device.mem_bandwidth_gbs, b->device.mem_bandwidth_gbs);
	assert_int_equal(a->device.l2_bytes, b->device.l2_bytes);
	assert_int_equal(a->device.max_threads_per_sm, b->device.max_threads_per_sm);
	assert_int_equal(a->device.max_blocks_per_sm, b->device.max_blocks_per_sm);
	assert_int_equal(a->device.regs_per_sm, b->device.regs_per_sm);
	assert_int_equal(a->device.smem_per_sm, b->device.smem_per_sm);
	assert_int_equal(a->device.smem_per_block_optin, b->device.smem_per_block_optin);
	assert_int_equal(a->device.warp_size, b->device.warp_size);
	assert_int_equal(a->device.driver_version, b->device.driver_version);
	assert_int_equal(a->device.cupti_version, b->device.cupti_version);

	assert_same_str(a->collection.tool_version, b->collection.tool_version);
	assert_same_str(a->collection.date, b->collection.date);
	assert_same_str(a->collection.mode, b->collection.mode);
	assert_same_str(a->collection.command, b->collection.command);
	assert_same_str(a->collection.host, b->collection.host);
	assert_int_equal(a->collection.passes, b->collection.passes);
	assert_same_double(a->collection.wall_seconds, b->collection.wall_seconds);
	assert_int_equal(a->collection.app_status, b->collection.app_status);
	assert_int_equal(a->collection.app_signal, b->collection.app_signal);
	assert_int_equal(a->collection.incomplete, b->collection.incomplete);
	assert_same_str(a->collection.note, b->collection.note);
	assert_same_double(a->collection.min_share_pct, b->collection.min_share_pct);
	assert_int_equal(a->collection.loop_replay_launches, b->collection.loop_replay_launches);
	assert_int_equal(a->collection.graph_launches, b->collection.graph_launches);
	assert_int_equal(a->collection.quick, b->collection.quick);

	assert_int_equal(a->n_unprofiled, b->n_unprofiled);
	for (i = 0; i < a->n_unprofiled; i++) {
		const ga_unprofiled *x = &a->unprofiled[i], *y = &b->unprofiled[i];
		compare_kernel(x->mangled, x->pid, x->grid, x->block, y->mangled, y->pid, y->grid,
		               y->block);
		assert_int_equal(x->launches, y->launches);
		assert_int_equal(x->below_min_share, y->below_min_share);
	}

	assert_int_equal(a->n_metrics, b->n_metrics);
	for (i = 0; i < a->n_metrics; i++)
		assert_string_equal(a->metrics[i], b->metrics[i]);

	assert_int_equal(a->n_launches, b->n_launches);
	for (i = 0; i < a->n_launches; i++) {
		const ga_launch *x = &a->launches[i], *y = &b->launches[i];
		assert_same_str(x->name, y->name);
		compare_kernel(x->mangled, x->pid, x->grid, x->block, y->mangled, y->pid, y->grid,
		               y->block);
		assert_int_equal(x->index, y->index);
		assert_int_equal(x->registers, y->registers);
		assert_int_equal(x->smem_static, y->smem_static);
		assert_int_equal(x->smem_dynamic, y->smem_dynamic);
		assert_int_equal(x->stream, y->stream);
		assert_int_equal(x->context, y->context);
		assert_same_double(x->duration_ns, y->duration_ns);
		assert_same_double(x->range_ns, y->range_ns);
		assert_same_double(x->occ_theoretical_pct, y->occ_theoretical_pct);
		assert_int_equal(x->occ_limit_blocks, y->occ_limit_blocks);
		assert_int_equal(x->occ_limit_registers, y->occ_limit_registers);
		assert_int_equal(x->occ_limit_smem, y->occ_limit_smem);
		assert_int_equal(x->occ_limit_warps, y->occ_limit_warps);
		assert_same_str(x->occ_limiter, y->occ_limiter);
		for (j = 0; j < a->n_metrics; j++)
			assert_same_double(x->values[j], y->values[j]);
	}
}

/* ------------------------------------------------------------------------ */
/* The model                                                                */

static void test_init_and_model(void **state)
{
	ga_profile p;
	ga_launch *l;

	(void)state;
	memset(&p, 0xAB, sizeof(p));
	ga_profile_init(&p);
	assert_int_equal(p.schema, GA_PROFILE_SCHEMA);
	assert_int_equal(p.collection.app_status, -1);
	assert_int_equal(p.n_metrics, 0);
	assert_int_equal(p.n_launches, 0);
	assert_null(p.device.name);
	assert_null(p.source_path);

	assert_int_equal(ga_profile_add_metric(&p, "m0"), 0);
	l = ga_profile_add_launch(&p);
	assert_true(isnan(l->values[0]));
	assert_true(isnan(l->duration_ns));
	assert_true(isnan(l->range_ns));
	assert_int_equal(l->grid[0], 0);
	assert_null(l->name);
	l->values[0] = 1.5;

	/* Adding a metric grows existing launches with NAN; a known name is
	 * not added twice. */
	assert_int_equal(ga_profile_add_metric(&p, "m1"), 1);
	assert_int_equal(ga_profile_add_metric(&p, "m0"), 0);
	assert_int_equal(p.n_metrics, 2);
	assert_true(p.launches[0].values[0] == 1.5);
	assert_true(isnan(p.launches[0].values[1]));
	l = ga_profile_add_launch(&p);
	assert_true(isnan(l->values[0]) && isnan(l->values[1]));

	assert_int_equal(ga_profile_metric_index(&p, "m1"), 1);
	assert_int_equal(ga_profile_metric_index(&p, "m0"), 0);
	assert_int_equal(ga_profile_metric_index(&p, "nope"), -1);

	l->grid[0] = 100; l->grid[1] = 2; l->grid[2] = 3;
	l->block[0] = 256; l->block[1] = 4; l->block[2] = 1;
	assert_true(ga_launch_total_threads(l) == 100.0 * 2 * 3 * 256 * 4);
	/* No overflow of unsigned arithmetic. */
	l->grid[0] = 2147483647u; l->grid[1] = 65535; l->grid[2] = 65535;
	l->block[0] = 1024; l->block[1] = 1; l->block[2] = 1;
	assert_true(ga_launch_total_threads(l) ==
	            2147483647.0 * 65535.0 * 65535.0 * 1024.0);

	ga_profile_free(&p);
	/* Freed profiles are reusable and freeing twice is harmless. */
	assert_int_equal(p.n_metrics, 0);
	assert_int_equal(p.collection.app_status, -1);
	ga_profile_free(&p);
}

/* Two files of one run (--import a.json --import b.json): b's launches are
 * appended to a's with their own pid and names, and their values land under
 * the right names although b lists other metrics, in another order. */
static void test_merge(void **state)
{
	ga_profile a, b;

	(void)state;
	load_ok(&a, HEAD "\"metrics\": [\"x\", \"y\"], \"launches\": ["
	            "{\"name\": \"ka\", \"pid\": 100, \"grid\": [1, 1, 1], \"block\": [32, 1, 1],"
	            " \"values\": {\"x\": 1, \"y\": 2}}],"
	            " \"unprofiled\": [{\"mangled\": \"ka\", \"pid\": 100, \"grid\": [1, 1, 1],"
	            " \"block\": [32, 1, 1], \"launches\": 4}]}");
	load_ok(&b, HEAD "\"metrics\": [\"z\", \"y\"], \"launches\": ["
	            "{\"name\": \"kb\", \"pid\": 200, \"grid\": [7, 1, 1], \"block\": [64, 1, 1],"
	            " \"duration_ns\": 5000, \"values\": {\"z\": 30, \"y\": 20}},"
	            "{\"name\": \"kc\", \"pid\": 200, \"grid\": [1, 1, 1], \"block\": [1, 1, 1],"
	            " \"values\": {\"y\": 21}}],"
	            " \"unprofiled\": [{\"mangled\": \"kb\", \"pid\": 200, \"grid\": [7, 1, 1],"
	            " \"block\": [64, 1, 1], \"launches\": 9}],"
	            " \"sources\": [{\"mangled\": \"kb\", \"pid\": 200, \"grid\": [7, 1, 1],"
	            " \"block\": [64, 1, 1], \"trigger\": \"--source\", \"lineinfo\": true,"
	            " \"pcs\": [{\"pc\": 16, \"file\": \"k.cu\", \"line\": 12, \"inst\": 5}]}]}");

	ga_profile_merge(&a, &b);
	assert_int_equal(a.n_launches, 3);
	assert_int_equal(a.n_metrics, 3);
	assert_string_equal(a.metrics[0], "x");
	assert_string_equal(a.metrics[1], "y");
	assert_string_equal(a.metrics[2], "z");
	/* a's launch: its values kept, NAN for the metric only b has. */
	assert_string_equal(a.launches[0].name, "ka");
	assert_int_equal(a.launches[0].pid, 100);
	assert_true(a.launches[0].values[0] == 1 && a.launches[0].values[1] == 2);
	assert_true(isnan(a.launches[0].values[2]));
	/* b's launches: moved with their fields, values remapped by name. */
	assert_string_equal(a.launches[1].name, "kb");
	assert_int_equal(a.launches[1].pid, 200);
	assert_int_equal(a.launches[1].grid[0], 7);
	assert_int_equal(a.launches[1].block[0], 64);
	assert_true(a.launches[1].duration_ns == 5000);
	assert_true(isnan(a.launches[1].values[0]));
	assert_true(a.launches[1].values[1] == 20 && a.launches[1].values[2] == 30);
	assert_string_equal(a.launches[2].name, "kc");
	assert_true(isnan(a.launches[2].values[0]) && isnan(a.launches[2].values[2]));
	assert_true(a.launches[2].values[1] == 21);
	/* b's unprofiled launches and source lines move after a's (several
	 * --import files keep each file's lines); b is emptied. */
	assert_int_equal(a.n_unprofiled, 2);
	assert_int_equal(a.unprofiled[0].launches, 4);
	assert_int_equal(a.unprofiled[1].pid, 200);
	assert_int_equal(a.unprofiled[1].launches, 9);
	assert_int_equal(a.n_sources, 1);
	assert_string_equal(a.sources[0].mangled, "kb");
	assert_int_equal(a.sources[0].pid, 200);
	assert_int_equal(a.sources[0].n_pcs, 1);
	assert_string_equal(a.sources[0].pcs[0].file, "k.cu");
	assert_int_equal(a.sources[0].pcs[0].line, 12);
	assert_int_equal(b.n_sources, 0);
	assert_int_equal(b.n_unprofiled, 0);
	assert_int_equal(b.n_launches, 0);
	assert_int_equal(b.n_metrics, 0);
	assert_null(b.launches);
	assert_null(b.device.name);
	ga_profile_free(&a);
	ga_profile_free(&b);
}

/* Ranks: the launcher's variables, the first family set deciding. */
static const char *const *env_table;

static const char *fake_env(const char *name, void *ctx)
{
	(void)ctx;
	for (size_t i = 0; env_table[i]; i += 2)
		if (strcmp(env_table[i], name) == 0)
			return env_table[i + 1];
	return NULL;
}

static void test_rank_env(void **state)
{
	ga_proc_info pi;
	(void)state;

	static const char *const torchrun_in_slurm[] = {
		"SLURM_PROCID", "1", "SLURM_NTASKS", "2", "RANK", "5", "WORLD_SIZE", "16",
		"LOCAL_RANK", "1", NULL};
	env_table = torchrun_in_slurm;
	ga_proc_info_init(&pi, 10);
	ga_proc_info_from_env(&pi, fake_env, NULL);
	assert_int_equal(pi.rank, 5);
	assert_int_equal(pi.world_size, 16);
	assert_int_equal(pi.local_rank, 1);
	assert_string_equal(pi.rank_from, "RANK");
	ga_proc_info_free(&pi);

	/* a rank that is not a number is no rank: the next family decides */
	static const char *const odd[] = {
		"RANK", "x1", "PMI_RANK", "7", "PMI_SIZE", "-3", "SLURM_PROCID", "2", NULL};
	env_table = odd;
	ga_proc_info_from_env(&pi, fake_env, NULL);
	assert_int_equal(pi.rank, 7);
	assert_int_equal(pi.world_size, -1);
	assert_int_equal(pi.local_rank, -1);
	assert_string_equal(pi.rank_from, "PMI_RANK");
	ga_proc_info_free(&pi);

	static const char *const none[] = {"WORLD_SIZE", "4", "RANK", "", NULL};
	env_table = none;
	ga_proc_info_from_env(&pi, fake_env, NULL);
	assert_int_equal(pi.rank, -1);
	assert_int_equal(pi.world_size, -1);
	assert_null(pi.rank_from);
	ga_proc_info_free(&pi);
}

/* "processes": read, written back the same, and refused with the field
 * named when ill-typed. */
static void test_processes_json(void **state)
{
	ga_profile a, b;
	ga_error err = {0};
	(void)state;

	load_ok(&a, HEAD "\"metrics\": [], \"launches\": [], \"processes\": ["
	            "{\"pid\": 7, \"host\": \"n1\", \"rank\": 3, \"local_rank\": 1,"
	            " \"world_size\": 8, \"rank_from\": \"SLURM_PROCID\","
	            " \"gpus\": [{\"index\": 1, \"uuid\": \"GPU-1\"}, {\"index\": 0}]},"
	            "{\"pid\": 9, \"os_pid\": 7}]}");
	assert_int_equal(a.n_procs, 2);
	const ga_proc_info *p7 = ga_profile_proc(&a, 7), *p9 = ga_profile_proc(&a, 9);
	assert_non_null(p7);
	assert_string_equal(p7->host, "n1");
	assert_int_equal(p7->rank, 3);
	assert_int_equal(p7->local_rank, 1);
	assert_int_equal(p7->world_size, 8);
	assert_int_equal(p7->os_pid, 7);
	assert_int_equal(p7->n_gpus, 2);
	assert_string_equal(p7->gpus[0].uuid, "GPU-1");
	assert_null(p7->gpus[1].uuid);
	assert_non_null(p9);
	assert_int_equal(p9->os_pid, 7);
	assert_int_equal(p9->rank, -1);
	assert_null(ga_profile_proc(&a, 8));
	char *text = ga_profile_to_string(&a, 2);
	load_ok(&b, text);
	char *again = ga_profile_to_string(&b, 2);
	assert_string_equal(text, again);
	free(text);
	free(again);
	ga_profile_free(&a);
	ga_profile_free(&b);

	static const char *const bad[] = {
		"\"processes\": {}", "processes",
		"\"processes\": [3]", "processes[0]",
		"\"processes\": [{\"rank\": 1}]", "'pid' is missing",
		"\"processes\": [{\"pid\": 1, \"rank\": -1}]", "'rank' must be an integer >= 0",
		"\"processes\": [{\"pid\": 1, \"host\": 5}]", "'host' must be a string",
		"\"processes\": [{\"pid\": 1, \"gpus\": [{\"uuid\": \"x\"}]}]", "'gpus'",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i += 2) {
		char *t = ga_xasprintf(HEAD "\"metrics\": [], \"launches\": [], %s}", bad[i]);
		assert_int_equal(ga_profile_load_string(&a, t, "r.json", &err), -1);
		assert_non_null(strstr(err.msg, "r.json"));
		if (!strstr(err.msg, bad[i + 1]))
			fail_msg("%s: %s lacks %s", bad[i], err.msg, bad[i + 1]);
		free(t);
	}
}

/* Ranks on two hosts with the same pid: the second file's process gets a
 * new pid everywhere (launches, timeline, record) and keeps its own as
 * os_pid; a third file with yet another clash gets another. */
static void test_merge_pid_clash(void **state)
{
	ga_profile a, b, c;
	(void)state;
	const char *fmt = HEAD "\"metrics\": [\"x\"], \"launches\": ["
	        "{\"name\": \"k\", \"pid\": 40, \"grid\": [1, 1, 1], \"block\": [32, 1, 1],"
	        " \"values\": {\"x\": %d}}],"
	        " \"unprofiled\": [{\"mangled\": \"k\", \"pid\": 40, \"grid\": [1, 1, 1],"
	        " \"block\": [32, 1, 1], \"launches\": 2}],"
	        " \"timelines\": [{\"pid\": 40, \"wall_ns\": %d}],"
	        " \"processes\": [{\"pid\": 40, \"host\": \"n%d\", \"rank\": %d}]}";
	char *t;

	t = ga_xasprintf(fmt, 1, 100, 0, 0);
	load_ok(&a, t);
	free(t);
	t = ga_xasprintf(fmt, 2, 200, 1, 1);
	load_ok(&b, t);
	free(t);
	t = ga_xasprintf(fmt, 3, 300, 2, 2);
	load_ok(&c, t);
	free(t);
	ga_profile_merge(&a, &b);
	ga_profile_merge(&a, &c);
	assert_int_equal(a.n_launches, 3);
	assert_int_equal(a.n_timelines, 3);
	assert_int_equal(a.n_procs, 3);
	assert_int_equal(a.n_unprofiled, 3);
	int pids[3];
	for (int i = 0; i < 3; i++) {
		pids[i] = a.launches[i].pid;
		assert_true(a.launches[i].values[0] == i + 1);
		assert_int_equal(a.unprofiled[i].pid, pids[i]);
		const ga_timeline *tl = ga_profile_timeline(&a, pids[i]);
		assert_non_null(tl);
		assert_true(tl->wall_ns == 100.0 * (i + 1));
		const ga_proc_info *pi = ga_profile_proc(&a, pids[i]);
		assert_non_null(pi);
		assert_int_equal(pi->rank, i);
		assert_int_equal(pi->os_pid, 40);
	}
	assert_int_equal(pids[0], 40);
	assert_true(pids[1] != 40 && pids[2] != 40 && pids[1] != pids[2]);
	ga_profile_free(&a);
}

/* ------------------------------------------------------------------------ */
/* Round trip and output layout                                             */

static void test_round_trip(void **state)
{
	ga_profile a, b, c;
	char *text, *text2, *compact;

	(void)state;
	build_sample(&a);
	text = ga_profile_to_string(&a, 2);
	assert_non_null(text);
	assert_true(text[strlen(text) - 1] == '\n');
	load_ok(&b, text);
	compare_profiles(&a, &b);
	assert_null(b.source_path); /* load_string sets no path */

	/* Deterministic: the reloaded profile serialises to the same text. */
	text2 = ga_profile_to_string(&b, 2);
	assert_string_equal(text, text2);

	/* The compact form (one line) carries the same data. */
	compact = ga_profile_to_string(&a, 0);
	assert_true(strchr(compact, '\n') == compact + strlen(compact) - 1);
	load_ok(&c, compact);
	compare_profiles(&a, &c);

	free(text);
	free(text2);
	free(compact);
	ga_profile_free(&a);
	ga_profile_free(&b);
	ga_profile_free(&c);
}

/* A loop's range: duration and elapsed-normalised values back to the
 * kernel's own share of it (graphics engine active / elapsed cycles);
 * other values untouched. */
static void test_range_correct(void **state)
{
	const char *names[] = {
		"gpu__time_duration.sum",                              /* 0 */
		"gr__cycles_active.max",                               /* 1 */
		"gr__cycles_elapsed.max",                              /* 2 */
		"dram__throughput.avg.pct_of_peak_sustained_elapsed",  /* 3 */
		"lts__t_sectors.avg.pct_of_peak_sustained_elapsed",    /* 4: capped */
		"smsp__issue_active.avg.pct_of_peak_sustained_active", /* 5: active, kept */
		"sm__cycles_elapsed.avg.per_second",                   /* 6: a clock, kept */
		"dram__bytes.sum.per_second",                          /* 7: a rate */
		"smsp__warps_launched.avg.per_cycle_elapsed",          /* 8 */
		"dram__bytes.sum",                                     /* 9: a count, kept */
		"l1tex__t_sectors.avg.pct_of_peak_sustained_elapsed",  /* 10: missing */
	};
	/* A 12 us range in which the engine was active a quarter of the time. */
	double v[] = {12000, 6000, 24000, 20, 30, 55, 1.98e9, 1e11, 0.5, 4096, NAN};
	double dur = 12000, r;

	(void)state;
	r = ga_launch_range_correct(names, 11, v, &dur, 0);
	assert_true(r == 12000);
	assert_true(dur == 3000 && v[0] == 3000);
	assert_true(v[1] == 6000 && v[2] == 24000);
	assert_true(fabs(v[3] - 80) < 1e-9);        /* 20 x 24000/6000 */
	assert_true(v[4] == 100);                   /* 120, capped */
	assert_true(v[5] == 55 && v[6] == 1.98e9 && v[9] == 4096);
	assert_true(fabs(v[7] - 4e11) < 1);
	assert_true(fabs(v[8] - 2) < 1e-12);
	assert_true(isnan(v[10]));

	/* Within 2 %: kernel replay's ranges hold the kernel only. */
	double w[] = {3050, 6000, 6100, 20, 30, 55, 1.98e9, 1e11, 0.5, 4096, NAN};
	dur = 3050;
	assert_true(isnan(ga_launch_range_correct(names, 11, w, &dur, 3570)));
	assert_true(dur == 3050 && w[0] == 3050 && w[3] == 20);

	/* No engine cycles (an older profile, a chip without them): nothing. */
	double u[] = {12000, NAN, 24000, 20, 30, 55, 1.98e9, 1e11, 0.5, 4096, NAN};
	dur = 12000;
	assert_true(isnan(ga_launch_range_correct(names, 11, u, &dur, 0)));
	assert_true(dur == 12000 && u[3] == 20);
	assert_true(isnan(ga_launch_range_correct(names, 2, v, &dur, 0)));

	/* The range markers' own engine cycles are not the kernel's: 2,000 of
	 * 6,000 active, so the kernel had 4,000 of 24,000 elapsed. */
	double x[] = {12000, 6000, 24000, 10, 30, 55, 1.98e9, 1e11, 0.5, 4096, NAN};
	dur = 12000;
	assert_true(ga_launch_range_correct(names, 11, x, &dur, 2000) == 12000);
	assert_true(dur == 2000 && x[0] == 2000);
	assert_true(fabs(x[3] - 10 * 24000.0 / 4000) < 1e-9);
	/* Markers over half the active cycles: half of them is kept. */
	double y[] = {12000, 6000, 24000, 10, 30, 55, 1.98e9, 1e11, 0.5, 4096, NAN};
	dur = 12000;
	ga_launch_range_correct(names, 11, y, &dur, 5000);
	assert_true(dur == 1500 && fabs(y[3] - 10 * 24000.0 / 3000) < 1e-9);

	/* Measured for GH100 only. */
	assert_true(ga_range_marker_cycles("GH100") > 0);
	assert_true(ga_range_marker_cycles("AD102") == 0 && ga_range_marker_cycles(NULL) == 0);
}

/* Fixed key order, NAN as null, optional strings omitted. */
static void test_output_layout(void **state)
{
	ga_profile p;
	json_t *j;
	char *s;

	(void)state;
	build_sample(&p);

	j = ga_launch_to_json(&p, &p.launches[1]);
	s = json_dumps(j, JSON_COMPACT | JSON_REAL_PRECISION(17));
	assert_string_equal(s,
		"{\"name\":\"reduce\",\"mangled\":\"reduce\",\"pid\":-5,\"index\":-1,"
		"\"grid\":[1,1,1],\"block\":[1024,1,1],\"registers\":0,"
		"\"smem_static\":0,\"smem_dynamic\":0,\"stream\":0,\"context\":0,"
		"\"duration_ns\":null,"
		"\"occupancy\":{\"theoretical_pct\":0.0,\"limit_blocks\":0,"
		"\"limit_registers\":0,\"limit_shared_mem\":0,\"limit_warps\":0},"
		"\"values\":{\"sm__throughput.avg.pct_of_peak_sustained_elapsed\":-0.0,"
		"\"dram__bytes.sum\":4.9406564584124654e-324,\"a_metric_after_b\":3.0}}");
	free(s);
	json_decref(j);

	j = ga_device_to_json(&p.device);
	s = json_dumps(j, JSON_COMPACT | JSON_REAL_PRECISION(17));
	assert_string_equal(s,
		"{\"name\":\"Synthetic GPU 80GB\",\"chip\":\"SYN100\","
		"\"compute_capability\":\"9.0\",\"sm_count\":132,\"sm_clock_mhz\":1980.5,"
		"\"mem_clock_mhz\":2619.0,\"bus_width_bits\":5120,"
		"\"mem_bandwidth_gbs\":3352.3200000000002,\"l2_bytes\":52428800,"
		"\"max_threads_per_sm\":2048,\"max_blocks_per_sm\":32,\"regs_per_sm\":65536,"
		"\"smem_per_sm\":233472,\"smem_per_block_optin\":232448,\"warp_size\":32,"
		"\"driver_version\":13000,\"cupti_version\":26}");
	free(s);
	json_decref(j);

	/* Top-level order and the collection object (host omitted). */
	s = ga_profile_to_string(&p, 0);
	assert_true(strncmp(s,
		"{\"format\":\"gpuadvise-profile\",\"schema\":1,\"device\":{", 51) == 0);
	assert_non_null(strstr(s,
		"\"collection\":{\"tool_version\":\"0.1.0\",\"date\":\"2025-01-02T03:04:05Z\","
		"\"mode\":\"synthetic\","
		"\"command\":\"./app --size 1024 \\\"quoted\\\" \\\\ back\\tslash\","
		"\"passes\":7,\"quick\":true,\"min_share_pct\":2.5,\"profiler_measure_seconds\":3.5,"
		"\"loop_replay_launches\":48,\"graph_launches\":5,\"wall_seconds\":12.25,\"app_status\":3,"
		"\"app_signal\":9,\"app_peak_rss_kb\":0,"
		"\"incomplete\":true,\"note\":\"stopped early (synthetic)\"},"
		"\"metrics\":[\"sm__throughput.avg.pct_of_peak_sustained_elapsed\","
		"\"dram__bytes.sum\",\"a_metric_after_b\"],\"launches\":[{\"name\":"));
	/* below_min_share only where true. */
	assert_non_null(strstr(s,
		"\"unprofiled\":[{\"mangled\":\"reduce\",\"pid\":7,\"grid\":[1,1,1],"
		"\"block\":[1024,1,1],\"launches\":99,\"below_min_share\":true},"
		"{\"mangled\":\"_Z5saxpyIfEviT_PKS0_PS0_\",\"pid\":4242,\"grid\":[4096,2,1],"
		"\"block\":[256,1,4],\"launches\":3}]"));
	assert_non_null(strstr(s, "\"a_metric_after_b\":null}"));
	assert_non_null(strstr(s, "\"limiter\":\"shared_memory\"}"));
	assert_null(strstr(s, "\"host\""));
	free(s);
	ga_profile_free(&p);
}

/* Values JSON cannot hold: infinities become null (NAN when read back);
 * non-finite device figures read back as the default 0. */
static void test_non_finite(void **state)
{
	ga_profile a, b;
	ga_launch *l;
	char *s;

	(void)state;
	ga_profile_init(&a);
	a.device.name = ga_xstrdup("Synthetic");
	a.device.sm_count = 1;
	a.device.sm_clock_mhz = INFINITY;
	a.collection.wall_seconds = NAN;
	ga_profile_add_metric(&a, "m");
	l = ga_profile_add_launch(&a);
	l->name = ga_xstrdup("k");
	l->values[0] = -INFINITY;
	s = ga_profile_to_string(&a, 1);
	load_ok(&b, s);
	assert_true(b.device.sm_clock_mhz == 0);
	assert_true(b.collection.wall_seconds == 0);
	assert_true(isnan(b.launches[0].values[0]));
	free(s);
	ga_profile_free(&a);
	ga_profile_free(&b);
}

/* Strings that are not UTF-8 (a command line in Latin-1, say) still make a
 * valid document: bad bytes become U+FFFD. */
static void test_invalid_utf8(void **state)
{
	ga_profile a, b;
	ga_launch *l;
	char *s;

	(void)state;
	ga_profile_init(&a);
	a.device.name = ga_xstrdup("Synthetic");
	a.device.sm_count = 1;
	a.collection.command = ga_xstrdup("./app caf\xe9 \xc3\xa9");
	ga_profile_add_metric(&a, "bad\xff" "metric");
	l = ga_profile_add_launch(&a);
	l->name = ga_xstrdup("k");
	l->values[0] = 2;
	s = ga_profile_to_string(&a, 0);
	load_ok(&b, s);
	assert_string_equal(b.collection.command, "./app caf\xef\xbf\xbd \xc3\xa9");
	assert_string_equal(b.metrics[0], "bad\xef\xbf\xbd" "metric");
	assert_true(b.launches[0].values[0] == 2);
	free(s);
	ga_profile_free(&a);
	ga_profile_free(&b);
}

/* ------------------------------------------------------------------------ */
/* Loading                                                                  */

static void test_minimal_defaults(void **state)
{
	ga_profile p;
	const ga_launch *l;

	(void)state;
	load_ok(&p, HEAD "\"metrics\": [\"m\"], \"launches\": ["
	            "{\"name\": \"k\", \"grid\": [1, 2, 3], \"block\": [4, 5, 6], \"values\": {}}]}");
	assert_int_equal(p.schema, 1);
	assert_string_equal(p.device.name, "Synthetic GPU");
	assert_int_equal(p.device.sm_count, 4);
	assert_null(p.device.chip);
	assert_int_equal(p.device.cc_major, 0);
	assert_true(p.device.sm_clock_mhz == 0);
	assert_null(p.collection.mode);
	assert_int_equal(p.collection.app_status, -1);
	assert_int_equal(p.collection.incomplete, 0);
	assert_int_equal(p.n_metrics, 1);
	assert_int_equal(p.n_launches, 1);
	l = &p.launches[0];
	assert_string_equal(l->name, "k");
	assert_string_equal(l->mangled, "k"); /* defaults to the name */
	assert_int_equal(l->grid[2], 3);
	assert_int_equal(l->block[0], 4);
	assert_true(isnan(l->duration_ns));
	assert_true(l->occ_theoretical_pct == 0);
	assert_null(l->occ_limiter);
	assert_true(isnan(l->values[0]));
	ga_profile_free(&p);

	/* Optional fields may be null; the collection object may be null. */
	load_ok(&p, HEAD "\"collection\": null, \"metrics\": [], \"launches\": ["
	            "{\"name\": \"k\", \"mangled\": null, \"duration_ns\": null, \"occupancy\": null,"
	            " \"grid\": [1, 1, 1], \"block\": [1, 1, 1], \"values\": {}}]}");
	assert_string_equal(p.launches[0].mangled, "k");
	assert_int_equal(p.collection.app_status, -1);
	ga_profile_free(&p);

	/* Integers are accepted where numbers are expected. */
	load_ok(&p, "{\"format\": \"gpuadvise-profile\", \"schema\": 1, "
	            "\"device\": {\"name\": \"S\", \"sm_count\": 2, \"sm_clock_mhz\": 1500,"
	            " \"compute_capability\": \"12.1\"}, "
	            "\"collection\": {\"app_status\": 0, \"incomplete\": false},"
	            "\"metrics\": [\"m\"], \"launches\": []}");
	assert_true(p.device.sm_clock_mhz == 1500.0);
	assert_int_equal(p.device.cc_major, 12);
	assert_int_equal(p.device.cc_minor, 1);
	assert_int_equal(p.collection.app_status, 0);
	assert_int_equal(p.n_launches, 0);
	ga_profile_free(&p);
}

static void test_unknown_keys_ignored(void **state)
{
	ga_profile p;

	(void)state;
	load_ok(&p, "{\"format\": \"gpuadvise-profile\", \"schema\": 1, \"future\": {\"x\": [1]},"
	            "\"device\": {\"name\": \"S\", \"sm_count\": 2, \"hbm_stacks\": 5},"
	            "\"collection\": {\"mode\": \"synthetic\", \"new_thing\": true},"
	            "\"metrics\": [\"m\"], \"launches\": [{\"name\": \"k\", \"cluster\": [2, 1, 1],"
	            " \"grid\": [1, 1, 1], \"block\": [32, 1, 1],"
	            " \"occupancy\": {\"limiter\": \"warps\", \"limit_clusters\": 3},"
	            " \"values\": {\"m\": 7}}]}");
	assert_string_equal(p.collection.mode, "synthetic");
	assert_string_equal(p.launches[0].occ_limiter, "warps");
	assert_true(p.launches[0].values[0] == 7);
	ga_profile_free(&p);
}

/* A launch's NVTX path, and that of unprofiled launches, survive a round
 * trip; a launch without one has none; a path that is no string is an
 * error naming the field. */
static void test_nvtx_path(void **state)
{
	const char *text =
		"{\"format\": \"gpuadvise-profile\", \"schema\": 1, \"device\": {\"name\": \"S\", \"sm_count\": 2},"
		"\"metrics\": [], \"launches\": ["
		"{\"name\": \"k\", \"grid\": [1, 1, 1], \"block\": [32, 1, 1], \"values\": {},"
		" \"nvtx\": \"train_step/aten::linear/aten::addmm\"},"
		"{\"name\": \"k\", \"grid\": [1, 1, 1], \"block\": [32, 1, 1], \"values\": {}}],"
		"\"unprofiled\": [{\"mangled\": \"k\", \"grid\": [1, 1, 1], \"block\": [32, 1, 1],"
		" \"launches\": 4, \"nvtx\": \"train_step/aten::gelu\"}]}";
	ga_profile p, q;
	char *s;

	(void)state;
	load_ok(&p, text);
	assert_string_equal(p.launches[0].nvtx, "train_step/aten::linear/aten::addmm");
	assert_null(p.launches[1].nvtx);
	assert_string_equal(p.unprofiled[0].nvtx, "train_step/aten::gelu");
	s = ga_profile_to_string(&p, 0);
	load_ok(&q, s);
	assert_string_equal(q.launches[0].nvtx, "train_step/aten::linear/aten::addmm");
	assert_null(q.launches[1].nvtx);
	assert_string_equal(q.unprofiled[0].nvtx, "train_step/aten::gelu");
	free(s);
	ga_profile_free(&p);
	ga_profile_free(&q);
	expect_error("{\"format\": \"gpuadvise-profile\", \"schema\": 1, \"device\": {\"name\": \"S\", \"sm_count\": 2},"
	             "\"metrics\": [], \"launches\": [{\"name\": \"k\", \"grid\": [1, 1, 1],"
	             " \"block\": [1, 1, 1], \"values\": {}, \"nvtx\": 3}]}",
	             GA_ERR_PROFILE, "t.json: launches[0].nvtx: expected a string");
}

/* A value for a metric not in "metrics" adds it, in order of appearance. */
static void test_value_adds_metric(void **state)
{
	ga_profile p;

	(void)state;
	load_ok(&p, HEAD "\"metrics\": [\"a\", \"c\", \"a\"], \"launches\": ["
	            "{\"name\": \"k0\", \"grid\": [1, 1, 1], \"block\": [1, 1, 1],"
	            " \"values\": {\"a\": 1, \"c\": null}},"
	            "{\"name\": \"k1\", \"grid\": [1, 1, 1], \"block\": [1, 1, 1],"
	            " \"values\": {\"z\": 2.5, \"a\": 3, \"b\": -4}}]}");
	/* The repeated "a" is kept once. */
	assert_int_equal(p.n_metrics, 4);
	assert_string_equal(p.metrics[0], "a");
	assert_string_equal(p.metrics[1], "c");
	assert_string_equal(p.metrics[2], "z");
	assert_string_equal(p.metrics[3], "b");
	assert_true(p.launches[0].values[0] == 1);
	assert_true(isnan(p.launches[0].values[1]));
	assert_true(isnan(p.launches[0].values[2]));
	assert_true(isnan(p.launches[0].values[3]));
	assert_true(p.launches[1].values[0] == 3);
	assert_true(isnan(p.launches[1].values[1]));
	assert_true(p.launches[1].values[2] == 2.5);
	assert_true(p.launches[1].values[3] == -4);
	assert_int_equal(ga_profile_metric_index(&p, "b"), 3);
	ga_profile_free(&p);
}

static void test_syntax_errors(void **state)
{
	(void)state;
	expect_error("{\n  \"format\": \"gpuadvise-profile\",\n  \"schema\" 1\n}",
	             GA_ERR_PROFILE, "t.json:3:12: invalid JSON: ':' expected near '1'");
	expect_error(HEAD "\n \"metrics\": [],\n \"launches\": [}\n",
	             GA_ERR_PROFILE, "t.json:3:15: invalid JSON: unexpected token near '}'");
	expect_error("", GA_ERR_PROFILE,
	             "t.json:1:0: invalid JSON: '[' or '{' expected near end of file");
	expect_error("{\"format\": \"a\", \"format\": \"b\"}", GA_ERR_PROFILE,
	             "t.json:1:24: invalid JSON: duplicate object key near '\"format\"'");
	expect_error("{} {}", GA_ERR_PROFILE,
	             "t.json:1:4: invalid JSON: end of file expected near '{'");
}

static void test_not_a_profile(void **state)
{
	(void)state;
	expect_error("{\"format\": \"x\", \"schema\": 1}", GA_ERR_PROFILE,
	             "t.json: not a gpuadvise profile (format is 'x')");
	expect_error("{\"schema\": 1}", GA_ERR_PROFILE,
	             "t.json: not a gpuadvise profile (no \"format\" key)");
	expect_error("{\"format\": 1}", GA_ERR_PROFILE,
	             "t.json: not a gpuadvise profile (format is not a string)");
	expect_error("[{\"format\": \"gpuadvise-profile\"}]", GA_ERR_PROFILE,
	             "t.json: not a gpuadvise profile (the top level is not an object)");
}

static void test_schema_versions(void **state)
{
	(void)state;
	expect_error("{\"format\": \"gpuadvise-profile\", \"schema\": 2}", GA_ERR_PROFILE,
	             "t.json: profile schema 2 is newer than this gpuadvise supports (1)");
	expect_error("{\"format\": \"gpuadvise-profile\", \"schema\": 1000}", GA_ERR_PROFILE,
	             "t.json: profile schema 1000 is newer than this gpuadvise supports (1)");
	expect_error("{\"format\": \"gpuadvise-profile\"}", GA_ERR_PROFILE,
	             "t.json: schema: missing");
	expect_error("{\"format\": \"gpuadvise-profile\", \"schema\": \"1\"}", GA_ERR_PROFILE,
	             "t.json: schema: expected a positive integer");
	expect_error("{\"format\": \"gpuadvise-profile\", \"schema\": 1.0}", GA_ERR_PROFILE,
	             "t.json: schema: expected a positive integer");
	expect_error("{\"format\": \"gpuadvise-profile\", \"schema\": 0}", GA_ERR_PROFILE,
	             "t.json: schema: expected a positive integer");
}

#define GOOD_LAUNCH "{\"name\": \"k\", \"grid\": [1, 1, 1], \"block\": [1, 1, 1], \"values\": {}}"
#define PRE  "{\"format\": \"gpuadvise-profile\", \"schema\": 1, "
#define LAUNCHES(x) HEAD "\"metrics\": [], \"launches\": [" GOOD_LAUNCH ", " \
                    GOOD_LAUNCH ", " GOOD_LAUNCH ", " x "]}"

static void test_field_errors(void **state)
{
	static const struct {
		const char *text, *msg;
	} cases[] = {
		/* device */
		{PRE "\"metrics\": [], \"launches\": []}", "t.json: device: missing"},
		{PRE "\"device\": [], \"metrics\": [], \"launches\": []}",
		 "t.json: device: expected an object"},
		{PRE "\"device\": {\"sm_count\": 1}, \"metrics\": [], \"launches\": []}",
		 "t.json: device.name: missing"},
		{PRE "\"device\": {\"name\": 5, \"sm_count\": 1}, \"metrics\": [], \"launches\": []}",
		 "t.json: device.name: expected a string"},
		{PRE "\"device\": {\"name\": \"S\"}, \"metrics\": [], \"launches\": []}",
		 "t.json: device.sm_count: missing"},
		{PRE "\"device\": {\"name\": \"S\", \"sm_count\": null}, \"metrics\": [], \"launches\": []}",
		 "t.json: device.sm_count: missing"},
		{PRE "\"device\": {\"name\": \"S\", \"sm_count\": \"4\"}, \"metrics\": [], \"launches\": []}",
		 "t.json: device.sm_count: expected an integer"},
		/* no SM: only a profile with no launch (--timeline-only) */
		{PRE "\"device\": {\"name\": \"S\", \"sm_count\": 0}, \"metrics\": [], \"launches\": ["
		     GOOD_LAUNCH "]}",
		 "t.json: device.sm_count: 0 is out of range (1 to 2147483647): launches were "
		 "measured on this device"},
		{PRE "\"device\": {\"name\": \"S\", \"sm_count\": -1}, \"metrics\": [], \"launches\": []}",
		 "t.json: device.sm_count: -1 is out of range (0 to 2147483647)"},
		{PRE "\"device\": {\"name\": \"S\", \"sm_count\": 4, \"warp_size\": 4294967296},"
		     " \"metrics\": [], \"launches\": []}",
		 "t.json: device.warp_size: 4294967296 is out of range (0 to 2147483647)"},
		{PRE "\"device\": {\"name\": \"S\", \"sm_count\": 4, \"sm_clock_mhz\": \"fast\"},"
		     " \"metrics\": [], \"launches\": []}",
		 "t.json: device.sm_clock_mhz: expected a number"},
		{PRE "\"device\": {\"name\": \"S\", \"sm_count\": 4, \"compute_capability\": 9.0},"
		     " \"metrics\": [], \"launches\": []}",
		 "t.json: device.compute_capability: expected a string \"MAJOR.MINOR\" such as \"9.0\""},
		{PRE "\"device\": {\"name\": \"S\", \"sm_count\": 4, \"compute_capability\": \"9.0x\"},"
		     " \"metrics\": [], \"launches\": []}",
		 "t.json: device.compute_capability: expected a string \"MAJOR.MINOR\" such as \"9.0\""},
		/* collection */
		{HEAD "\"collection\": 3, \"metrics\": [], \"launches\": []}",
		 "t.json: collection: expected an object"},
		{HEAD "\"collection\": {\"incomplete\": 1}, \"metrics\": [], \"launches\": []}",
		 "t.json: collection.incomplete: expected true or false"},
		{HEAD "\"collection\": {\"command\": [\"a\"]}, \"metrics\": [], \"launches\": []}",
		 "t.json: collection.command: expected a string"},
		{HEAD "\"collection\": {\"app_status\": 1.5}, \"metrics\": [], \"launches\": []}",
		 "t.json: collection.app_status: expected an integer"},
		/* metrics */
		{HEAD "\"launches\": []}", "t.json: metrics: missing"},
		{HEAD "\"metrics\": {}, \"launches\": []}", "t.json: metrics: expected an array of strings"},
		{HEAD "\"metrics\": [\"a\", 2], \"launches\": []}", "t.json: metrics[1]: expected a string"},
		/* launches */
		{HEAD "\"metrics\": []}", "t.json: launches: missing"},
		{HEAD "\"metrics\": [], \"launches\": {}}", "t.json: launches: expected an array"},
		{LAUNCHES("7"), "t.json: launches[3]: expected an object"},
		{LAUNCHES("{\"grid\": [1, 1, 1], \"block\": [1, 1, 1], \"values\": {}}"),
		 "t.json: launches[3].name: missing"},
		{LAUNCHES("{\"name\": \"k\", \"block\": [1, 1, 1], \"values\": {}}"),
		 "t.json: launches[3].grid: missing"},
		{LAUNCHES("{\"name\": \"k\", \"grid\": [1, 1], \"block\": [1, 1, 1], \"values\": {}}"),
		 "t.json: launches[3].grid: expected an array of 3 integers"},
		{LAUNCHES("{\"name\": \"k\", \"grid\": [1, 1, 1, 1], \"block\": [1, 1, 1], \"values\": {}}"),
		 "t.json: launches[3].grid: expected an array of 3 integers"},
		{LAUNCHES("{\"name\": \"k\", \"grid\": \"1x1x1\", \"block\": [1, 1, 1], \"values\": {}}"),
		 "t.json: launches[3].grid: expected an array of 3 integers"},
		{LAUNCHES("{\"name\": \"k\", \"grid\": [1, 1, 1], \"block\": [1, 1.5, 1], \"values\": {}}"),
		 "t.json: launches[3].block: expected an array of 3 integers"},
		{LAUNCHES("{\"name\": \"k\", \"grid\": [1, -1, 1], \"block\": [1, 1, 1], \"values\": {}}"),
		 "t.json: launches[3].grid: element 1: -1 is out of range (0 to 4294967295)"},
		{LAUNCHES("{\"name\": \"k\", \"grid\": [1, 1, 4294967296], \"block\": [1, 1, 1], \"values\": {}}"),
		 "t.json: launches[3].grid: element 2: 4294967296 is out of range (0 to 4294967295)"},
		{LAUNCHES("{\"name\": \"k\", \"grid\": [1, 1, 1], \"block\": [1, 1, 1]}"),
		 "t.json: launches[3].values: missing"},
		{LAUNCHES("{\"name\": \"k\", \"grid\": [1, 1, 1], \"block\": [1, 1, 1], \"values\": [1]}"),
		 "t.json: launches[3].values: expected an object"},
		{LAUNCHES("{\"name\": \"k\", \"grid\": [1, 1, 1], \"block\": [1, 1, 1],"
		          " \"values\": {\"ok\": 1, \"dram__bytes.sum\": \"12\"}}"),
		 "t.json: launches[3].values[\"dram__bytes.sum\"]: expected a number or null"},
		{LAUNCHES("{\"name\": \"k\", \"grid\": [1, 1, 1], \"block\": [1, 1, 1],"
		          " \"duration_ns\": \"1ms\", \"values\": {}}"),
		 "t.json: launches[3].duration_ns: expected a number"},
		{LAUNCHES("{\"name\": \"k\", \"grid\": [1, 1, 1], \"block\": [1, 1, 1],"
		          " \"duration_ns\": -1, \"values\": {}}"),
		 "t.json: launches[3].duration_ns: -1 is negative; expected a number >= 0"},
		{LAUNCHES("{\"name\": \"k\", \"grid\": [1, 1, 1], \"block\": [1, 1, 1],"
		          " \"values\": {\"dram__bytes.sum\": -5}}"),
		 "t.json: launches[3].values[\"dram__bytes.sum\"]: -5 is negative; a count is >= 0"},
		{LAUNCHES("{\"name\": \"k\", \"grid\": [1, 1, 1], \"block\": [1, 1, 1],"
		          " \"occupancy\": {\"theoretical_pct\": -3}, \"values\": {}}"),
		 "t.json: launches[3].occupancy.theoretical_pct: -3 is negative; expected a number >= 0"},
		{LAUNCHES("{\"name\": \"k\", \"grid\": [1, 1, 1], \"block\": [1, 1, 1],"
		          " \"registers\": -1, \"values\": {}}"),
		 "t.json: launches[3].registers: -1 is out of range (0 to 2147483647)"},
		{LAUNCHES("{\"name\": \"k\", \"grid\": [1, 1, 1], \"block\": [1, 1, 1],"
		          " \"stream\": -2, \"values\": {}}"),
		 "t.json: launches[3].stream: -2 is out of range (0 to 9223372036854775807)"},
		{LAUNCHES("{\"name\": \"k\", \"grid\": [1, 1, 1], \"block\": [1, 1, 1],"
		          " \"occupancy\": 50, \"values\": {}}"),
		 "t.json: launches[3].occupancy: expected an object"},
		{LAUNCHES("{\"name\": \"k\", \"grid\": [1, 1, 1], \"block\": [1, 1, 1],"
		          " \"occupancy\": {\"limiter\": 1}, \"values\": {}}"),
		 "t.json: launches[3].occupancy.limiter: expected a string"},
		{LAUNCHES("{\"name\": \"k\", \"grid\": [1, 1, 1], \"block\": [1, 1, 1],"
		          " \"occupancy\": {\"theoretical_pct\": true}, \"values\": {}}"),
		 "t.json: launches[3].occupancy.theoretical_pct: expected a number"},
	};
	size_t i;

	(void)state;
	for (i = 0; i < GA_ARRAY_LEN(cases); i++)
		expect_error(cases[i].text, GA_ERR_PROFILE, cases[i].msg);
}

/* SYNTHETIC: 10,000 launches x 40 metrics, generated here. */
static void test_large_profile(void **state)
{
	enum { N_LAUNCHES = 10000, N_METRICS = 40 };
	ga_buf b = {0};
	ga_profile p;
	size_t i, m;

	(void)state;
	ga_buf_puts(&b, HEAD "\"collection\": {\"mode\": \"synthetic\"}, \"metrics\": [");
	for (m = 0; m < N_METRICS; m++)
		ga_buf_printf(&b, "%s\"synthetic__metric_%02zu.sum\"", m ? ", " : "", m);
	ga_buf_puts(&b, "], \"launches\": [\n");
	for (i = 0; i < N_LAUNCHES; i++) {
		ga_buf_printf(&b, "%s{\"name\": \"kernel_%zu\", \"index\": %zu, \"grid\": [%zu, 1, 1],"
		                  " \"block\": [256, 1, 1], \"duration_ns\": %zu, \"values\": {",
		              i ? ",\n" : "", i % 7, i, i + 1, 1000 + i);
		/* Reverse order, to make the name lookup do real work. */
		for (m = N_METRICS; m-- > 0;)
			ga_buf_printf(&b, "\"synthetic__metric_%02zu.sum\": %zu.5%s", m, i * 100 + m,
			              m ? ", " : "");
		ga_buf_puts(&b, "}}");
	}
	ga_buf_puts(&b, "]}\n");

	load_ok(&p, b.s);
	assert_int_equal(p.n_launches, N_LAUNCHES);
	assert_int_equal(p.n_metrics, N_METRICS);
	assert_string_equal(p.metrics[39], "synthetic__metric_39.sum");
	assert_string_equal(p.launches[9999].name, "kernel_3");
	assert_int_equal(p.launches[9999].index, 9999);
	assert_int_equal(p.launches[9999].grid[0], 10000);
	assert_true(p.launches[9999].duration_ns == 10999);
	assert_true(p.launches[0].values[0] == 0.5);
	assert_true(p.launches[1234].values[17] == 123417.5);
	assert_true(p.launches[9999].values[39] == 999939.5);
	ga_profile_free(&p);
	ga_buf_free(&b);
}

/* The live collector's path: one launch object per record. */
static void test_launch_records(void **state)
{
	ga_profile src, dst;
	ga_error err = {0};
	json_error_t jerr;
	json_t *j;
	size_t i;

	(void)state;
	build_sample(&src);
	ga_profile_init(&dst);
	/* dst knows the metrics in another order, plus one src lacks. */
	ga_profile_add_metric(&dst, "extra");
	ga_profile_add_metric(&dst, "dram__bytes.sum");
	for (i = 0; i < src.n_launches; i++) {
		char where[32];
		j = ga_launch_to_json(&src, &src.launches[i]);
		snprintf(where, sizeof(where), "record %zu", i);
		assert_int_equal(ga_launch_from_json(&dst, j, where, &err), 0);
		json_decref(j);
	}
	assert_int_equal(dst.n_launches, 2);
	assert_int_equal(dst.n_metrics, 4);
	assert_string_equal(dst.metrics[2], "sm__throughput.avg.pct_of_peak_sustained_elapsed");
	assert_string_equal(dst.metrics[3], "a_metric_after_b");
	assert_string_equal(dst.launches[0].mangled, "_Z5saxpyIfEviT_PKS0_PS0_");
	assert_int_equal(dst.launches[0].stream, 13);
	assert_string_equal(dst.launches[0].occ_limiter, "shared_memory");
	assert_same_double(dst.launches[0].duration_ns, 123456.789);
	assert_true(isnan(dst.launches[0].values[0]));
	assert_true(dst.launches[0].values[1] == 1.0e300);
	assert_true(dst.launches[0].values[2] == 0.1);
	assert_true(isnan(dst.launches[0].values[3]));
	assert_true(dst.launches[1].values[3] == 3);
	assert_true(isnan(dst.launches[1].duration_ns));

	/* A bad record names the field after `where`, and leaves dst unchanged
	 * even though its values name a new metric. */
	j = json_loads("{\"name\": \"k\", \"grid\": [1, 1], \"block\": [1, 1, 1],"
	               " \"values\": {\"new_metric\": 1}}", 0, &jerr);
	assert_non_null(j);
	assert_int_equal(ga_launch_from_json(&dst, j, "record 12", &err), -1);
	assert_int_equal(err.code, GA_ERR_PROFILE);
	assert_string_equal(err.msg, "record 12: grid: expected an array of 3 integers");
	json_decref(j);
	j = json_loads("{\"name\": \"k\", \"grid\": [1, 1, 1], \"block\": [1, 1, 1],"
	               " \"values\": {\"new_metric\": 1, \"m\": {}}}", 0, &jerr);
	assert_int_equal(ga_launch_from_json(&dst, j, "record 13", &err), -1);
	assert_string_equal(err.msg, "record 13: values[\"m\"]: expected a number or null");
	json_decref(j);
	j = json_loads("[1]", 0, &jerr);
	assert_int_equal(ga_launch_from_json(&dst, j, "record 14", &err), -1);
	assert_string_equal(err.msg, "record 14: expected an object");
	json_decref(j);
	assert_int_equal(dst.n_launches, 2);
	assert_int_equal(dst.n_metrics, 4);

	ga_profile_free(&src);
	ga_profile_free(&dst);
}

static void test_device_records(void **state)
{
	ga_profile src;
	ga_device d;
	ga_error err = {0};
	json_error_t jerr;
	json_t *j;

	(void)state;
	build_sample(&src);
	memset(&d, 0, sizeof(d));
	j = ga_device_to_json(&src.device);
	assert_int_equal(ga_device_from_json(&d, j, "device record", &err), 0);
	json_decref(j);
	assert_string_equal(d.name, "Synthetic GPU 80GB");
	assert_string_equal(d.chip, "SYN100");
	assert_int_equal(d.cc_major, 9);
	assert_int_equal(d.sm_count, 132);
	assert_same_double(d.mem_bandwidth_gbs, 3352.32);
	assert_int_equal(d.smem_per_block_optin, 232448);
	assert_int_equal(d.cupti_version, 26);

	/* Failure leaves the device as it was. */
	j = json_loads("{\"name\": \"Other\"}", 0, &jerr);
	assert_int_equal(ga_device_from_json(&d, j, "device record", &err), -1);
	assert_int_equal(err.code, GA_ERR_PROFILE);
	assert_string_equal(err.msg, "device record: sm_count: missing");
	assert_string_equal(d.name, "Synthetic GPU 80GB");
	json_decref(j);

	/* Success replaces it (the old strings are freed: see valgrind). */
	j = json_loads("{\"name\": \"Other\", \"sm_count\": 2}", 0, &jerr);
	assert_int_equal(ga_device_from_json(&d, j, "device record", &err), 0);
	assert_string_equal(d.name, "Other");
	assert_null(d.chip);
	assert_int_equal(d.sm_count, 2);
	assert_int_equal(d.cc_major, 0);
	json_decref(j);

	ga_device_free(&d);
	ga_profile_free(&src);
}

static void test_load_file(void **state)
{
	char path[] = "/tmp/ga_test_profile_XXXXXX";
	ga_profile a, b;
	ga_error err = {0};
	char *text, *msg;
	FILE *f;
	int fd;

	(void)state;
	build_sample(&a);
	text = ga_profile_to_string(&a, 2);
	fd = mkstemp(path);
	assert_true(fd >= 0);
	f = fdopen(fd, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);

	assert_int_equal(ga_profile_load(&b, path, &err), 0);
	assert_string_equal(b.source_path, path);
	compare_profiles(&a, &b);
	ga_profile_free(&b);

	/* Syntax errors carry the path. */
	f = fopen(path, "w");
	fputs("{\n\"format\": \"gpuadvise-profile\",,\n}\n", f);
	fclose(f);
	assert_int_equal(ga_profile_load(&b, path, &err), -1);
	assert_int_equal(err.code, GA_ERR_PROFILE);
	msg = ga_xasprintf("%s:2:31: invalid JSON: string or '}' expected near ','", path);
	assert_string_equal(err.msg, msg);
	assert_null(b.source_path);
	free(msg);
	ga_profile_free(&b);

	unlink(path);
	assert_int_equal(ga_profile_load(&b, path, &err), -1);
	assert_int_equal(err.code, GA_ERR_NOT_FOUND);
	msg = ga_xasprintf("cannot open %s: No such file or directory", path);
	assert_string_equal(err.msg, msg);
	free(msg);
	ga_profile_free(&b);

	/* A directory cannot be read as a file. */
	assert_int_equal(ga_profile_load(&b, "/", &err), -1);
	assert_int_equal(err.code, GA_ERR_IO);
	ga_profile_free(&b);

	free(text);
	ga_profile_free(&a);
}

/* ------------------------------------------------------------------------ */
/* The fast JSON reader: the same tree as jansson, key order included, or   */
/* NULL (then jansson parses and reports).                                  */

/* jansson's serialisation keeps key order and number types (1 vs 1.0). */
static char *dump(json_t *j)
{
	return json_dumps(j, JSON_COMPACT | JSON_ENCODE_ANY | JSON_REAL_PRECISION(17));
}

static void test_fast_reader(void **state)
{
	static const char *same[] = {
		"{}",
		" \n\t{\"a\" : 1 , \"b\":[ ],\"c\":{ } } \r\n",
		"{\"z\":1,\"a\":2,\"m\":3}",
		"{\"i\":-0,\"r\":-0.0,\"e\":1e3,\"E\":2E-2,\"f\":0.5,\"big\":123456789012345678}",
		"{\"max\":1.7976931348623157e308,\"min\":-2.2250738585072014e-308}",
		"{\"t\":true,\"f\":false,\"n\":null,\"s\":\"\",\"x\":\"kernel(float*, int)\"}",
		"{\"a\":[1,[2,[3,{\"b\":[4.25]}]],\"q\"]}",
	};
	static const char *declined[] = {
		"", "[]", "1", "\"s\"", "{", "{\"a\":1,}", "{\"a\":1}x", "{\"a\":1}{}",
		"{\"a\":1,\"a\":2}", "{\"a\":01}", "{\"a\":1.}", "{\"a\":.5}", "{\"a\":+1}",
		"{\"a\":1e}", "{\"a\":-}", "{\"a\":1e400}", "{\"a\":-1e400}",
		"{\"a\":1234567890123456789}",
		/* strtod sets ERANGE for these, jansson keeps the value: declined. */
		"{\"a\":5e-324}", "{\"a\":1e-400}", "{\"a\":\"\\n\"}", "{\"a\":\"\\u00e9\"}",
		"{\"a\":\"\xc3\xa9\"}", "{\"a\":\"\x01\"}", "{\"a\":\"x}", "{\"a\" 1}",
		"{\"a\":tru}", "{\"a\":nul}", "{\"a\":[1 2]}", "{\"a\":[1,]}", "{a:1}",
		"{\"a\":truex}", "{\"a\":1}\0",
	};
	char deep[300];
	(void)state;

	for (size_t i = 0; i < sizeof(same) / sizeof(same[0]); i++) {
		json_error_t jerr;
		json_t *ref = json_loadb(same[i], strlen(same[i]), JSON_REJECT_DUPLICATES, &jerr);
		json_t *got = ga_json_fast_load(same[i], strlen(same[i]));
		assert_non_null(ref);
		assert_non_null(got);
		char *a = dump(ref), *b = dump(got);
		assert_string_equal(a, b);
		free(a);
		free(b);
		json_decref(ref);
		json_decref(got);
	}
	for (size_t i = 0; i < sizeof(declined) / sizeof(declined[0]); i++) {
		size_t n = strlen(declined[i]) + (i + 1 == sizeof(declined) / sizeof(declined[0]));
		assert_null(ga_json_fast_load(declined[i], n));
	}
	/* Nested deeper than the fast reader goes: left to jansson. */
	memset(deep, '[', 150);
	memset(deep + 150, ']', 150);
	deep[0] = '{';
	memcpy(deep + 1, "\"a\":", 4);
	assert_null(ga_json_fast_load(deep, 150));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_init_and_model),
		cmocka_unit_test(test_merge),
		cmocka_unit_test(test_rank_env),
		cmocka_unit_test(test_processes_json),
		cmocka_unit_test(test_merge_pid_clash),
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_range_correct),
		cmocka_unit_test(test_output_layout),
		cmocka_unit_test(test_non_finite),
		cmocka_unit_test(test_invalid_utf8),
		cmocka_unit_test(test_minimal_defaults),
		cmocka_unit_test(test_unknown_keys_ignored),
		cmocka_unit_test(test_value_adds_metric),
		cmocka_unit_test(test_nvtx_path),
		cmocka_unit_test(test_syntax_errors),
		cmocka_unit_test(test_not_a_profile),
		cmocka_unit_test(test_schema_versions),
		cmocka_unit_test(test_field_errors),
		cmocka_unit_test(test_large_profile),
		cmocka_unit_test(test_launch_records),
		cmocka_unit_test(test_device_records),
		cmocka_unit_test(test_load_file),
		cmocka_unit_test(test_fast_reader),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
