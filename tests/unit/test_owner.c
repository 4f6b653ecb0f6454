/* test_owner.c: whose kernel it is (src/analyze/owner.c, the owners file
 * rules/owners.yaml, a rule's owners: key) and the framework-level actions
 * (src/analyze/summary.c) on the recorded PyTorch workload. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "analyze/analyze.h"
#include "collect/protocol.h"
#include "collect/trigger.h"
#include "profile/profile.h"
#include "rules/rules.h"
#include "util/util.h"
#include "helpers.h"

#define RECORDED GA_TEST_FIXTURES "/recorded/"

static void load_profile(ga_profile *p, const char *path)
{
	ga_error err = {0};

	ga_profile_init(p);
	if (ga_profile_load(p, path, &err) != 0)
		fail_msg("cannot load %s: %s", path, err.msg);
}

static void analyze(const ga_profile *p, const ga_ruleset *rs, ga_analysis *a)
{
	ga_error err = {0};
	ga_analyze_opts o = {0};

	if (ga_analyze(p, rs, &o, a, &err) != 0)
		fail_msg("ga_analyze failed: %s", err.msg);
}

/* Names as CUPTI reports them (demangled, with "void "; or mangled) from
 * PyTorch, cuBLAS, cuDNN, NCCL, Triton and FlashAttention traces. */
