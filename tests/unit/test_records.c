/* test_records.c: the launcher's reader of the injection library's records
 * (collect/records.c), fed the canned run directory
 * tests/fixtures/records/run (a process that ended normally, with a record
 * of each type, and a child killed in the middle of a write), and a round
 * trip through the record writer (collect/writer.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "collect/protocol.h"
#include "collect/records.h"
#include "collect/writer.h"

#define RUN GA_TEST_FIXTURES "/records/run"

static const char *const strided = "_Z18coalescing_stridedPKfPfjj";
static const char *const contiguous = "_Z21coalescing_contiguousPKfPfj";

static size_t launches_of(const ga_profile *p, const char *mangled, int pid)
{
	size_t n = 0;
	for (size_t i = 0; i < p->n_launches; i++)
		n += strcmp(p->launches[i].mangled, mangled) == 0 && p->launches[i].pid == pid;
	return n;
}

static const ga_unprofiled *unprofiled_of(const ga_profile *p, const char *mangled)
{
	for (size_t i = 0; i < p->n_unprofiled; i++)
		if (strcmp(p->unprofiled[i].mangled, mangled) == 0)
			return &p->unprofiled[i];
	return NULL;
}

static void test_names(void **state)
{
	(void)state;
	assert_int_equal(ga_record_type_of("start"), GA_REC_START);
	assert_int_equal(ga_record_type_of("device"), GA_REC_DEVICE);
	assert_int_equal(ga_record_type_of("launch"), GA_REC_LAUNCH);
	assert_int_equal(ga_record_type_of("error"), GA_REC_ERROR);
	assert_int_equal(ga_record_type_of("source"), GA_REC_SOURCE);
	assert_int_equal(ga_record_type_of("unprofiled"), GA_REC_UNPROFILED);
	assert_int_equal(ga_record_type_of("end"), GA_REC_END);
	assert_int_equal(ga_record_type_of("gpu"), GA_REC_GPU);
	assert_int_equal(ga_record_type_of("Launch"), GA_REC_NONE);
	assert_int_equal(ga_record_type_of(""), GA_REC_NONE);
	assert_int_equal(ga_record_type_of(NULL), GA_REC_NONE);
	for (int t = 0; t < GA_REC_N; t++)
		assert_int_equal(ga_record_type_of(ga_record_names[t]), t);
}

/* The whole run: both processes' launches, the first device, the source
 * record, the unprofiled launches, the notes. */
