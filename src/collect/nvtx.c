/* nvtx.c: the NVTX ranges of each thread and the paths launches are made
 * in (nvtx.h).  Paths are the nodes of one tree: a node is a range's name
 * under its parent node, so a thread's place is one node id and counting a
 * launch by path costs no string work.  One lock guards the tree, the open
 * start/end ranges and the counts; each thread's push/pop stack is its
 * own. */
#include "nvtx.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "../util/util.h"

typedef struct {
	uint32_t parent;
	char *name;
} node;

typedef struct {
	uint32_t node;            /* this frame's path */
	uint64_t domain;
	uint64_t seq;             /* order of opening, against start/end ranges */
} frame;

typedef struct {
	uint64_t id;
	uint64_t thread;          /* the thread whose launches it encloses */
	uint64_t seq;
	char *name;
} open_range;

typedef struct {
	uint32_t *node;
	long *count, *profiled;
	size_t n, cap, last;
} slot_paths;

#define TABLE_SIZE (2 * GA_NVTX_NODES)   /* open addressing, at most half full */

static struct {
	pthread_mutex_t lock;
	unsigned gen;             /* bumped by ga_nvtx_reset: threads start over */
	int seen;
	uint64_t seq, threads;
	node *nodes;              /* [0] is the root: no range */
	size_t n_nodes;
	uint32_t *table;          /* child lookup: node ids, 0 empty */
	open_range open[GA_NVTX_OPEN];
	size_t n_open;
	slot_paths *slots;
	size_t n_slots;
} nv = {.lock = PTHREAD_MUTEX_INITIALIZER, .gen = 1};

static __thread struct {
	unsigned gen;
	uint64_t id;
	int depth;
	long lost;                /* pushes past GA_NVTX_DEPTH, not kept */
	frame f[GA_NVTX_DEPTH];
} me;

static const char *const torch_suffixes[] = {
	", seq = ", ", op_id = ", ", sizes = ", ", input_op_ids = ",
};

void ga_nvtx_name(const char *message, char *out)
{
	size_t n;

	if (!message || !*message)
		message = "(unnamed)";
	n = strlen(message);
	for (size_t i = 0; i < GA_ARRAY_LEN(torch_suffixes); i++) {
		const char *s = strstr(message, torch_suffixes[i]);
		if (s && (size_t)(s - message) < n)
			n = (size_t)(s - message);
	}
	if (n > GA_NVTX_NAME_MAX - 1)
		n = GA_NVTX_NAME_MAX - 1;
	for (size_t i = 0; i < n; i++)
		out[i] = message[i] == '/' ? '|' : message[i];
	out[n] = '\0';
	if (n == 0)
		strcpy(out, "(unnamed)");
}

static uint64_t hash_of(uint32_t parent, const char *name)
{
	uint64_t h = 1469598103934665603ull ^ parent;
	for (const unsigned char *p = (const unsigned char *)name; *p; p++)
		h = (h ^ *p) * 1099511628211ull;
	return h;
}

/* The node for name under parent, made if new; the parent itself when the
 * tree is full. */
static uint32_t child(uint32_t parent, const char *name)
{
	if (!nv.nodes) {
		nv.nodes = ga_xcalloc(GA_NVTX_NODES, sizeof(*nv.nodes));
		nv.table = ga_xcalloc(TABLE_SIZE, sizeof(*nv.table));
		nv.n_nodes = 1;
	}
	for (size_t i = hash_of(parent, name) % TABLE_SIZE;; i = (i + 1) % TABLE_SIZE) {
		uint32_t id = nv.table[i];
		if (id == 0) {
			if (nv.n_nodes >= GA_NVTX_NODES)
				return parent;
			id = (uint32_t)nv.n_nodes++;
			nv.nodes[id].parent = parent;
			nv.nodes[id].name = ga_xstrdup(name);
			nv.table[i] = id;
			return id;
		}
		if (nv.nodes[id].parent == parent && strcmp(nv.nodes[id].name, name) == 0)
			return id;
	}
}

static char *node_path(uint32_t id)
{
	uint32_t chain[GA_NVTX_DEPTH + GA_NVTX_OPEN];
	size_t n = 0;
	ga_buf b = {0};

	for (; id != 0 && n < GA_ARRAY_LEN(chain); id = nv.nodes[id].parent)
		chain[n++] = id;
	if (n == 0)
		return NULL;
	while (n-- > 0)
		ga_buf_printf(&b, "%s%s", b.len ? "/" : "", nv.nodes[chain[n]].name);
	return b.s;
}

