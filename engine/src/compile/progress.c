// SPDX-License-Identifier: MIT
#include "compile/progress.h"

#include <stdarg.h>
#include <string.h>

#define BAR_WIDTH 30

static void draw(struct progress *p, bool force)
{
	int pct = p->total ? (int)(p->done * 100 / p->total) : 100;
	int fill = pct * BAR_WIDTH / 100, i;

	if (!p->out || (!force && pct == p->drawn))
		return;
	p->drawn = pct;
	fputs("\r[", p->out);
	for (i = 0; i < BAR_WIDTH; i++)
		fputc(i < fill ? '=' : i == fill ? '>' : ' ', p->out);
	/* Pad the label so a shorter one overwrites a longer one. */
	fprintf(p->out, "] %3d%% %-40.40s", pct, p->what);
	fflush(p->out);
}

void rbln_progress_init(struct progress *p, FILE *out, uint64_t total)
{
	memset(p, 0, sizeof(*p));
	p->out = out;
	p->total = total;
	p->drawn = -1;
}

void rbln_progress_label(struct progress *p, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(p->what, sizeof(p->what), fmt, ap);
	va_end(ap);
	draw(p, true);
}

void rbln_progress_add(struct progress *p, uint64_t units)
{
	p->done += units;
	if (p->done > p->total)
		p->done = p->total;
	draw(p, false);
}

void rbln_progress_end(struct progress *p)
{
	if (!p->out)
		return;
	p->done = p->total;
	snprintf(p->what, sizeof(p->what), "done");
	draw(p, true);
	fputc('\n', p->out);
	fflush(p->out);
}
