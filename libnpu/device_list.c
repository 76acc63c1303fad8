// SPDX-License-Identifier: MIT
/*
 * RBLN_DEVICES: which devices a process sees, like CUDA_VISIBLE_DEVICES.
 *
 * Grammar: list := item (',' item)*, item := index | index '-' index,
 * blanks allowed around every token. Visible devices are numbered from 0
 * in the order given, so "3,1" makes device 3 visible index 0. Mistakes
 * are errors rather than silently ignored entries: a typo in a deployment
 * must not quietly put two jobs on the same device.
 */
#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>

#include "npu_common.h"

struct list_parser {
	const char *spec;
	const char *pos;
	const char *source;
	unsigned int hw_count;
};

static void skip_blanks(struct list_parser *p)
{
	while (isspace((unsigned char)*p->pos))
		p->pos++;
}

static size_t column(const struct list_parser *p)
{
	return (size_t)(p->pos - p->spec);
}

static int parse_index(struct list_parser *p, unsigned int *index)
{
	skip_blanks(p);
	if (!isdigit((unsigned char)*p->pos))
		return npu_fail(-EINVAL,
				"%s=\"%s\": expected a device index at offset %zu",
				p->source, p->spec, column(p));

	unsigned long value = 0;
	const char *start = p->pos;

	while (isdigit((unsigned char)*p->pos)) {
		/* Saturate: any overflowing value is out of range anyway. */
		if (value < 1000000)
			value = value * 10 + (unsigned long)(*p->pos - '0');
		p->pos++;
	}
	if (value >= p->hw_count)
		return npu_fail(-EINVAL,
				"%s=\"%s\": device %.*s out of range (%u devices: 0-%u)",
				p->source, p->spec, (int)(p->pos - start), start,
				p->hw_count, p->hw_count ? p->hw_count - 1 : 0);
	*index = (unsigned int)value;
	skip_blanks(p);
	return 0;
}

static int add_index(struct list_parser *p, unsigned int index, bool *seen,
		     unsigned int *out, unsigned int *count)
{
	if (seen[index])
		return npu_fail(-EINVAL, "%s=\"%s\": device %u listed twice",
				p->source, p->spec, index);
	seen[index] = true;
	out[(*count)++] = index;
	return 0;
}

static int parse_item(struct list_parser *p, bool *seen, unsigned int *out,
		      unsigned int *count)
{
	unsigned int first, last;
	int err = parse_index(p, &first);

	if (err)
		return err;
	if (*p->pos != '-')
		return add_index(p, first, seen, out, count);
	p->pos++;
	err = parse_index(p, &last);
	if (err)
		return err;
	if (last < first)
		return npu_fail(-EINVAL, "%s=\"%s\": range %u-%u is descending",
				p->source, p->spec, first, last);
	for (unsigned int i = first; i <= last; i++) {
		err = add_index(p, i, seen, out, count);
		if (err)
			return err;
	}
	return 0;
}

int npu_parse_device_list(const char *spec, const char *source,
			  unsigned int hw_count, unsigned int **out,
			  unsigned int *count)
{
	struct list_parser p = {
		.spec = spec, .pos = spec, .source = source, .hw_count = hw_count,
	};
	/* Each device can be listed at most once, so hw_count bounds the list. */
	unsigned int *list = calloc(hw_count ? hw_count : 1, sizeof(*list));
	bool *seen = calloc(hw_count ? hw_count : 1, sizeof(*seen));
	unsigned int n = 0;
	int err = 0;

	if (!list || !seen) {
		err = npu_fail(-ENOMEM, NULL);
		goto out;
	}
	skip_blanks(&p);
	while (*p.pos) {
		err = parse_item(&p, seen, list, &n);
		if (err)
			goto out;
		if (*p.pos == '\0')
			break;
		if (*p.pos != ',') {
			err = npu_fail(-EINVAL,
				       "%s=\"%s\": unexpected '%c' at offset %zu",
				       source, spec, *p.pos, column(&p));
			goto out;
		}
		p.pos++;
		skip_blanks(&p);
		if (*p.pos == '\0') {
			err = npu_fail(-EINVAL, "%s=\"%s\": trailing ','",
				       source, spec);
			goto out;
		}
	}
out:
	free(seen);
	if (err) {
		free(list);
		return err;
	}
	*out = list;
	*count = n;
	return 0;
}
