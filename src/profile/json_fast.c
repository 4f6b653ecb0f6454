/* json_fast.c: see json_fast.h.  Every function returns NULL (or -1) to
 * mean "not handled here": the caller falls back to json_loadb. */
#include "json_fast.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* Deeper than any profile; jansson's own limit (2048) is left to jansson. */
#define FAST_MAX_DEPTH 64

typedef struct {
	const char *p, *end;
	int depth;
} reader;

static void skip_ws(reader *r)
{
	while (r->p < r->end && (*r->p == ' ' || *r->p == '\n' || *r->p == '\t' || *r->p == '\r'))
		r->p++;
}

static int is_digit(const reader *r, const char *q)
{
	return q < r->end && *q >= '0' && *q <= '9';
}

/* A string of printable ASCII without escapes: jansson would keep its bytes
 * as they are (no decoding, nothing to validate as UTF-8). */
static int plain_string(reader *r, const char **s, size_t *n)
{
	const char *a;

	if (r->p >= r->end || *r->p != '"')
		return -1;
	a = ++r->p;
	for (; r->p < r->end; r->p++) {
		unsigned char c = (unsigned char)*r->p;
		if (c == '"') {
			*s = a;
			*n = (size_t)(r->p - a);
			r->p++;
			return 0;
		}
		if (c == '\\' || c < 0x20 || c >= 0x7f)
			return -1;
	}
	return -1;
}

/* A JSON number, converted as jansson converts it: no fraction and no
 * exponent is an integer (strtoll), otherwise a real (strtod).  Declines
 * integers that might not fit and any conversion that sets errno (jansson
 * reports overflow as an error) or stops early (a locale whose decimal
 * point is not '.'). */
static json_t *number(reader *r)
{
	const char *a = r->p, *q = a;
	char buf[64], *e;
	int real = 0;
	size_t n;

	if (q < r->end && *q == '-')
		q++;
	if (!is_digit(r, q))
		return NULL;
	if (*q == '0')
		q++;
	else
		while (is_digit(r, q))
			q++;
	if (q < r->end && *q == '.') {
		real = 1;
		q++;
		if (!is_digit(r, q))
			return NULL;
		while (is_digit(r, q))
			q++;
	}
	if (q < r->end && (*q == 'e' || *q == 'E')) {
		real = 1;
		q++;
		if (q < r->end && (*q == '+' || *q == '-'))
			q++;
		if (!is_digit(r, q))
			return NULL;
		while (is_digit(r, q))
			q++;
	}
	n = (size_t)(q - a);
	if (n >= sizeof(buf) || (!real && n > 18))
		return NULL;
	memcpy(buf, a, n);
	buf[n] = '\0';
	errno = 0;
	if (real) {
		double d = strtod(buf, &e);
		if (e != buf + n || errno != 0)
			return NULL;
		r->p = q;
		return json_real(d);
	}
	long long v = strtoll(buf, &e, 10);
	if (e != buf + n || errno != 0)
		return NULL;
	r->p = q;
	return json_integer(v);
}

static json_t *value(reader *r);

/* After an element or member: 1 at ',' (another one follows), 0 at close
 * (the container ends), -1 at anything else. */
static int after_item(reader *r, char close)
{
	skip_ws(r);
	if (r->p < r->end && *r->p == ',') {
		r->p++;
		skip_ws(r);
		return 1;
	}
	if (r->p < r->end && *r->p == close) {
		r->p++;
		return 0;
	}
	return -1;
}

/* Past the opening bracket: 0 when close follows at once (empty). */
static int open_container(reader *r, char close)
{
	r->p++;
	skip_ws(r);
	if (r->p < r->end && *r->p == close) {
		r->p++;
		return 0;
	}
	return 1;
}

static json_t *object(reader *r)
{
	json_t *o = json_object();
	char key[256];

	if (!open_container(r, '}'))
		return o;
	for (;;) {
		const char *k;
		size_t kn;
		json_t *v;

		if (plain_string(r, &k, &kn) != 0 || kn >= sizeof(key))
			break;
		memcpy(key, k, kn);
		key[kn] = '\0';
		skip_ws(r);
		if (r->p >= r->end || *r->p != ':')
			break;
		r->p++;
		skip_ws(r);
		/* A repeated key is an error under JSON_REJECT_DUPLICATES. */
		if (json_object_get(o, key) || !(v = value(r)))
			break;
		if (json_object_set_new_nocheck(o, key, v) != 0)
			break;
		int more = after_item(r, '}');
		if (more == 0)
			return o;
		if (more < 0)
			break;
	}
	json_decref(o);
	return NULL;
}

static json_t *array(reader *r)
{
	json_t *a = json_array();

	if (!open_container(r, ']'))
		return a;
	for (;;) {
		json_t *v = value(r);

		if (!v || json_array_append_new(a, v) != 0)
			break;
		int more = after_item(r, ']');
		if (more == 0)
			return a;
		if (more < 0)
			break;
	}
	json_decref(a);
	return NULL;
}

static json_t *literal(reader *r, const char *word, json_t *v)
{
	size_t n = strlen(word);

	if ((size_t)(r->end - r->p) < n || memcmp(r->p, word, n) != 0)
		return NULL;
	r->p += n;
	return v;
}

static json_t *value(reader *r)
{
	json_t *v = NULL;
	const char *s;
	size_t n;

	if (r->p >= r->end)
		return NULL;
	switch (*r->p) {
	case '{':
	case '[':
		if (r->depth >= FAST_MAX_DEPTH)
			return NULL;
		r->depth++;
		v = *r->p == '{' ? object(r) : array(r);
		r->depth--;
		return v;
	case '"':
		return plain_string(r, &s, &n) == 0 ? json_stringn_nocheck(s, n) : NULL;
	case 't':
		return literal(r, "true", json_true());
	case 'f':
		return literal(r, "false", json_false());
	case 'n':
		return literal(r, "null", json_null());
	default:
		return number(r);
	}
}

json_t *ga_json_fast_load(const char *text, size_t len)
{
	reader r = {text, text + len, 0};
	json_t *root;

	skip_ws(&r);
	if (r.p >= r.end || *r.p != '{')
		return NULL;
	root = value(&r);
	if (!root)
		return NULL;
	skip_ws(&r);
	if (r.p != r.end) {  /* something after the object */
		json_decref(root);
		return NULL;
	}
	return root;
}
