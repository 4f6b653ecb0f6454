/* nvtxcb.h: CUPTI's NVTX callbacks in the injection library (nvtx.c keeps
 * the ranges). */
#ifndef GA_NVTXCB_H
#define GA_NVTXCB_H

#include <cupti.h>

#include "collect.h"

void ga_nvtx_enable(CUpti_SubscriberHandle sub);
void ga_nvtx_callback(CUpti_CallbackId cbid, const void *data);
/* The launches of repeat slot `slot` left unprofiled, a record per
 * NVTX path. */
void ga_nvtx_rec_unprofiled(long slot, const ga_unprofiled *u);

#endif