static void test_run_dir(void **state)
{
	ga_profile p;
	ga_records g = {0};
	ga_buf note = {0};
	ga_error err = {0};
	(void)state;

	ga_profile_init(&p);
	ga_records_read_dir(RUN, &p, &g);

	assert_int_equal(g.n_processes, 2);
	assert_int_equal(g.n_ended, 1);
	/* the child's last launch was cut short */
	assert_int_equal(p.n_launches, 4);
	assert_int_equal(launches_of(&p, strided, 4242), 2);
	assert_int_equal(launches_of(&p, contiguous, 4242), 1);
	assert_int_equal(launches_of(&p, contiguous, 4250), 1);
	assert_int_equal(g.truncated_lines, 1);

	assert_true(g.have_device);
	assert_string_equal(p.device.name, "NVIDIA H200");
	assert_int_equal(p.device.sm_count, 132);
	assert_int_equal(p.collection.passes, 2);
	assert_int_equal(p.collection.metric_sets, 2);
	assert_true(ga_profile_metric_index(&p, "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum") >= 0);
	assert_true(ga_profile_metric_index(&p, "bogus__metric.sum") < 0);

	/* only the process that ended says how long it spent */
	assert_true(fabs(p.collection.profiler_setup_seconds - 0.25) < 1e-9);
	assert_true(fabs(p.collection.profiler_measure_seconds - 0.5) < 1e-9);
	assert_int_equal(p.collection.loop_replay_launches, 0);

	assert_int_equal(p.n_sources, 1);
	assert_string_equal(p.sources[0].mangled, strided);
	assert_int_equal(p.sources[0].pid, 4242);
	assert_string_equal(p.sources[0].trigger, "rule uncoalesced-global-access");
	assert_int_equal(p.sources[0].n_pcs, 2);

	assert_int_equal(p.n_unprofiled, 2);
	assert_non_null(unprofiled_of(&p, strided));
	assert_int_equal(unprofiled_of(&p, strided)->launches, 1);
	assert_false(unprofiled_of(&p, strided)->below_min_share);
	assert_int_equal(unprofiled_of(&p, contiguous)->launches, 2);
	assert_true(unprofiled_of(&p, contiguous)->below_min_share);

	/* who each process was: rank, host, GPU (one record per GPU kept) */
	assert_int_equal(p.n_procs, 2);
	const ga_proc_info *r0 = ga_profile_proc(&p, 4242), *r1 = ga_profile_proc(&p, 4250);
	assert_non_null(r0);
	assert_non_null(r1);
	assert_int_equal(r0->rank, 0);
	assert_int_equal(r0->local_rank, 0);
	assert_int_equal(r0->world_size, 2);
	assert_string_equal(r0->rank_from, "RANK");
	assert_string_equal(r0->host, "node7");
	assert_int_equal(r0->n_gpus, 1);
	assert_int_equal(r0->gpus[0].index, 0);
	assert_string_equal(r0->gpus[0].uuid, "GPU-5e0d4a2b-1c3f-7a88-9b21-0f6e2d3c4b5a");
	assert_int_equal(r1->rank, 1);
	assert_int_equal(r1->local_rank, -1);
	assert_string_equal(r1->rank_from, "OMPI_COMM_WORLD_RANK");
	assert_int_equal(r1->n_gpus, 1);
	assert_int_equal(r1->gpus[0].index, 1);
	assert_null(r1->gpus[0].uuid);

	assert_int_equal(g.cupti_errors, 1);
	assert_int_equal(g.source_notes, 1);
	assert_int_equal(g.n_bad, 1);
	assert_string_equal(g.bad_metrics[0], "bogus__metric.sum");
	assert_int_equal(g.permission + g.another_profiler + g.unsupported + g.busy +
	                 g.counters_busy, 0);

	ga_records_note_run(&g, &note);
	ga_records_note_data(&g, &note);
	assert_string_equal(note.s,
		"1 of 2 processes ended without the normal exit path (crash, signal or _exit). "
		"1 CUPTI error(s) while profiling, the first: 1 range(s) dropped for "
		"coalescing_contiguous. "
		"source lines: _Z18coalescing_stridedPKfPfjj: its cubin was not captured at module "
		"load, so only SASS offsets are shown. "
		"1 record(s) were cut short and skipped. "
		"metrics unknown to this GPU, not collected: bogus__metric.sum. ");
	/* launches were profiled: a CUPTI error is a note, not a failure */
	assert_int_equal(ga_records_failure(&g, &p, &err), 0);

	ga_buf_free(&note);
	ga_records_free(&g);
	ga_profile_free(&p);
}

/* The stall run's records give only source lines and notes. */
static void test_stall_pass(void **state)
{
	ga_profile p;
	ga_records g = {0};
	ga_error err = {0};
	(void)state;

	ga_profile_init(&p);
	g.stall_pass = 1;
	assert_int_equal(ga_records_read_file(RUN "/4242.rec", &p, &g, &err), 0);
	assert_int_equal(p.n_launches, 0);
	assert_int_equal(p.n_unprofiled, 0);
	assert_int_equal(g.n_processes, 0);
	assert_false(g.have_device);
	/* a stall-run source record of a kernel the first run did not
	 * profile is dropped */
	assert_int_equal(p.n_sources, 0);
	assert_int_equal(g.stall_records, 1);
	assert_int_equal(g.cupti_errors, 1);
	assert_int_equal(g.source_notes, 1);
	ga_records_free(&g);
	ga_profile_free(&p);

	assert_int_equal(ga_records_read_file(RUN "/missing.rec", &p, &g, &err), -1);
}

