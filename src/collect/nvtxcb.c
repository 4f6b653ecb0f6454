/* nvtxcb.c: CUPTI's NVTX callbacks into the range stacks of nvtx.c.
 *
 * NVTX (v2 and the header-only v3 that PyTorch builds in) sends its calls
 * to a tool only when the library named by NVTX_INJECTION64_PATH exports
 * InitializeInjectionNvtx2.  The launcher names this library there (it is
 * CUDA's injection library already), and InitializeInjectionNvtx2 below
 * hands NVTX over to CUPTI's own, so CUPTI delivers the calls as
 * CUPTI_CB_DOMAIN_NVTX callbacks to our subscriber (CUPTI documentation,
 * "NVTX callbacks"; its nvtx sample sets NVTX_INJECTION64_PATH to libcupti).
 * Whichever comes first, NVTX's first call or CUDA's cuInit, loads the
 * library; both name the same file.  (NVTX's dlsym on this library would
 * also find CUPTI's own InitializeInjectionNvtx2 among its dependencies;
 * the export says so instead of leaning on that lookup order.) */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#include "nvtx.h"
#include "nvtxcb.h"
#include "writer.h"

#include <generated_nvtx_meta.h>

#define GA_EXPORT __attribute__((visibility("default")))

#define DOMAINS_MAX 64
#define STRINGS_MAX 4096

/* Names of NVTX domains and registered strings, by handle. */
typedef struct {
	const void *handle;
	char *name;
} handle_name;

static struct {
	pthread_mutex_t lock;
	handle_name domains[DOMAINS_MAX], strings[STRINGS_MAX];
	size_t n_domains, n_strings;
} names = {.lock = PTHREAD_MUTEX_INITIALIZER};

GA_EXPORT int InitializeInjectionNvtx2(const void *get_export_table)
{
	typedef int (*init_fn)(const void *);
	Dl_info di;
	void *cupti;
	init_fn init;

	if (!dladdr((void *)cuptiSubscribe, &di) || !di.dli_fname ||
	    !(cupti = dlopen(di.dli_fname, RTLD_NOW | RTLD_NOLOAD)))
		return 0;
	init = (init_fn)(uintptr_t)dlsym(cupti, "InitializeInjectionNvtx2");
	return init ? init(get_export_table) : 0;
}

static void remember(handle_name *t, size_t *n, size_t max, const void *handle, const char *s)
{
	pthread_mutex_lock(&names.lock);
	if (handle && s && *n < max) {
		t[*n].handle = handle;
		t[*n].name = ga_xstrndup(s, GA_NVTX_NAME_MAX - 1);
		(*n)++;
	}
	pthread_mutex_unlock(&names.lock);
}

/* Copied into out (GA_NVTX_NAME_MAX bytes); "" when unknown. */
static void recall(const handle_name *t, size_t n, const void *handle, char *out)
{
	out[0] = '\0';
	pthread_mutex_lock(&names.lock);
	for (size_t i = 0; i < n; i++)
		if (t[i].handle == handle) {
			strcpy(out, t[i].name);
			break;
		}
	pthread_mutex_unlock(&names.lock);
}

static void from_wide(const wchar_t *w, char *out)
{
	size_t n = 0;
	for (; w && *w && n < GA_NVTX_NAME_MAX - 1; w++)
		out[n++] = *w > 0 && *w < 128 ? (char)*w : '?';
	out[n] = '\0';
}

/* A range's element name from its message and domain: "NAME", or
 * "[DOMAIN] NAME" outside the default domain. */
static void element(nvtxDomainHandle_t domain, const nvtxEventAttributes_t *a, const char *ascii,
                    const wchar_t *wide, char *out)
{
	char msg[GA_NVTX_NAME_MAX], dom[GA_NVTX_NAME_MAX], clean[GA_NVTX_NAME_MAX];

	msg[0] = '\0';
	if (a && a->messageType == NVTX_MESSAGE_TYPE_ASCII)
		ascii = a->message.ascii;
	else if (a && a->messageType == NVTX_MESSAGE_TYPE_UNICODE)
		wide = a->message.unicode;
	else if (a && a->messageType == NVTX_MESSAGE_TYPE_REGISTERED)
		recall(names.strings, names.n_strings, a->message.registered, msg);
	if (ascii)
		snprintf(msg, sizeof(msg), "%s", ascii);
	else if (wide)
		from_wide(wide, msg);
	ga_nvtx_name(msg, clean);
	dom[0] = '\0';
	if (domain)
		recall(names.domains, names.n_domains, domain, dom);
	if (dom[0])
		/* 3 + 60 + 96 bytes: within GA_NVTX_NAME_MAX with its NUL. */
		snprintf(out, GA_NVTX_NAME_MAX, "[%.60s] %.96s", dom, clean);
	else
		snprintf(out, GA_NVTX_NAME_MAX, "%s", clean);
}

static uint64_t range_id(const CUpti_NvtxData *d)
{
	return d->functionReturnValue ? *(const nvtxRangeId_t *)d->functionReturnValue : 0;
}

static void on_push(CUpti_CallbackId cbid, const void *p)
{
	char name[GA_NVTX_NAME_MAX];

	if (cbid == CUPTI_CBID_NVTX_nvtxRangePushA)
		element(NULL, NULL, ((const nvtxRangePushA_params *)p)->message, NULL, name);
	else if (cbid == CUPTI_CBID_NVTX_nvtxRangePushW)
		element(NULL, NULL, NULL, ((const nvtxRangePushW_params *)p)->message, name);
	else if (cbid == CUPTI_CBID_NVTX_nvtxRangePushEx)
		element(NULL, ((const nvtxRangePushEx_params *)p)->eventAttrib, NULL, NULL, name);
	else {
		const nvtxDomainRangePushEx_params *q = p;
		element(q->domain, q->core.eventAttrib, NULL, NULL, name);
		ga_nvtx_push((uint64_t)(uintptr_t)q->domain, name);
		return;
	}
	ga_nvtx_push(0, name);
}