static const struct {
	const char *name, *mangled, *owner, *kind;
} shipped_cases[] = {
	{ "nvjet_tst_192x176_64x4_1x2_h_bz_coopB_T", NULL, "cublas", "gemm" },
	{ "nvjet_sm90_hss_320x128_64x3_2x1_v_bz_coopA_NNN", NULL, "cublas", "gemm" },
	{ "void cutlass::Kernel2<cutlass_80_simt_sgemm_256x128_8x4_nn_align1>"
	  "(cutlass_80_simt_sgemm_256x128_8x4_nn_align1::Params)", NULL, "cublas", "gemm" },
	{ "void cutlass::Kernel2<cutlass_80_tensorop_s16816gemm_relu_bf16_64x64_32x6_tn_align8>"
	  "(cutlass_80_tensorop_s16816gemm_relu_bf16_64x64_32x6_tn_align8::Params)", NULL,
	  "cublas", "gemm" },
	{ "sm90_xmma_gemm_f64f64_f64f64_f64_nn_n_tilesize32x32x32_stage5_warpsize2x2x1_"
	  "tensor16x8x8_execute_kernel__5x_cublas", NULL, "cublas", "gemm" },
	{ "ampere_bf16_s16816gemm_bf16_256x128_ldg8_f2f_stages_32x3_nn", NULL, "cublas", "gemm" },
	{ "void gemv2T_kernel_val<int, int, float, float, float, float, 128, 16, 4, 4, false, "
	  "false, cublasGemvParamsEx<int, cublasGemvTensorStrided<float const>, "
	  "cublasGemvTensorStrided<float const>, cublasGemvTensorStrided<float>, float> >"
	  "(cublasGemvParamsEx<int, cublasGemvTensorStrided<float const>, "
	  "cublasGemvTensorStrided<float const>, cublasGemvTensorStrided<float>, float>, float, "
	  "float)", NULL, "cublas", "gemm" },
	{ "cudnn_generated_fort_native_sdpa_sm90_knob_7_64x128x64_4x1x1_kernel0_0", NULL, "cudnn",
	  "attention" },
	{ "sm90_xmma_fprop_implicit_gemm_bf16bf16_bf16f32_f32_nhwckrsc_nhwc_tilesize128x128x64",
	  NULL, "cudnn", "conv" },
	{ "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm, unsigned long, ncclWork*)", NULL,
	  "nccl", "comm" },
	{ "ncclKernel_AllGather_RING_LL_Sum_int8_t(ncclWorkElem)", NULL, "nccl", "comm" },
	{ "nvshmemi_transfer_rma_nbi_kernel(void*, void const*, unsigned long, int)", NULL,
	  "nvshmem", "comm" },
	{ "void nvshmem_barrier_all_kernel()", NULL, "nvshmem", "comm" },
	{ "triton_poi_fused_add_gelu_mul_0", NULL, "triton", NULL },
	{ "triton_red_fused__softmax_1", NULL, "triton", NULL },
	{ "triton_tem_fused_mm_0", NULL, "triton", "gemm" },
	{ "void pytorch_flash::flash_fwd_kernel<Flash_fwd_kernel_traits<128, 128, 64, 4, false, "
	  "false, cutlass::bfloat16_t, Flash_kernel_traits<128, 128, 64, 4, cutlass::bfloat16_t> >, "
	  "false, false, false, false, true, true, false>(pytorch_flash::Flash_fwd_params)", NULL,
	  "flash-attention", "attention" },
	{ "void flash_bwd_dq_dk_dv_loop_seqk_parallel_kernel<Flash_bwd_kernel_traits>(Params)", NULL,
	  "flash-attention", "attention" },
	{ "fmha_cutlassF_f32_aligned_64x64_k32_sm80(PyTorchMemEffAttention::AttentionKernel<float, "
	  "cutlass::arch::Sm80, true, 64, 64, 64, true, true>::Params)", NULL, "aten",
	  "attention" },
	{ "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, "
	  "std::array<char*, 3ul> >(int, at::native::CUDAFunctor_add<float>, "
	  "std::array<char*, 3ul>)", NULL, "aten", "elementwise" },
	{ "void at::native::reduce_kernel<512, 1, at::native::ReduceOp<double, "
	  "at::native::MeanOps<double, double, double, double>, unsigned int, double, 4, 4> >"
	  "(at::native::ReduceOp<double, at::native::MeanOps<double, double, double, double>, "
	  "unsigned int, double, 4, 4>)", NULL, "aten", "reduction" },
	{ "void at::native::(anonymous namespace)::cunn_SoftMaxForwardReg<float, float, float, "
	  "at::native::(anonymous namespace)::SoftMaxForwardEpilogue, long, 4>(float*, float const*, "
	  "long)", NULL, "aten", "softmax" },
	{ "void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<float, float, "
	  "false>(int, float, float const*, float const*, float const*, float*, float*, float*)",
	  NULL, "aten", "reduction" },
	/* Only the mangled name known: still ATen's. */
	{ NULL, "_ZN2at6native24vectorized_gather_kernelILi16ElEEvPcS2_PT0_il", "aten", NULL },
	{ "void cutlass::Kernel2<cutlass::gemm::kernel::GemmUniversal<cute::tuple<int, int, int, "
	  "int>, Mainloop, Epilogue> >(Params)", NULL, "cutlass", "gemm" },
	/* CUB and Thrust are library code, PyTorch's vendored CUB too. */
	{ "void at_cuda_detail::cub::DeviceRadixSortOnesweepKernel<at_cuda_detail::cub::"
	  "DeviceRadixSortPolicy<long, long, int>::Policy900, false, long, long, int, int, "
	  "at_cuda_detail::cub::detail::identity_decomposer_t>(int*, int*, long const*)", NULL,
	  "cccl", NULL },
	{ "void cub::CUB_200802_900_NS::DeviceReduceKernel<Policy, float*, int>(float*)", NULL,
	  "cccl", NULL },
	{ "void thrust::THRUST_200802_900_NS::cuda_cub::core::_kernel_agent<F, long>(F, long)",
	  NULL, "cccl", NULL },
	/* The user's own kernels, including ones whose names merely mention a
	 * library word. */
	{ "matmul_naive(float const*, float const*, float*, int)", NULL, "user", NULL },
	{ "my_gemm_kernel(float*, float const*)", NULL, "user", NULL },
	{ "void tiled<32>(float const*, float*)", NULL, "user", NULL },
	{ "ncclish(float*)", NULL, "user", NULL },
};

