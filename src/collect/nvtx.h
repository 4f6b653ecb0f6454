/* nvtx.h: the NVTX ranges open on each thread of the profiled program, so
 * that every launch can be put in its operation (the innermost range) and
 * the ranges around it.  Plain C with no CUDA or CUPTI header, like
 * policy.c: nvtxcb.c turns CUPTI's NVTX callbacks into these calls and
 * tests/unit/test_nvtx.c plays range sequences through them.
 *
 * Push/pop ranges nest per thread and per domain; start/end ranges (ended
 * by id, from any thread) enclose the launches of the thread that started
 * them.  A launch's path lists the ranges of its thread outermost first,
 * joined by '/'.  Memory is bounded whatever the program does: GA_NVTX_DEPTH
 * ranges a thread (deeper ones are counted, not named), GA_NVTX_NODES
 * distinct paths (a new path past it is its parent's), GA_NVTX_OPEN
 * start/end ranges open at once, GA_NVTX_PER_KERNEL paths a kernel. */
#ifndef GA_NVTX_H
#define GA_NVTX_H

#include <stddef.h>
#include <stdint.h>

#include "../profile/profile.h"

#define GA_NVTX_DEPTH      32
#define GA_NVTX_NODES      16384
#define GA_NVTX_OPEN       256
#define GA_NVTX_PER_KERNEL 256
#define GA_NVTX_NAME_MAX   160   /* bytes of one range's name */

/* A range's name as a path element: PyTorch's emit_nvtx() suffixes
 * (", seq = N", ", op_id = N", ", sizes = [...]", ", input_op_ids = ...")
 * cut off, a '/' written '|', at most GA_NVTX_NAME_MAX - 1 bytes; NULL or
 * empty: "(unnamed)".  out has GA_NVTX_NAME_MAX bytes. */
void ga_nvtx_name(const char *message, char *out);

/* Ranges of the calling thread.  domain 0 is NVTX's default domain; name
 * is taken as it is (ga_nvtx_name it first). */
void ga_nvtx_push(uint64_t domain, const char *name);
void ga_nvtx_pop(uint64_t domain);
void ga_nvtx_start(uint64_t id, const char *name);
void ga_nvtx_end(uint64_t id);

/* The calling thread's path (malloc'd), or NULL outside any range. */
char *ga_nvtx_path(void);
/* 1 once any range was opened in this process. */
int ga_nvtx_seen(void);

/* Launches per kernel and path, to split the launches left unprofiled:
 * a launch of repeat slot `slot` (policy.h) made now on this thread, and
 * one of its profiled launches, made in path (NULL: none). */
void ga_nvtx_count(long slot);
void ga_nvtx_profiled(long slot, const char *path);

/* Split *u (u->launches of slot's kernel left unprofiled) by path: emit
 * is called once per path with a copy of *u whose launches and nvtx are
 * that path's.  Each path gets the launches it saw less those profiled
 * there; when those do not add up to u->launches (launches measured some
 * other way), the launches are shared in their proportion.  A kernel seen
 * in no range: *u unchanged. */
void ga_nvtx_unprofiled(long slot, const ga_unprofiled *u,
                        void (*emit)(const ga_unprofiled *part));

/* Forget everything (the tests; a forked child keeps its parent's). */
void ga_nvtx_reset(void);

#endif
