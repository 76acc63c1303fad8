// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * rbln_model_exec.c - the executor: runs a validated stream in order.
 *
 * The executor steps through the stream with the validator's decoder, so
 * each command is checked again just before it runs. That costs a few
 * compares per command and means that even a home that forgot to validate
 * cannot make the model touch memory outside its buffers.
 */

#include "rbln_model_internal.h"

/**
 * rbln_model_bo_ptr() - CPU address of a checked operand
 * @bos: the buffer list
 * @op: the operand, already checked against @bos
 *
 * Return: the address, or NULL when the buffer is not mapped.
 */
u8 *rbln_model_bo_ptr(const struct rbln_model_bo *bos,
		      const struct rbln_isa_operand *op)
{
	u8 *cpu = bos[op->bo].cpu;

	return cpu ? cpu + op->offset : NULL;
}

/**
 * rbln_model_sem_ptr() - the counter a semaphore operand names
 * @bos: the buffer list
 * @op: the operand (8 bytes at an 8-aligned offset)
 *
 * The atomics need a naturally aligned address; the offset is aligned, the
 * mapping is up to the home (page-aligned in practice).
 *
 * Return: the counter, or NULL when unmapped or misaligned.
 */
static u64 *rbln_model_sem_ptr(const struct rbln_model_bo *bos,
			       const struct rbln_isa_operand *op)
{
	u8 *p = rbln_model_bo_ptr(bos, op);

	if (!p || ((uintptr_t)p & (sizeof(u64) - 1)))
		return NULL;
	return (u64 *)p;
}

/**
 * rbln_model_exec_compute() - run one decoded compute command of ISA 1.1
 * @cmd: the command, accepted by rbln_model_decode()
 * @bos: the buffer list with CPU mappings
 * @env: the home's services
 *
 * Return: 0 or a negative RBLN_E* error.
 */
static int rbln_model_exec_compute(const struct rbln_model_cmd *cmd,
				   const struct rbln_model_bo *bos,
				   const struct rbln_model_env *env)
{
	switch (cmd->u.hdr.opcode) {
	case RBLN_OP_EMBED:
		return rbln_model_exec_embed(&cmd->u.embed, bos, env);
	case RBLN_OP_RMSNORM:
		return rbln_model_exec_rmsnorm(&cmd->u.rmsnorm, bos, env);
	case RBLN_OP_MATMUL:
		return rbln_model_exec_matmul(&cmd->u.matmul, bos, env);
	case RBLN_OP_ROPE:
		return rbln_model_exec_rope(&cmd->u.rope, bos, env);
	case RBLN_OP_SWIGLU:
		return rbln_model_exec_swiglu(&cmd->u.swiglu, bos, env);
	case RBLN_OP_KV_WRITE:
		return rbln_model_exec_kv_write(&cmd->u.kv_write, bos, env);
	case RBLN_OP_ATTENTION:
		return rbln_model_exec_attention(&cmd->u.attention, bos, env);
	case RBLN_OP_ARGMAX:
		return rbln_model_exec_argmax(&cmd->u.argmax, bos, env);
	case RBLN_OP_TOPK:
		return rbln_model_exec_topk(&cmd->u.topk, bos, env);
	}
	/* rbln_model_decode() accepts known opcodes only. */
	return -RBLN_EINVAL;
}

/**
 * rbln_model_exec_cmd() - run one decoded command
 * @cmd: the command, accepted by rbln_model_decode()
 * @bos: the buffer list with CPU mappings
 * @env: the home's services
 *
 * Return: 0 or a negative RBLN_E* error.
 */