/* The calling thread's state, started over after a reset. */
static void me_fresh(void)
{
	if (me.gen == nv.gen)
		return;
	memset(&me, 0, sizeof(me));
	me.gen = nv.gen;
	me.id = ++nv.threads;
}

void ga_nvtx_push(uint64_t domain, const char *name)
{
	pthread_mutex_lock(&nv.lock);
	me_fresh();
	nv.seen = 1;
	if (me.depth >= GA_NVTX_DEPTH) {
		me.lost++;
	} else {
		uint32_t up = me.depth ? me.f[me.depth - 1].node : 0;
		me.f[me.depth++] = (frame){child(up, name), domain, ++nv.seq};
	}
	pthread_mutex_unlock(&nv.lock);
}

void ga_nvtx_pop(uint64_t domain)
{
	int i;

	pthread_mutex_lock(&nv.lock);
	me_fresh();
	if (me.lost > 0) {
		me.lost--;
		goto out;
	}
	/* Ranges nest per domain: the pop ends this domain's latest push,
	 * and the frames above it move down under its parent. */
	for (i = me.depth - 1; i >= 0 && me.f[i].domain != domain; i--)
		;
	if (i < 0)
		goto out;
	for (int j = i; j + 1 < me.depth; j++) {
		uint32_t up = j > 0 ? me.f[j - 1].node : 0;
		frame next = me.f[j + 1];
		next.node = child(up, nv.nodes[next.node].name);
		me.f[j] = next;
	}
	me.depth--;
out:
	pthread_mutex_unlock(&nv.lock);
}

void ga_nvtx_start(uint64_t id, const char *name)
{
	pthread_mutex_lock(&nv.lock);
	me_fresh();
	nv.seen = 1;
	if (nv.n_open < GA_NVTX_OPEN)
		nv.open[nv.n_open++] = (open_range){id, me.id, ++nv.seq, ga_xstrdup(name)};
	pthread_mutex_unlock(&nv.lock);
}

void ga_nvtx_end(uint64_t id)
{
	pthread_mutex_lock(&nv.lock);
	for (size_t i = 0; i < nv.n_open; i++) {
		if (nv.open[i].id != id)
			continue;
		free(nv.open[i].name);
		memmove(&nv.open[i], &nv.open[i + 1], (nv.n_open - i - 1) * sizeof(nv.open[0]));
		nv.n_open--;
		break;
	}
	pthread_mutex_unlock(&nv.lock);
}

/* The calling thread's node: its push/pop frames and the start/end ranges
 * it started, in the order they were opened.  Lock held. */
static uint32_t here(void)
{
	uint32_t at = 0;
	size_t o = 0;
	int f = 0;

	me_fresh();
	while (o < nv.n_open && nv.open[o].thread != me.id)
		o++;
	if (o >= nv.n_open)       /* none of this thread's: its frames say it all */
		return me.depth ? me.f[me.depth - 1].node : 0;
	for (;;) {
		while (o < nv.n_open && nv.open[o].thread != me.id)
			o++;
		if (o >= nv.n_open && f >= me.depth)
			return at;
		if (f < me.depth && (o >= nv.n_open || me.f[f].seq < nv.open[o].seq))
			at = child(at, nv.nodes[me.f[f++].node].name);
		else
			at = child(at, nv.open[o++].name);
	}
}

char *ga_nvtx_path(void)
{
	char *s;

	pthread_mutex_lock(&nv.lock);
	s = node_path(here());
	pthread_mutex_unlock(&nv.lock);
	return s;
}

int ga_nvtx_seen(void)
{
	return nv.seen;
}

static slot_paths *slot_of(long slot)
{
	if (slot < 0)
		return NULL;
	if ((size_t)slot >= nv.n_slots) {
		size_t n = (size_t)slot + 1 > 2 * nv.n_slots ? (size_t)slot + 1 : 2 * nv.n_slots;
		nv.slots = ga_xrealloc(nv.slots, n * sizeof(*nv.slots));
		memset(nv.slots + nv.n_slots, 0, (n - nv.n_slots) * sizeof(*nv.slots));
		nv.n_slots = n;
	}
	return &nv.slots[slot];
}

