/* test_nvtx.c: the NVTX range stacks of the injection library
 * (collect/nvtx.c), played as CUPTI's NVTX callbacks feed them (nvtxcb.c),
 * with no GPU: paths of launches, PyTorch's range names, the bounds, and
 * the split of unprofiled launches by path. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "collect/nvtx.h"

static int reset(void **state)
{
	(void)state;
	ga_nvtx_reset();
	return 0;
}

/* The calling thread's path, compared and freed; want NULL: none. */
static void path_is(const char *want)
{
	char *p = ga_nvtx_path();
	if (want)
		assert_non_null(p);
	if (p || want)
		assert_string_equal(p, want);
	free(p);
}

static void push(const char *message)
{
	char name[GA_NVTX_NAME_MAX];
	ga_nvtx_name(message, name);
	ga_nvtx_push(0, name);
}

static void test_names(void **state)
{
	char out[GA_NVTX_NAME_MAX], *longer;

	(void)state;
	ga_nvtx_name("aten::linear, seq = 12", out);
	assert_string_equal(out, "aten::linear");
	ga_nvtx_name("aten::addmm, seq = 3, op_id = 7, sizes = [[256, 512], [512, 1024]]", out);
	assert_string_equal(out, "aten::addmm");
	ga_nvtx_name("aten::mul, sizes = [[4], []]", out);
	assert_string_equal(out, "aten::mul");
	ga_nvtx_name("autograd::engine::evaluate_function: AddmmBackward0", out);
	assert_string_equal(out, "autograd::engine::evaluate_function: AddmmBackward0");
	ga_nvtx_name("epoch 1/10", out);
	assert_string_equal(out, "epoch 1|10");
	ga_nvtx_name(NULL, out);
	assert_string_equal(out, "(unnamed)");
	ga_nvtx_name(", seq = 4", out);
	assert_string_equal(out, "(unnamed)");
	longer = malloc(1000);
	memset(longer, 'x', 999);
	longer[999] = '\0';
	ga_nvtx_name(longer, out);
	assert_int_equal(strlen(out), GA_NVTX_NAME_MAX - 1);
	free(longer);
}

static void test_push_pop(void **state)
{
	(void)state;
	path_is(NULL);
	assert_false(ga_nvtx_seen());
	push("train_step");
	push("aten::linear, seq = 0");
	push("aten::addmm, seq = 0");
	assert_true(ga_nvtx_seen());
	path_is("train_step/aten::linear/aten::addmm");
	ga_nvtx_pop(0);
	path_is("train_step/aten::linear");
	ga_nvtx_pop(0);
	push("aten::layer_norm, seq = 1");
	path_is("train_step/aten::layer_norm");
	ga_nvtx_pop(0);
	ga_nvtx_pop(0);
	path_is(NULL);
	ga_nvtx_pop(0);          /* one pop too many: nothing to end */
	path_is(NULL);
}

/* Ranges nest per domain: a pop ends its own domain's latest push, even
 * under another domain's. */
static void test_domains(void **state)
{
	(void)state;
	ga_nvtx_push(0, "a");
	ga_nvtx_push(7, "[mine] d");
	ga_nvtx_push(0, "b");
	path_is("a/[mine] d/b");
	ga_nvtx_pop(7);
	path_is("a/b");
	ga_nvtx_pop(0);
	path_is("a");
	ga_nvtx_pop(9);          /* a domain with no range open */
	path_is("a");
}

/* Start/end ranges enclose the launches of the thread that started them,
 * in the order ranges were opened, and end by id. */
static void test_start_end(void **state)
{
	(void)state;
	push("outer");
	ga_nvtx_start(5, "phase");
	push("inner");
	path_is("outer/phase/inner");
	ga_nvtx_end(5);
	path_is("outer/inner");
	ga_nvtx_end(99);         /* unknown id */
	path_is("outer/inner");
}

static void *other_thread(void *arg)
{
	char **out = arg;
	push("worker");
	*out = ga_nvtx_path();
	ga_nvtx_pop(0);
	return NULL;
}

static void test_threads(void **state)
{
	pthread_t t;
	char *theirs = NULL;

	(void)state;
	push("main");
	ga_nvtx_start(1, "main's");
	assert_int_equal(pthread_create(&t, NULL, other_thread, &theirs), 0);
	pthread_join(t, NULL);
	assert_string_equal(theirs, "worker");
	free(theirs);
	path_is("main/main's");
}