static void test_shipped_patterns(void **state)
{
	ga_ruleset rs;
	size_t failures = 0;

	(void)state;
	load_rules(&rs, GA_TEST_RULES);
	assert_true(rs.n_owners > 0);
	for (size_t i = 0; i < GA_ARRAY_LEN(shipped_cases); i++) {
		const char *kind = "unset";
		const ga_owner *o = ga_owner_of(&rs, shipped_cases[i].name, shipped_cases[i].mangled,
		                                NULL, &kind);
		const char *want_kind = shipped_cases[i].kind;
		int kind_ok = want_kind ? kind && strcmp(kind, want_kind) == 0 : kind == NULL;
		if (strcmp(o->name, shipped_cases[i].owner) != 0 || !kind_ok) {
			fprintf(stderr, "%s: owner %s kind %s, expected %s kind %s\n",
			        shipped_cases[i].name ? shipped_cases[i].name : shipped_cases[i].mangled,
			        o->name, kind ? kind : "(none)", shipped_cases[i].owner,
			        want_kind ? want_kind : "(none)");
			failures++;
		}
	}
	/* Only the user's and Triton's kernels are editable. */
	for (size_t i = 0; i < rs.n_owners; i++)
		assert_int_equal(rs.owners[i].editable,
		                 strcmp(rs.owners[i].name, "user") == 0 ||
		                 strcmp(rs.owners[i].name, "triton") == 0);
	ga_ruleset_free(&rs);
	assert_int_equal(failures, 0);
}

/* The collector's copy of the owners (GA_ENV_SOURCE_SKIP: the default
 * source mode leaves library kernels out) calls a kernel a library's
 * exactly when the analysis gives it an owner that is not editable. */
static void test_source_skip(void **state)
{
	ga_ruleset rs;
	ga_name_filter *f;
	char *text;
	size_t libs = 0;

	(void)state;
	load_rules(&rs, GA_TEST_RULES);
	text = ga_ruleset_source_skip(&rs);
	assert_non_null(text);
	f = ga_name_filter_parse(text, NULL, NULL);
	assert_non_null(f);
	for (size_t i = 0; i < GA_ARRAY_LEN(shipped_cases); i++) {
		const char *name = shipped_cases[i].name, *mangled = shipped_cases[i].mangled;
		const ga_owner *o = ga_owner_of(&rs, name, mangled, NULL, NULL);
		int lib = ga_name_filter_matches(f, name, mangled);
		if (lib != !o->editable)
			fail_msg("%s: owner %s, left out %d", name ? name : mangled, o->name, lib);
		libs += lib;
	}
	assert_true(libs >= 15);
	/* Kernels of the recorded transformer step, as the collector sees them
	 * (both names; cuBLAS's are C names). */
	assert_int_equal(ga_name_filter_matches(f, "nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_bias_TNT",
	                                        "nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_bias_TNT"), 1);
	assert_int_equal(ga_name_filter_matches(f, "void cudnn::fusion::convert_dq_to_16bits<true>"
	                                        "(void const*, void*, unsigned int)",
	                                        "_ZN5cudnn6fusion20convert_dq_to_16bitsILb1EEEvPKvPvj"), 1);
	assert_int_equal(ga_name_filter_matches(f, "poly::poly_loops(float*, int const*)",
	                                        "_ZN4poly10poly_loopsEPfPKi"), 0);
	ga_name_filter_free(f);
	free(text);
	/* without an owners file every kernel is the user's: nothing left out */
	ga_ruleset_free(&rs);
	memset(&rs, 0, sizeof(rs));
	assert_null(ga_ruleset_source_skip(&rs));
}

/* The collector's list of kernels never replayed (GA_ENV_NO_REPLAY) holds
 * exactly the kernels whose owner pattern is of kind comm, first match
 * deciding as for the owners: NCCL's and NVSHMEM's, not a user kernel
 * that merely starts with "nccl", not cuBLAS's. */