/* The entry of node in s, added if new (a kernel past GA_NVTX_PER_KERNEL
 * paths counts the others at the root). */
static size_t slot_entry(slot_paths *s, uint32_t id)
{
	if (s->last < s->n && s->node[s->last] == id)
		return s->last;
	for (size_t i = 0; i < s->n; i++)
		if (s->node[i] == id)
			return s->last = i;
	if (s->n >= GA_NVTX_PER_KERNEL && id != 0)
		return slot_entry(s, 0);
	if (s->n == s->cap) {
		s->cap = s->cap ? 2 * s->cap : 4;
		s->node = ga_xrealloc(s->node, s->cap * sizeof(*s->node));
		s->count = ga_xrealloc(s->count, s->cap * sizeof(*s->count));
		s->profiled = ga_xrealloc(s->profiled, s->cap * sizeof(*s->profiled));
	}
	s->node[s->n] = id;
	s->count[s->n] = s->profiled[s->n] = 0;
	return s->last = s->n++;
}

void ga_nvtx_count(long slot)
{
	slot_paths *s;

	pthread_mutex_lock(&nv.lock);
	if ((s = slot_of(slot))) {
		size_t i = slot_entry(s, here());   /* may move s->count */
		s->count[i]++;
	}
	pthread_mutex_unlock(&nv.lock);
}

void ga_nvtx_profiled(long slot, const char *path)
{
	slot_paths *s;

	pthread_mutex_lock(&nv.lock);
	s = slot_of(slot);
	for (size_t i = 0; s && i < s->n; i++) {
		char *p = node_path(s->node[i]);
		int same = p ? path && strcmp(p, path) == 0 : !path;
		free(p);
		if (same) {
			s->profiled[i]++;
			break;
		}
	}
	pthread_mutex_unlock(&nv.lock);
}

void ga_nvtx_unprofiled(long slot, const ga_unprofiled *u,
                        void (*emit)(const ga_unprofiled *part))
{
	slot_paths *s;
	long rest = 0, given = 0, *part = NULL;
	size_t most = 0;

	pthread_mutex_lock(&nv.lock);
	s = slot >= 0 && (size_t)slot < nv.n_slots ? &nv.slots[slot] : NULL;
	if (s && s->n)
		part = ga_xcalloc(s->n, sizeof(*part));
	for (size_t i = 0; part && i < s->n; i++) {
		part[i] = s->count[i] > s->profiled[i] ? s->count[i] - s->profiled[i] : 0;
		rest += part[i];
		if (part[i] > part[most])
			most = i;
	}
	if (!part || rest == 0 || (s->n == 1 && s->node[0] == 0)) {
		pthread_mutex_unlock(&nv.lock);
		free(part);
		emit(u);
		return;
	}
	/* Launches measured another way (loop replay, source lines) make the
	 * counts disagree a little: share them in proportion. */
	if (rest != u->launches) {
		for (size_t i = 0; i < s->n; i++)
			given += part[i] = (long)((double)u->launches * (double)part[i] / (double)rest);
		part[most] += u->launches - given;
	}
	for (size_t i = 0; i < s->n; i++) {
		ga_unprofiled one = *u;
		if (part[i] <= 0)
			continue;
		one.launches = part[i];
		one.nvtx = node_path(s->node[i]);
		emit(&one);
		free(one.nvtx);
	}
	pthread_mutex_unlock(&nv.lock);
	free(part);
}

void ga_nvtx_reset(void)
{
	pthread_mutex_lock(&nv.lock);
	for (size_t i = 1; i < nv.n_nodes; i++)
		free(nv.nodes[i].name);
	free(nv.nodes);
	free(nv.table);
	nv.nodes = NULL;
	nv.table = NULL;
	nv.n_nodes = 0;
	for (size_t i = 0; i < nv.n_open; i++)
		free(nv.open[i].name);
	nv.n_open = 0;
	for (size_t i = 0; i < nv.n_slots; i++) {
		free(nv.slots[i].node);
		free(nv.slots[i].count);
		free(nv.slots[i].profiled);
	}
	free(nv.slots);
	nv.slots = NULL;
	nv.n_slots = 0;
	nv.seen = 0;
	nv.gen++;
	pthread_mutex_unlock(&nv.lock);
}