static char tmpdir[64];

static char *write_rec(const char *name, const char *text)
{
	char *path = ga_xasprintf("%s/%s", tmpdir, name);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
	return path;
}

static void remove_tmpdir(void)
{
	char *cmd = ga_xasprintf("rm -rf '%s'", tmpdir);
	assert_int_equal(system(cmd), 0);
	free(cmd);
}

/* Error records that make the run a failure, with the message for it. */
static void test_failures(void **state)
{
	static const struct {
		const char *records;
		ga_errcode code;
		const char *in_msg;
	} cases[] = {
		{"{\"type\":\"start\",\"pid\":1}\n"
		 "{\"type\":\"error\",\"pid\":1,\"code\":\"permission\",\"message\":\"x\"}\n",
		 GA_ERR_PERMISSION, "NVreg_RestrictProfilingToAdminUsers=0"},
		{"{\"type\":\"error\",\"pid\":1,\"code\":\"another_profiler\",\"message\":\"ncu is attached\"}\n",
		 GA_ERR_PROFILING, "ncu is attached. Only one CUPTI-based tool"},
		{"{\"type\":\"error\",\"pid\":1,\"code\":\"counters_busy\",\"message\":\"busy!\"}\n",
		 GA_ERR_PROFILING, "dcgmi profile --pause"},
		{"{\"type\":\"error\",\"pid\":1,\"code\":\"unsupported\",\"message\":\"MIG slice\"}\n",
		 GA_ERR_PROFILING, "cannot be profiled: MIG slice."},
		{"{\"type\":\"error\",\"pid\":1,\"code\":\"cupti\",\"message\":\"boom\"}\n",
		 GA_ERR_PROFILING, "CUPTI failed: boom"},
		{"{\"type\":\"error\",\"pid\":1,\"code\":\"bad_metric\",\"metric\":\"a.sum\",\"message\":\"m\"}\n",
		 GA_ERR_PROFILING, "none of the requested metrics"},
	};
	(void)state;

	snprintf(tmpdir, sizeof(tmpdir), "/tmp/ga-test-records-XXXXXX");
	assert_non_null(mkdtemp(tmpdir));
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		ga_profile p;
		ga_records g = {0};
		ga_error err = {0};
		char *path = write_rec("1.rec", cases[i].records);

		ga_profile_init(&p);
		assert_int_equal(ga_records_read_file(path, &p, &g, &err), 0);
		assert_int_equal(ga_records_failure(&g, &p, &err), -1);
		assert_int_equal(err.code, cases[i].code);
		if (!strstr(err.msg, cases[i].in_msg))
			fail_msg("case %zu: '%s' not in '%s'", i, cases[i].in_msg, err.msg);
		ga_records_free(&g);
		ga_profile_free(&p);
		unlink(path);
		free(path);
	}
	/* a process that could not wait for the counters is a note */
	{
		ga_profile p;
		ga_records g = {0};
		ga_error err = {0};
		ga_buf note = {0};
		char *path = write_rec("2.rec", "{\"type\":\"error\",\"pid\":2,\"code\":\"busy\","
		                       "\"message\":\"held for 10 s\"}\n");
		ga_profile_init(&p);
		ga_records_read_file(path, &p, &g, &err);
		assert_int_equal(ga_records_failure(&g, &p, &err), 0);
		ga_records_note_run(&g, &note);
		assert_string_equal(note.s, "1 process(es) ran unprofiled: held for 10 s. ");
		ga_buf_free(&note);
		ga_records_free(&g);
		ga_profile_free(&p);
		free(path);
	}
	/* loop replay ended by its budget (two processes): a note, no
	 * failure, no CUPTI error */
	{
		ga_profile p;
		ga_records g = {0};
		ga_error err = {0};
		ga_buf note = {0};
		char *path = write_rec("3.rec", "{\"type\":\"error\",\"pid\":3,\"code\":\"loop_replay\","
		                       "\"message\":\"loop replay ended after 8 broken passes\"}\n"
		                       "{\"type\":\"error\",\"pid\":4,\"code\":\"loop_replay\","
		                       "\"message\":\"loop replay ended after 9000 launches\"}\n");
		ga_profile_init(&p);
		ga_records_read_file(path, &p, &g, &err);
		assert_int_equal(ga_records_failure(&g, &p, &err), 0);
		assert_int_equal(g.cupti_errors, 0);
		assert_int_equal(g.loop_notes, 2);
		ga_records_note_run(&g, &note);
		assert_string_equal(note.s, "loop replay ended after 8 broken passes "
		                    "(in more processes too). ");
		ga_buf_free(&note);
		ga_records_free(&g);
		ga_profile_free(&p);
		free(path);
	}
	/* a process the watchdog stopped, and collectives left unmeasured in
	 * two ranks: notes, counted, no CUPTI error and no failure (what the
	 * other processes measured is reported) */
	{
		ga_profile p;
		ga_records g = {0};
		ga_error err = {0};
		ga_buf note = {0};
		char *path = write_rec("4.rec", "{\"type\":\"error\",\"pid\":5,\"code\":\"no_replay\","
		                       "\"message\":\"12 launch(es) of 1 communication kernel(s) "
		                       "(ncclDevKernel_AllReduce_Sum_f32_RING_LL) were not measured\"}\n"
		                       "{\"type\":\"error\",\"pid\":6,\"code\":\"no_replay\","
		                       "\"message\":\"11 launch(es)\"}\n"
		                       "{\"type\":\"error\",\"pid\":6,\"code\":\"watchdog\","
		                       "\"message\":\"the watchdog stopped process 6\"}\n");
		ga_profile_init(&p);
		ga_records_read_file(path, &p, &g, &err);
		assert_int_equal(ga_records_failure(&g, &p, &err), 0);
		assert_int_equal(g.cupti_errors, 0);
		assert_int_equal(g.watchdog, 1);
		assert_int_equal(g.no_replay_notes, 2);
		ga_records_note_run(&g, &note);
		assert_string_equal(note.s, "the watchdog stopped process 6. 12 launch(es) of 1 "
		                    "communication kernel(s) (ncclDevKernel_AllReduce_Sum_f32_RING_LL) "
		                    "were not measured (in more processes too). ");
		ga_buf_free(&note);
		ga_records_free(&g);
		ga_profile_free(&p);
		free(path);
	}
	remove_tmpdir();
}