static void test_no_replay(void **state)
{
	ga_ruleset rs;
	ga_name_filter *f, *d;
	char *text;
	size_t comm = 0;

	(void)state;
	load_rules(&rs, GA_TEST_RULES);
	text = ga_ruleset_no_replay(&rs);
	assert_non_null(text);
	f = ga_name_filter_parse(text, NULL, NULL);
	assert_non_null(f);
	for (size_t i = 0; i < GA_ARRAY_LEN(shipped_cases); i++) {
		const char *name = shipped_cases[i].name, *mangled = shipped_cases[i].mangled;
		const char *kind = NULL;
		ga_owner_of(&rs, name, mangled, NULL, &kind);
		int want = kind && strcmp(kind, GA_KIND_COMM) == 0;
		int got = ga_name_filter_matches(f, name, mangled);
		if (got != want)
			fail_msg("%s: kind %s, never replayed %d", name ? name : mangled,
			         kind ? kind : "(none)", got);
		comm += got;
	}
	assert_int_equal(comm, 4);
	ga_name_filter_free(f);
	free(text);
	/* The collector's fallback, for rules whose owners name none, agrees
	 * on those names. */
	d = ga_name_filter_parse(GA_NO_REPLAY_DEFAULT, NULL, NULL);
	assert_non_null(d);
	assert_int_equal(ga_name_filter_matches(d, "ncclDevKernel_AllReduce_Sum_f32_RING_LL"
	                                        "(ncclDevComm, unsigned long, ncclWork*)", NULL), 1);
	assert_int_equal(ga_name_filter_matches(d, "void nvshmem_barrier_all_kernel()", NULL), 1);
	assert_int_equal(ga_name_filter_matches(d, "ncclish(float*)", NULL), 0);
	ga_name_filter_free(d);
	/* no owners file: no list (the launcher then passes the fallback) */
	ga_ruleset_free(&rs);
	memset(&rs, 0, sizeof(rs));
	assert_null(ga_ruleset_no_replay(&rs));
}

/* Module patterns match the module only, and only when it is known. */
static void test_module_patterns(void **state)
{
	ga_ruleset rs;

	(void)state;
	load_rules(&rs, GA_TEST_RULES);
	assert_string_equal(ga_owner_of(&rs, "kernel_x", NULL,
	                                "/usr/lib/python3/site-packages/nvidia/cublas/lib/"
	                                "libcublasLt.so.13", NULL)->name, "cublas");
	assert_string_equal(ga_owner_of(&rs, "kernel_x", NULL, NULL, NULL)->name, "user");
	assert_string_equal(ga_owner_of(&rs, "libcublas_like_kernel", NULL, NULL, NULL)->name,
	                    "user");
	/* The module wins over the name: CUB's sort and a CUTLASS GEMM built
	 * into libtorch_cuda are PyTorch's, and the GEMM keeps its kind. */
	const char *kind = "unset";
	assert_string_equal(ga_owner_of(&rs, "void at_cuda_detail::cub::DeviceRadixSortOnesweepKernel"
	                                "<Policy, false, float, long>(float*)", NULL,
	                                "libtorch_cuda.so", &kind)->name, "aten");
	assert_string_equal(ga_owner_of(&rs, "void cutlass::Kernel2<cutlass::gemm::kernel::"
	                                "GemmUniversal<X> >(Params)", NULL, "libtorch_cuda.so",
	                                &kind)->name, "aten");
	assert_non_null(kind);
	assert_string_equal(kind, "gemm");
	/* The program's own file matches no module: names decide, and a
	 * user's kernel stays the user's. */
	assert_string_equal(ga_owner_of(&rs, "matmul_naive(float const*, float const*, float*, int)",
	                                NULL, "gpuadvise-testapp", NULL)->name, "user");
	ga_ruleset_free(&rs);
}

/* Without an owners file every kernel is the user's, editable, and every
 * rule without owners: applies as before. */
