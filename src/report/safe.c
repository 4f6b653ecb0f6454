/* safe.c: report text that cannot drive a terminal.
 *
 * Kernel names, notes, file names, source text and device names come from
 * the profile, which may be someone else's file: a name holding ESC [2J, a
 * carriage return or U+202E RIGHT-TO-LEFT OVERRIDE would clear the screen,
 * overwrite a line or reorder it when the report is printed.  Every
 * human-readable report passes through ga_report_put_safe on its way out, so
 * each such character is shown as text (\x1b, \u202e) instead of acting;
 * the report's own layout (newline, tab) and, with colour, its own SGR
 * colour sequences are kept.  JSON escapes controls itself.
 *
 * Made visible: C0 controls (U+0000..U+001F but tab and newline), DEL,
 * C1 controls (U+0080..U+009F), the bidirectional embeddings, overrides and
 * isolates (U+202A..U+202E, U+2066..U+2069; Unicode UAX #9), and bytes that
 * are not UTF-8 (a lone 0x9b is CSI on some terminals). */
#include "report.h"

#include <string.h>

/* The length of the UTF-8 sequence at s (at most n bytes), its code point
 * in *cp; 0 when the bytes are not UTF-8. */
static size_t utf8_decode(const unsigned char *s, size_t n, unsigned *cp)
{
	size_t len, i;

	if (s[0] < 0x80) {
		*cp = s[0];
		return 1;
	}
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		len = 2, *cp = s[0] & 0x1f;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		len = 3, *cp = s[0] & 0x0f;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		len = 4, *cp = s[0] & 0x07;
	else
		return 0;
	if (len > n)
		return 0;
	for (i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		*cp = (*cp << 6) | (s[i] & 0x3f);
	}
	/* overlong forms, surrogates, beyond U+10FFFF */
	if ((len == 3 && *cp < 0x800) || (len == 4 && (*cp < 0x10000 || *cp > 0x10ffff)) ||
	    (*cp >= 0xd800 && *cp <= 0xdfff))
		return 0;
	return len;
}

static int is_unsafe(unsigned cp, int keep_layout)
{
	if (cp == '\n' || cp == '\t')
		return !keep_layout;
	return cp < 0x20 || cp == 0x7f || (cp >= 0x80 && cp <= 0x9f) ||
	       (cp >= 0x202a && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069);
}

/* An SGR sequence as the text reporter writes for colour: ESC [ digits and
 * semicolons m.  Its length, or 0. */
static size_t sgr_len(const char *s, size_t n)
{
	size_t i = 2;

	if (n < 3 || s[0] != '\033' || s[1] != '[')
		return 0;
	while (i < n && i < 16 && ((s[i] >= '0' && s[i] <= '9') || s[i] == ';'))
		i++;
	return i < n && s[i] == 'm' ? i + 1 : 0;
}

static void escape_n(ga_buf *b, const char *s, size_t n, int keep_layout, int keep_sgr)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t i = 0, run = 0;

	while (i < n) {
		unsigned cp;
		size_t len = utf8_decode(u + i, n - i, &cp), sgr;

		if (len && !is_unsafe(cp, keep_layout)) {
			i += len;
			continue;
		}
		ga_buf_putn(b, s + run, i - run);
		if (keep_sgr && (sgr = sgr_len(s + i, n - i)) != 0) {
			ga_buf_putn(b, s + i, sgr);
			len = sgr;
		} else if (!len) {
			ga_buf_printf(b, "\\x%02x", u[i]);
			len = 1;
		} else if (cp < 0x80) {
			ga_buf_printf(b, "\\x%02x", cp);
		} else {
			ga_buf_printf(b, "\\u%04x", cp);
		}
		i += len;
		run = i;
	}
	ga_buf_putn(b, s + run, n - run);
}

char *ga_report_safe(const char *s)
{
	ga_buf b = {0};

	escape_n(&b, s ? s : "", s ? strlen(s) : 0, 0, 0);
	return ga_buf_take(&b);
}

int ga_report_put_safe(FILE *out, const char *s, size_t n, int keep_sgr)
{
	ga_buf b = {0};
	int rc = 0;

	escape_n(&b, s, n, 1, keep_sgr);
	if (b.len && fwrite(b.s, 1, b.len, out) != b.len)
		rc = -1;
	ga_buf_free(&b);
	return rc;
}