/* What the writer writes, the reader reads back. */
static void test_round_trip(void **state)
{
	ga_profile in, out;
	ga_records g = {0};
	ga_device dev = {0};
	ga_error err = {0};
	const char *set0[] = {"a.sum", "gpu__time_duration.sum"};
	const char *set1[] = {"b.sum", "gpu__time_duration.sum"};
	ga_rec_set sets[] = {{1, set0, 2}, {3, set1, 2}};
	(void)state;

	snprintf(tmpdir, sizeof(tmpdir), "/tmp/ga-test-records-XXXXXX");
	assert_non_null(mkdtemp(tmpdir));
	assert_int_equal(ga_rec_open(tmpdir, 77), 0);

	dev.name = "Test GPU";
	dev.chip = "GH100";
	dev.cc_major = 9;
	dev.sm_count = 132;
	dev.warp_size = 32;
	/* a rank of an Open MPI job; Slurm's variables too, which come later */
	setenv("OMPI_COMM_WORLD_RANK", "3", 1);
	setenv("OMPI_COMM_WORLD_SIZE", "8", 1);
	setenv("OMPI_COMM_WORLD_LOCAL_RANK", "1", 1);
	setenv("SLURM_PROCID", "5", 1);
	unsetenv("RANK");
	ga_rec_start(76, "9.9");
	unsetenv("OMPI_COMM_WORLD_RANK");
	unsetenv("SLURM_PROCID");
	ga_rec_gpu(2, "GPU-00000000-0000-0000-0000-000000000002");
	ga_rec_device(1, &dev, sets, 2);

	ga_profile_init(&in);
	ga_profile_add_metric(&in, "a.sum");
	ga_profile_add_metric(&in, "b.sum");
	ga_profile_add_metric(&in, "gpu__time_duration.sum");
	double values[] = {7.0, NAN, 1000.0};
	ga_launch l = {0};
	l.name = "k(int)";
	l.mangled = "_Z1ki";
	l.pid = 77;
	l.index = 4;
	l.grid[0] = l.grid[1] = l.grid[2] = 1;
	l.block[0] = 128, l.block[1] = l.block[2] = 1;
	l.duration_ns = 1000.0;
	l.values = values;
	ga_rec_launch(&in, &l);
	ga_unprofiled u = {"_Z1ki", 77, {1, 1, 1}, {128, 1, 1}, 3, 1};
	ga_rec_unprofiled(&u);
	ga_rec_bad_metric("c.sum");
	ga_rec_error("cupti", "%d thing%s failed", 2, "s");
	ga_rec_end(9, 8, 1, 0.125, 0.75, 0, 6);
	ga_rec_close();
	ga_rec_error("cupti", "after the close: not written");

	ga_profile_init(&out);
	ga_records_read_dir(tmpdir, &out, &g);
	assert_int_equal(g.n_processes, 1);
	assert_int_equal(g.n_ended, 1);
	assert_int_equal(g.truncated_lines, 0);
	assert_string_equal(out.device.name, "Test GPU");
	assert_int_equal(out.collection.passes, 3);
	assert_int_equal(out.collection.metric_sets, 2);
	assert_int_equal(out.collection.graph_launches, 6);
	/* the duration once, from set 0 */
	assert_int_equal(out.n_metrics, 3);
	assert_int_equal(out.n_launches, 1);
	assert_string_equal(out.launches[0].mangled, "_Z1ki");
	assert_int_equal(out.launches[0].index, 4);
	assert_true(out.launches[0].duration_ns == 1000.0);
	assert_true(out.launches[0].values[ga_profile_metric_index(&out, "a.sum")] == 7.0);
	assert_true(isnan(out.launches[0].values[ga_profile_metric_index(&out, "b.sum")]));
	assert_int_equal(out.n_unprofiled, 1);
	assert_int_equal(out.unprofiled[0].launches, 3);
	assert_true(out.unprofiled[0].below_min_share);
	assert_int_equal(g.n_bad, 1);
	assert_int_equal(g.cupti_errors, 1);
	assert_string_equal(g.first_error, "2 things failed");
	assert_true(fabs(out.collection.profiler_measure_seconds - 0.75) < 1e-9);
	const ga_proc_info *who = ga_profile_proc(&out, 77);
	assert_non_null(who);
	assert_int_equal(who->rank, 3);
	assert_int_equal(who->world_size, 8);
	assert_int_equal(who->local_rank, 1);
	assert_string_equal(who->rank_from, "OMPI_COMM_WORLD_RANK");
	assert_non_null(who->host);
	assert_int_equal(who->n_gpus, 1);
	assert_int_equal(who->gpus[0].index, 2);
	assert_string_equal(who->gpus[0].uuid, "GPU-00000000-0000-0000-0000-000000000002");

	ga_records_free(&g);
	ga_profile_free(&out);
	ga_profile_free(&in);
	(void)err;
	remove_tmpdir();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_run_dir),
		cmocka_unit_test(test_stall_pass),
		cmocka_unit_test(test_failures),
		cmocka_unit_test(test_round_trip),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
