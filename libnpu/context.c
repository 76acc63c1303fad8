// SPDX-License-Identifier: MIT
/*
 * Contexts: the backend, its devices and the visible subset of them.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "npu_common.h"

void *npu_object_alloc(size_t size, size_t priv_size)
{
	return calloc(1, size + priv_size);
}

/*
 * Options grow at the end; struct_size says how much the caller knows.
 * A caller built against a newer header may pass a larger struct, which is
 * fine as long as the fields this library does not know are zero (the
 * rule of the kernel's copy_struct_from_user()).
 */
static int copy_options(const struct npu_context_options *opts,
			struct npu_context_options *out)
{
	memset(out, 0, sizeof(*out));
	if (!opts)
		return 0;
	if (opts->struct_size < sizeof(opts->struct_size))
		return npu_fail(-EINVAL,
				"npu_context_options.struct_size %zu is too small",
				opts->struct_size);

	size_t known = sizeof(*out);

	if (opts->struct_size > known) {
		const unsigned char *extra = (const unsigned char *)opts + known;

		for (size_t i = 0; i < opts->struct_size - known; i++)
			if (extra[i])
				return npu_fail(-E2BIG,
						"npu_context_options has unknown non-zero fields past byte %zu",
						known);
	}
	memcpy(out, opts, opts->struct_size < known ? opts->struct_size : known);
	out->struct_size = known;
	return 0;
}

/*
 * The emulated devices a container was given by its CDI spec (rbln-cdi):
 * one RBLN_DEVICE_N=1 variable per device, so that the edits of several
 * CDI devices merge without overwriting each other. Returns them as an
 * RBLN_DEVICES list in @list ("" when there are none), or -EINVAL naming
 * a malformed variable.
 */
static int cdi_device_list(unsigned int hw_count, char *list, size_t size)
{
	static const char prefix[] = "RBLN_DEVICE_";
	size_t used = 0;

	list[0] = '\0';
	for (unsigned int i = 0; i < hw_count; i++) {
		char name[32];
		const char *val;

		snprintf(name, sizeof(name), "%s%u", prefix, i);
		val = getenv(name);
		if (!val)
			continue;
		if (strcmp(val, "1") != 0)
			return npu_fail(-EINVAL, "%s=%s: must be 1 (set by the container's CDI spec)",
					name, val);
		used += (size_t)snprintf(list + used, size - used, "%s%u", used ? "," : "", i);
		if (used >= size)
			return npu_fail(-EINVAL, "too many RBLN_DEVICE_N variables");
	}
	for (char **env = environ; *env; env++) {
		const char *p = *env + sizeof(prefix) - 1;
		char *end;
		unsigned long n;

		if (strncmp(*env, prefix, sizeof(prefix) - 1) != 0)
			continue;
		n = strtoul(p, &end, 10);
		if (end == p || *end != '=' || n >= hw_count)
			return npu_fail(-EINVAL, "%.*s: no such emulated device (there are %u)",
					(int)(strchr(*env, '=') ? strchr(*env, '=') - *env
					      : (long)strlen(*env)), *env, hw_count);
	}
	return 0;
}

static int select_visible(npu_context *ctx, const char *devices)
{
	const char *source = "devices option";
	char cdi_list[1024];
	int err;

	if (!devices) {
		devices = getenv("RBLN_DEVICES");
		source = "RBLN_DEVICES";
	}
	if (!devices && ctx->kind == NPU_BACKEND_EMUL) {
		err = cdi_device_list(ctx->hw_count, cdi_list, sizeof(cdi_list));
		if (err)
			return err;
		if (cdi_list[0]) {
			devices = cdi_list;
			source = "RBLN_DEVICE_N variables";
		}
	}
	if (devices)
		return npu_parse_device_list(devices, source, ctx->hw_count,
					     &ctx->visible, &ctx->visible_count);

	ctx->visible = calloc(ctx->hw_count ? ctx->hw_count : 1,
			      sizeof(*ctx->visible));
	if (!ctx->visible)
		return npu_fail(-ENOMEM, NULL);
	for (unsigned int i = 0; i < ctx->hw_count; i++)
		ctx->visible[i] = i;
	ctx->visible_count = ctx->hw_count;
	return 0;
}

int npu_context_create(const struct npu_context_options *opts,
		       npu_context **out)
{
	struct npu_context_options o;
	int err;

	if (!out)
		return npu_fail(-EINVAL, "npu_context_create: out is NULL");
	*out = NULL;
	err = copy_options(opts, &o);
	if (err)
		return err;

	npu_context *ctx = calloc(1, sizeof(*ctx));

	if (!ctx)
		return npu_fail(-ENOMEM, NULL);
	atomic_init(&ctx->refs, 1);
	err = npu_backend_choose(o.backend, &ctx->ops);
	if (err)
		goto fail_free;
	ctx->kind = ctx->ops->kind;
	err = ctx->ops->context_init(ctx, &o);
	if (err)
		goto fail_free;
	err = select_visible(ctx, o.devices);
	if (err)
		goto fail_fini;
	*out = ctx;
	return 0;

fail_fini:
	ctx->ops->context_fini(ctx);
fail_free:
	free(ctx);
	return err;
}

void npu_context_get(npu_context *ctx)
{
	atomic_fetch_add_explicit(&ctx->refs, 1, memory_order_relaxed);
}

void npu_context_put(npu_context *ctx)
{
	if (atomic_fetch_sub_explicit(&ctx->refs, 1, memory_order_acq_rel) != 1)
		return;
	ctx->ops->context_fini(ctx);
	free(ctx->visible);
	free(ctx);
}

void npu_context_destroy(npu_context *ctx)
{
	if (ctx)
		npu_context_put(ctx);
}

enum npu_backend npu_context_backend(const npu_context *ctx)
{
	return ctx ? ctx->kind : NPU_BACKEND_AUTO;
}

unsigned int npu_device_count(const npu_context *ctx)
{
	return ctx ? ctx->visible_count : 0;
}