static void test_no_owners_file(void **state)
{
	ga_ruleset rs;
	const char *kind = "unset";
	ga_owner lib = { .name = "cublas", .display = "cuBLAS", .editable = 0 };
	ga_owner mine = { .name = "triton", .display = "Triton", .editable = 1 };
	ga_name_pos named[2] = { { .name = "cublas" }, { .name = "editable" } };
	ga_rule plain = {0}, for_lib = { .owners = named, .n_owners = 1 },
		for_editable = { .owners = named + 1, .n_owners = 1 };

	(void)state;
	ga_ruleset_init(&rs);
	const ga_owner *o = ga_owner_of(&rs, "nvjet_tst_1", NULL, NULL, &kind);
	assert_string_equal(o->name, "user");
	assert_true(o->editable);
	assert_null(kind);
	assert_true(ga_rule_applies_to(&plain, o));

	assert_false(ga_rule_applies_to(&plain, &lib));
	assert_true(ga_rule_applies_to(&plain, &mine));
	assert_true(ga_rule_applies_to(&for_lib, &lib));
	assert_false(ga_rule_applies_to(&for_lib, &mine));
	assert_false(ga_rule_applies_to(&for_editable, &lib));
	assert_true(ga_rule_applies_to(&for_editable, &mine));
}

/* A rule naming an owner the owners file does not define is an error of
 * the set, at the name's place. */
static void test_unknown_rule_owner(void **state)
{
	ga_ruleset rs;
	ga_diags d = {0};
	const char *path = GA_TEST_FIXTURES "/owner-rules/unknown-owner.yaml";

	(void)state;
	load_rules(&rs, GA_TEST_RULES);
	assert_int_equal(ga_rules_load_file(&rs, path, &d), 0);
	assert_int_equal(ga_ruleset_validate(&rs, &d), 1);
	assert_string_equal(d.v[0].file, path);
	assert_int_equal(d.v[0].line, 8);
	assert_int_equal(d.v[0].col, 20);
	assert_non_null(strstr(d.v[0].msg, "unknown owner 'cublass'"));
	ga_diags_free(&d);
	ga_ruleset_free(&rs);
}

static double launch_value(const ga_profile *p, const ga_group *g, const char *metric)
{
	long m = ga_profile_metric_index(p, metric);
	assert_true(m >= 0);
	assert_int_equal(g->n_launches, 1);
	return p->launches[g->launches[0]].values[m];
}

static const ga_finding *finding_of(const ga_analysis *a, const ga_group *g, const char *id)
{
	for (size_t i = 0; i < g->n_findings; i++) {
		const ga_finding *f = &a->findings[g->findings[i]];
		if (strcmp(f->rule->id, id) == 0)
			return f;
	}
	return NULL;
}

/* The TF32 estimate from the profile's own numbers: the kernel stays at
 * its fraction of the roofline while the FMA bound moves to the TF32 rate
 * (half the tensor peak) and DRAM/L2 traffic stays. */
static double tf32_estimate(const ga_analysis *a, const ga_profile *p, const ga_group *g)
{
	double fma = launch_value(p, g, "sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active")
	             / 100;
	double glob = fmax(launch_value(p, g, "dram__throughput.avg.pct_of_peak_sustained_elapsed"),
	                   fmax(launch_value(p, g, "lts__t_sectors.avg.pct_of_peak_sustained_elapsed"),
	                        launch_value(p, g,
	                                     "lts__t_tag_requests.avg.pct_of_peak_sustained_elapsed")))
	              / 100;
	double ratio = a->roofline.peaks.flops[GA_ROOF_FP32] /
	               (a->roofline.peaks.flops[GA_ROOF_TENSOR] / 2);
	assert_true(ratio > 0 && ratio < 1);
	return 1 - fmax(fma * ratio, glob) / fmax(fma, glob);
}