/* Deeper than GA_NVTX_DEPTH: the outer ranges are kept, the pops match. */
static void test_depth_bound(void **state)
{
	char name[16], *p;
	size_t slashes = 0;

	(void)state;
	for (int i = 0; i < GA_NVTX_DEPTH + 8; i++) {
		snprintf(name, sizeof(name), "r%d", i);
		ga_nvtx_push(0, name);
	}
	p = ga_nvtx_path();
	for (const char *c = p; *c; c++)
		slashes += *c == '/';
	assert_int_equal(slashes + 1, GA_NVTX_DEPTH);
	assert_true(strncmp(p, "r0/r1/", 6) == 0);
	free(p);
	for (int i = 0; i < 8; i++)
		ga_nvtx_pop(0);
	p = ga_nvtx_path();
	snprintf(name, sizeof(name), "/r%d", GA_NVTX_DEPTH - 1);
	assert_non_null(strstr(p, name));
	free(p);
	for (int i = 0; i < GA_NVTX_DEPTH; i++)
		ga_nvtx_pop(0);
	path_is(NULL);
}

/* More distinct names than GA_NVTX_NODES: later ones fall to their parent,
 * memory stays bounded, and nothing crashes. */
static void test_node_bound(void **state)
{
	char name[32];

	(void)state;
	push("top");
	for (int i = 0; i < GA_NVTX_NODES + 10; i++) {
		snprintf(name, sizeof(name), "n%d", i);
		ga_nvtx_push(0, name);
		ga_nvtx_pop(0);
	}
	ga_nvtx_push(0, "one more");
	path_is("top");
	ga_nvtx_pop(0);
}

typedef struct {
	char *path[8];
	long launches[8];
	size_t n;
} emitted;

static emitted got;

static void collect(const ga_unprofiled *u)
{
	assert_true(got.n < 8);
	got.path[got.n] = u->nvtx ? strdup(u->nvtx) : NULL;
	got.launches[got.n++] = u->launches;
}

static long launches_at(const char *path)
{
	for (size_t i = 0; i < got.n; i++)
		if (path ? got.path[i] && strcmp(got.path[i], path) == 0 : !got.path[i])
			return got.launches[i];
	return -1;
}

static void got_free(void)
{
	for (size_t i = 0; i < got.n; i++)
		free(got.path[i]);
	memset(&got, 0, sizeof(got));
}

/* Kernel 0 runs 3 times in A (one profiled) and 5 times in B: its 7
 * unprofiled launches are 2 in A and 5 in B. */
static void test_unprofiled_split(void **state)
{
	ga_unprofiled u = {.mangled = "k", .launches = 7};

	(void)state;
	push("A");
	for (int i = 0; i < 3; i++)
		ga_nvtx_count(0);
	ga_nvtx_pop(0);
	push("B");
	for (int i = 0; i < 5; i++)
		ga_nvtx_count(0);
	ga_nvtx_pop(0);
	ga_nvtx_profiled(0, "A");
	ga_nvtx_unprofiled(0, &u, collect);
	assert_int_equal(got.n, 2);
	assert_int_equal(launches_at("A"), 2);
	assert_int_equal(launches_at("B"), 5);
	got_free();

	/* Counts that disagree with the collector's (launches measured some
	 * other way) are shared in proportion: 14 as 2:5. */
	u.launches = 14;
	ga_nvtx_unprofiled(0, &u, collect);
	assert_int_equal(launches_at("A"), 4);
	assert_int_equal(launches_at("B"), 10);
	got_free();

	/* Launches outside any range keep no path; a kernel never counted
	 * comes out as it went in. */
	ga_nvtx_count(1);
	ga_nvtx_count(1);
	u.launches = 2;
	ga_nvtx_unprofiled(1, &u, collect);
	assert_int_equal(got.n, 1);
	assert_int_equal(launches_at(NULL), 2);
	got_free();
	ga_nvtx_unprofiled(42, &u, collect);
	assert_int_equal(got.n, 1);
	assert_int_equal(launches_at(NULL), 2);
	got_free();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_names, reset),
		cmocka_unit_test_setup(test_push_pop, reset),
		cmocka_unit_test_setup(test_domains, reset),
		cmocka_unit_test_setup(test_start_end, reset),
		cmocka_unit_test_setup(test_threads, reset),
		cmocka_unit_test_setup(test_depth_bound, reset),
		cmocka_unit_test_setup(test_node_bound, reset),
		cmocka_unit_test_setup(test_unprofiled_split, reset),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
