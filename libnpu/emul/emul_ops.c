// SPDX-License-Identifier: MIT
/*
 * The emulated backend's hook table.
 */
#include "emul.h"

const struct npu_backend_ops npu_backend_emul_ops = {
	.name = "emul",
	.kind = NPU_BACKEND_EMUL,
	.device_priv_size = sizeof(struct emul_dev),
	.buffer_priv_size = sizeof(struct emul_buf),
	.queue_priv_size = sizeof(struct emul_queue_handle),
	.fence_priv_size = sizeof(struct emul_fence),

	.context_init = emul_context_init,
	.context_fini = emul_context_fini,
	.device_info = emul_device_info,
	.device_open = emul_device_open,
	.device_close = emul_device_close,
	.device_release = NULL,
	.device_query = emul_device_query,

	.buffer_alloc = emul_buffer_alloc,
	.buffer_free = emul_buffer_free,
	.buffer_map = emul_buffer_map,
	.buffer_export = emul_buffer_export,
	.buffer_import = emul_buffer_import,
	.buffer_wait_idle = emul_buffer_wait_idle,

	.queue_create = emul_queue_create,
	.queue_destroy = emul_queue_destroy,

	.submit = emul_submit,
	.fence_wait = emul_fence_wait,
	.fence_destroy = emul_fence_destroy,
};