static int rbln_model_exec_cmd(const struct rbln_model_cmd *cmd,
			       const struct rbln_model_bo *bos,
			       const struct rbln_model_env *env)
{
	const struct rbln_isa_fill *fill = &cmd->u.fill;
	const struct rbln_isa_copy *copy = &cmd->u.copy;
	const struct rbln_isa_sem_signal *sig = &cmd->u.signal;
	const struct rbln_isa_sem_wait *wait = &cmd->u.wait;
	const struct rbln_isa_add *add = &cmd->u.add;
	u8 *dst, *a, *b;
	u64 *sem;

	switch (cmd->u.hdr.opcode) {
	case RBLN_OP_NOP:
		return 0;
	case RBLN_OP_BARRIER:
		rbln_model_barrier();
		return 0;
	case RBLN_OP_FILL:
		dst = rbln_model_bo_ptr(bos, &fill->dst);
		if (!dst)
			return -RBLN_EIO;
		return rbln_model_fill(dst, fill->dst.size, fill->value, env);
	case RBLN_OP_COPY:
		dst = rbln_model_bo_ptr(bos, &copy->dst);
		a = rbln_model_bo_ptr(bos, &copy->src);
		if (!dst || !a)
			return -RBLN_EIO;
		return rbln_model_copy(dst, a, copy->dst.size, env);
	case RBLN_OP_SEM_SIGNAL:
		sem = rbln_model_sem_ptr(bos, &sig->sem);
		if (!sem)
			return -RBLN_EIO;
		rbln_model_sem_signal(sem, sig->op, sig->value);
		return 0;
	case RBLN_OP_SEM_WAIT:
		sem = rbln_model_sem_ptr(bos, &wait->sem);
		if (!sem)
			return -RBLN_EIO;
		return rbln_model_sem_wait(sem, wait->cond, wait->value,
					   wait->timeout_ns, env);
	case RBLN_OP_ADD:
		dst = rbln_model_bo_ptr(bos, &add->dst);
		a = rbln_model_bo_ptr(bos, &add->a);
		b = rbln_model_bo_ptr(bos, &add->b);
		if (!dst || !a || !b)
			return -RBLN_EIO;
		return rbln_model_exec_add(dst, a, b, add->dst.size / 4, env);
	}
	return rbln_model_exec_compute(cmd, bos, env);
}

/* rbln_model_exec_cmd(), reporting its time to the home's profile. */
static int rbln_model_exec_timed(const struct rbln_model_cmd *cmd,
				 const struct rbln_model_bo *bos,
				 const struct rbln_model_env *env)
{
	u64 t0 = env->now_ns(env->priv);
	int ret = rbln_model_exec_cmd(cmd, bos, env);

	env->timed(env->priv, &cmd->u.hdr, env->now_ns(env->priv) - t0);
	return ret;
}

/**
 * rbln_model_execute() - run a validated stream
 * @stream: the stream rbln_model_validate() accepted
 * @size: its size
 * @bos: the same buffer list, now with @cpu mappings
 * @nbos: entries in @bos
 * @env: the home's services
 * @diag: on failure, the command that failed (may be NULL)
 *
 * Return: 0 or a negative RBLN_E* error (see rbln_model.h).
 */
int rbln_model_execute(const void *stream, u64 size,
		       const struct rbln_model_bo *bos, u32 nbos,
		       const struct rbln_model_env *env,
		       struct rbln_model_diag *diag)
{
	const u8 *s = stream;
	struct rbln_model_cmd cmd;
	u32 offset;
	u32 index;
	int ret;

	if (!env || !env->now_ns || !env->relax || !env->cancelled) {
		rbln_model_diag_set(diag, RBLN_ISA_OK, 0, 0, RBLN_ISA_NO_INDEX,
				    RBLN_ISA_NO_INDEX);
		return -RBLN_EINVAL;
	}
	if (rbln_model_check_header(s, size, diag) != RBLN_ISA_OK)
		return -RBLN_EINVAL;
	offset = sizeof(struct rbln_isa_stream_header);
	for (index = 0; offset < size; index++) {
		if (rbln_model_decode(s, size, offset, index, bos, nbos, &cmd,
				      diag) != RBLN_ISA_OK)
			return -RBLN_EINVAL;
		if (env->cancelled(env->priv))
			ret = -RBLN_ECANCELED;
		else if (env->timed)
			ret = rbln_model_exec_timed(&cmd, bos, env);
		else
			ret = rbln_model_exec_cmd(&cmd, bos, env);
		if (ret) {
			rbln_model_diag_set(diag, RBLN_ISA_OK, index, offset,
					    cmd.u.hdr.opcode,
					    RBLN_ISA_NO_INDEX);
			return ret;
		}
		offset += cmd.u.hdr.size;
	}
	rbln_model_diag_set(diag, RBLN_ISA_OK, 0, 0, 0, 0);
	return 0;
}