static void test_pytorch_recorded(void **state)
{
	ga_ruleset rs;
	ga_profile p;
	ga_analysis a;
	const ga_group *sgemm = NULL;
	double library = 0;

	(void)state;
	load_rules(&rs, GA_TEST_RULES);
	load_profile(&p, RECORDED "pytorch.json");
	analyze(&p, &rs, &a);

	for (size_t gi = 0; gi < a.n_groups; gi++) {
		const ga_group *g = &a.groups[gi];
		const char *bare = ga_str_has_prefix(g->name, "void ") ? g->name + 5 : g->name;
		/* Every kernel of this workload is PyTorch's or cuBLAS's. */
		if (strstr(g->name, "sgemm") || ga_str_has_prefix(g->name, "sm90_xmma_gemm")) {
			assert_string_equal(g->owner->name, "cublas");
			assert_string_equal(g->owner_kind, "gemm");
		} else {
			assert_true(ga_str_has_prefix(bare, "at::native::") ||
			            ga_str_has_prefix(bare, "(anonymous namespace)::"));
			assert_string_equal(g->owner->name, "aten");
		}
		if (strstr(g->name, "sgemm"))
			sgemm = g;
		if (!g->owner->editable)
			library += g->share;
	}
	assert_non_null(sgemm);
	assert_true(fabs(a.library_share - library) < 1e-12);

	/* No kernel-source advice on kernels the user does not own: every
	 * finding comes from a rule that names its owners. */
	assert_true(a.n_findings > 0);
	for (size_t fi = 0; fi < a.n_findings; fi++) {
		const ga_finding *f = &a.findings[fi];
		assert_false(a.groups[f->group].owner->editable);
		assert_true(f->rule->n_owners > 0);
		assert_true(ga_str_has_prefix(f->rule->id, "framework-"));
	}

	/* The FP32 product off the tensor cores gets TF32/bf16, with the
	 * roofline-ratio estimate. */
	const ga_finding *tf32 = finding_of(&a, sgemm, "framework-tf32");
	assert_non_null(tf32);
	double want = tf32_estimate(&a, &p, sgemm);
	assert_true(want > 0.5);
	assert_true(fabs(tf32->estimate - want) < 1e-9);
	assert_true(fabs(tf32->saving - want * sgemm->share) < 1e-9);

	/* Actions: one per framework rule, its saving the sum of its
	 * findings', ranked; the TF32 action covers the sgemm alone. */
	assert_true(a.framework_first);
	assert_true(a.n_actions >= 2);
	int seen_tf32 = 0;
	for (size_t k = 0; k < a.n_actions; k++) {
		const ga_action *ac = &a.actions[k];
		double sum = 0, held = 0;
		for (size_t i = 0; i < ac->n_findings; i++) {
			assert_ptr_equal(a.findings[ac->findings[i]].rule, ac->rule);
			sum += a.findings[ac->findings[i]].saving;
			held += a.groups[a.findings[ac->findings[i]].group].share;
		}
		assert_true(fabs(ac->saving - sum) < 1e-12);
		assert_true(fabs(ac->share - held) < 1e-12);
		if (k)
			assert_true(a.actions[k - 1].saving >= ac->saving);
		if (strcmp(ac->rule->id, "framework-tf32") == 0) {
			seen_tf32 = 1;
			assert_int_equal(ac->n_findings, 1);
			assert_ptr_equal(&a.findings[ac->findings[0]], tf32);
		}
	}
	assert_true(seen_tf32);

	ga_analysis_free(&a);
	ga_profile_free(&p);
	ga_ruleset_free(&rs);
}

/* The user's own kernels keep the kernel-source advice: the test app's
 * kernels are all "user", and no action takes over What to do first. */
static void test_user_program(void **state)
{
	ga_ruleset rs;
	ga_profile p;
	ga_analysis a;

	(void)state;
	load_rules(&rs, GA_TEST_RULES);
	load_profile(&p, RECORDED "testapp-all.json");
	analyze(&p, &rs, &a);
	for (size_t gi = 0; gi < a.n_groups; gi++)
		assert_string_equal(a.groups[gi].owner->name, "user");
	assert_true(a.n_findings > 0);
	assert_int_equal(a.n_actions, 0);
	assert_false(a.framework_first);
	assert_true(a.library_share == 0);
	ga_analysis_free(&a);
	ga_profile_free(&p);
	ga_ruleset_free(&rs);
}

/* Library kernels of every kind in one synthetic profile (launches of the
 * PyTorch recording renamed): each gets its framework rule and none of the
 * kernel rules, while the user's kernels keep theirs. */
