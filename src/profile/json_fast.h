/* json_fast.h: a fast path for reading a JSON object with jansson's data
 * model.  jansson's own parser reads one character at a time through a
 * callback and was most of the time of importing a large profile (about
 * 0.45 s of 1.1 s for 10,000 kernels).  Profiles are plain JSON: ASCII
 * strings without escapes, ordinary numbers.  This reader handles exactly
 * that and builds the same tree as json_loadb(text, len,
 * JSON_REJECT_DUPLICATES) would: same values, same types (integer or real
 * by the same rule), same key order.  Anything else (an escape, a byte
 * outside printable ASCII in a string, a number it is not sure to convert
 * the same way, a repeated key, deep nesting, any syntax error) makes it
 * give up, and the caller parses with jansson, which then reports the error
 * with its line and column.  So the fast path changes speed, never a result
 * or a message. */
#ifndef GA_JSON_FAST_H
#define GA_JSON_FAST_H

#include <stddef.h>

#include <jansson.h>

/* The object in text[0..len), a new reference; NULL when the fast path
 * declines (not an error: parse with json_loadb then). */
json_t *ga_json_fast_load(const char *text, size_t len);

#endif