static void on_start(CUpti_CallbackId cbid, const CUpti_NvtxData *d)
{
	const void *p = d->functionParams;
	char name[GA_NVTX_NAME_MAX];

	if (cbid == CUPTI_CBID_NVTX_nvtxRangeStartA)
		element(NULL, NULL, ((const nvtxRangeStartA_params *)p)->message, NULL, name);
	else if (cbid == CUPTI_CBID_NVTX_nvtxRangeStartW)
		element(NULL, NULL, NULL, ((const nvtxRangeStartW_params *)p)->message, name);
	else if (cbid == CUPTI_CBID_NVTX_nvtxRangeStartEx)
		element(NULL, ((const nvtxRangeStartEx_params *)p)->eventAttrib, NULL, NULL, name);
	else {
		const nvtxDomainRangeStartEx_params *q = p;
		element(q->domain, q->core.eventAttrib, NULL, NULL, name);
	}
	/* No id (CUPTI gave no return value): the range could never end. */
	if (range_id(d))
		ga_nvtx_start(range_id(d), name);
}

void ga_nvtx_callback(CUpti_CallbackId cbid, const void *data)
{
	const CUpti_NvtxData *d = data;
	const void *p = d->functionParams;

	if (!p)
		return;
	switch (cbid) {
	case CUPTI_CBID_NVTX_nvtxRangePushA:
	case CUPTI_CBID_NVTX_nvtxRangePushW:
	case CUPTI_CBID_NVTX_nvtxRangePushEx:
	case CUPTI_CBID_NVTX_nvtxDomainRangePushEx:
		on_push(cbid, p);
		break;
	case CUPTI_CBID_NVTX_nvtxRangePop:
		ga_nvtx_pop(0);
		break;
	case CUPTI_CBID_NVTX_nvtxDomainRangePop:
		ga_nvtx_pop((uint64_t)(uintptr_t)((const nvtxDomainRangePop_params *)p)->domain);
		break;
	case CUPTI_CBID_NVTX_nvtxRangeStartA:
	case CUPTI_CBID_NVTX_nvtxRangeStartW:
	case CUPTI_CBID_NVTX_nvtxRangeStartEx:
	case CUPTI_CBID_NVTX_nvtxDomainRangeStartEx:
		on_start(cbid, d);
		break;
	case CUPTI_CBID_NVTX_nvtxRangeEnd:
		ga_nvtx_end(((const nvtxRangeEnd_params *)p)->id);
		break;
	case CUPTI_CBID_NVTX_nvtxDomainRangeEnd:
		ga_nvtx_end(((const nvtxDomainRangeEnd_params *)p)->core.id);
		break;
	case CUPTI_CBID_NVTX_nvtxDomainCreateA:
		if (d->functionReturnValue)
			remember(names.domains, &names.n_domains, DOMAINS_MAX,
			         *(const nvtxDomainHandle_t *)d->functionReturnValue,
			         ((const nvtxDomainCreateA_params *)p)->name);
		break;
	case CUPTI_CBID_NVTX_nvtxDomainRegisterStringA:
		if (d->functionReturnValue)
			remember(names.strings, &names.n_strings, STRINGS_MAX,
			         *(const nvtxStringHandle_t *)d->functionReturnValue,
			         ((const nvtxDomainRegisterStringA_params *)p)->string);
		break;
	default:
		break;
	}
}

static const CUpti_CallbackId nvtx_cbids[] = {
	CUPTI_CBID_NVTX_nvtxRangePushA, CUPTI_CBID_NVTX_nvtxRangePushW,
	CUPTI_CBID_NVTX_nvtxRangePushEx, CUPTI_CBID_NVTX_nvtxDomainRangePushEx,
	CUPTI_CBID_NVTX_nvtxRangePop, CUPTI_CBID_NVTX_nvtxDomainRangePop,
	CUPTI_CBID_NVTX_nvtxRangeStartA, CUPTI_CBID_NVTX_nvtxRangeStartW,
	CUPTI_CBID_NVTX_nvtxRangeStartEx, CUPTI_CBID_NVTX_nvtxDomainRangeStartEx,
	CUPTI_CBID_NVTX_nvtxRangeEnd, CUPTI_CBID_NVTX_nvtxDomainRangeEnd,
	CUPTI_CBID_NVTX_nvtxDomainCreateA, CUPTI_CBID_NVTX_nvtxDomainRegisterStringA,
};

void ga_nvtx_enable(CUpti_SubscriberHandle sub)
{
	for (size_t i = 0; i < GA_ARRAY_LEN(nvtx_cbids); i++)
		cuptiEnableCallback(1, sub, CUPTI_CB_DOMAIN_NVTX, nvtx_cbids[i]);
}

/* The writer's record, for ga_nvtx_unprofiled. */
static void emit_unprofiled(const ga_unprofiled *u)
{
	ga_rec_unprofiled(u);
}

void ga_nvtx_rec_unprofiled(long slot, const ga_unprofiled *u)
{
	ga_nvtx_unprofiled(slot, u, emit_unprofiled);
}
