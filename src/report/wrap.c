/* wrap.c: prose wrapped at the terminal width, for the text report.  Words
 * are separated by blanks; GA_NBSP joins the words of a unit ("1.00 ms")
 * that wrapping keeps on one line, and is written as a blank.  Widths are
 * terminal columns (ga_text_width). */
#include "report.h"

#include <string.h>

void ga_spaces(ga_buf *b, size_t n)
{
	while (n--)
		ga_buf_putc(b, ' ');
}

typedef struct {
	ga_buf *b;
	size_t col;        /* current column */
	size_t indent;     /* of continuation lines */
	size_t width;
	int line_has_word; /* a word was written on this line already */
	int pending_indent;/* indent not yet written on this (new) line */
} wrapper;

static void put_word(wrapper *w, const char *s, size_t n)
{
	size_t ww = ga_text_width_n(s, n);
	if (w->line_has_word && w->col + 1 + ww > w->width) {
		ga_buf_putc(w->b, '\n');
		w->col = 0;
		w->line_has_word = 0;
		w->pending_indent = 1;
	}
	if (w->pending_indent) {
		ga_spaces(w->b, w->indent);
		w->col = w->indent;
		w->pending_indent = 0;
	} else if (w->line_has_word) {
		ga_buf_putc(w->b, ' ');
		w->col++;
	}
	ga_buf_putn(w->b, s, n);
	for (char *c = w->b->s + w->b->len - n; *c; c++)
		if (*c == GA_NBSP)
			*c = ' ';
	w->col += ww;
	w->line_has_word = 1;
}

/* A word longer than a whole line that holds GA_NBSP-joined parts is split at
 * them rather than run past the margin. */
static void add_word(wrapper *w, const char *s, size_t n)
{
	size_t avail = w->width > w->indent ? w->width - w->indent : 1;
	if (ga_text_width_n(s, n) > avail && memchr(s, GA_NBSP, n)) {
		size_t start = 0;
		for (size_t i = 0; i <= n; i++) {
			if (i == n || s[i] == GA_NBSP) {
				if (i > start)
					put_word(w, s + start, i - start);
				start = i + 1;
			}
		}
		return;
	}
	put_word(w, s, n);
}

/* Append text wrapped at width.  The first line continues at column col (the
 * caller has written that much already); later lines start with indent
 * spaces.  A '\n' in text is a hard break and blank lines are kept.  Always
 * ends with a newline. */
void ga_wrap(ga_buf *b, const char *text, size_t col, size_t indent, size_t width)
{
	wrapper w = { b, col, indent, width, 0, 0 };
	const char *p = text ? text : "";
	for (;;) {
		while (*p == ' ' || *p == '\t')
			p++;
		if (*p == '\0')
			break;
		if (*p == '\n') {
			ga_buf_putc(b, '\n');
			w.col = 0;
			w.line_has_word = 0;
			w.pending_indent = 1;
			p++;
			continue;
		}
		const char *e = p;
		while (*e && *e != ' ' && *e != '\t' && *e != '\n')
			e++;
		add_word(&w, p, (size_t)(e - p));
		p = e;
	}
	if (w.line_has_word || !w.pending_indent)
		ga_buf_putc(b, '\n');
}