static void test_framework_rules(void **state)
{
	ga_ruleset rs;
	ga_profile p;
	ga_analysis a;
	const ga_group *nccl = NULL, *nvjet = NULL, *aten = NULL, *mine = NULL, *sgemm = NULL;
	double library = 0;

	(void)state;
	load_rules(&rs, GA_TEST_RULES);
	load_profile(&p, GA_TEST_FIXTURES "/owner-rules/framework-synthetic.json");
	analyze(&p, &rs, &a);
	for (size_t gi = 0; gi < a.n_groups; gi++) {
		const ga_group *g = &a.groups[gi];
		if (ga_str_has_prefix(g->name, "ncclDevKernel"))
			nccl = g;
		else if (ga_str_has_prefix(g->name, "nvjet"))
			nvjet = g;
		else if (strstr(g->name, "at::native::"))
			aten = g;
		else if (ga_str_has_prefix(g->name, "my_add"))
			mine = g;
		else if (ga_str_has_prefix(g->name, "my_sgemm"))
			sgemm = g;
		if (!g->owner->editable)
			library += g->share;
	}
	assert_non_null(nccl);
	assert_non_null(nvjet);
	assert_non_null(aten);
	assert_non_null(mine);
	assert_non_null(sgemm);

	/* NCCL: its share of the time, nothing else. */
	assert_int_equal(nccl->n_findings, 1);
	const ga_finding *comm = finding_of(&a, nccl, "framework-nccl");
	assert_non_null(comm);
	assert_true(comm->saving == 0);
	assert_string_equal(comm->evidence[0].name, "comm_share");
	assert_true(fabs(comm->evidence[0].value - nccl->share) < 1e-12);

	/* A cuBLAS GEMM under a wave: batch more, not "launch more blocks". */
	assert_non_null(finding_of(&a, nvjet, "framework-small-grid"));
	assert_null(finding_of(&a, nvjet, "grid-too-small"));

	/* Short kernels launched 20 times: CUDA graphs for ATen's (the launch
	 * cost against the kernel, L / (L + duration)), the launch rule for the
	 * user's (20 launches at the launch rate, max(L, duration) each, against
	 * one launch of the merged work at the throughput line's share of its
	 * roofline bound). */
	double overhead = fmin(0.67, 5000.0 / (5000.0 + 3000.0));
	const ga_finding *graphs = finding_of(&a, aten, "framework-cuda-graphs");
	const ga_finding *launch = finding_of(&a, mine, "launch-overhead");
	assert_non_null(graphs);
	assert_non_null(launch);
	assert_true(fabs(graphs->estimate - overhead) < 1e-12);
	ga_roof_cuts cuts = { .tensor_min_pct = ga_classifier_value(&rs, GA_CUT_TENSOR_MIN) };
	double dur_ns = NAN;
	double bound = ga_roofline_bound_ns(&a, mine, &a.roofline.peaks, &cuts, &dur_ns);
	double line = ga_classifier_value(&rs, "throughput_line_pct");
	assert_true(bound > 0 && line > 0);
	assert_int_equal(mine->n_launches, 20);
	double merged = 1.0 - (bound * 100.0 / line + 5000.0 / 20) / fmax(5000.0, 3000.0);
	assert_true(fabs(launch->estimate - merged) < 1e-9);
	assert_null(finding_of(&a, aten, "launch-overhead"));
	assert_null(finding_of(&a, aten, "grid-too-small"));
	assert_null(finding_of(&a, mine, "framework-cuda-graphs"));

	/* The user's own SIMT GEMM gets no framework advice. */
	for (size_t i = 0; i < sgemm->n_findings; i++)
		assert_false(ga_str_has_prefix(a.findings[sgemm->findings[i]].rule->id,
		                               "framework-"));

	assert_true(fabs(a.library_share - library) < 1e-12);
	assert_int_equal(a.framework_first, library > 0.5);
	assert_true(a.framework_first);
	ga_analysis_free(&a);
	ga_profile_free(&p);
	ga_ruleset_free(&rs);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_shipped_patterns),
		cmocka_unit_test(test_source_skip),
		cmocka_unit_test(test_no_replay),
		cmocka_unit_test(test_module_patterns),
		cmocka_unit_test(test_no_owners_file),
		cmocka_unit_test(test_unknown_rule_owner),
		cmocka_unit_test(test_pytorch_recorded),
		cmocka_unit_test(test_user_program),
		cmocka_unit_test(test_framework_rules),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
