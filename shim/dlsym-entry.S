/*
 * shim/dlsym-entry.S -- the exported dlsym.
 *
 * glibc resolves RTLD_NEXT and namespace-relative lookups from the caller's
 * return address, so the real dlsym must be reached by a jump from the
 * caller's frame, never by a call from ours. This stub asks the hidden
 * policy function cg_dlsym_policy(handle, name, return address) whether the
 * lookup is one we redirect; if it answers NULL, the stub restores the
 * arguments and tail-jumps to the real dlsym, which then sees the original
 * caller. An answer of -1 (CG_DLSYM_ABSENT: the name exists only as the
 * shim's own export) returns NULL.
 */
#if defined(__x86_64__)
	.text
	.globl	dlsym
	.type	dlsym, @function
dlsym:
	.cfi_startproc
	pushq	%rdi
	.cfi_adjust_cfa_offset 8
	pushq	%rsi
	.cfi_adjust_cfa_offset 8
	subq	$8, %rsp
	.cfi_adjust_cfa_offset 8
	movq	24(%rsp), %rdx
	call	cg_dlsym_policy
	addq	$8, %rsp
	.cfi_adjust_cfa_offset -8
	popq	%rsi
	.cfi_adjust_cfa_offset -8
	popq	%rdi
	.cfi_adjust_cfa_offset -8
	testq	%rax, %rax
	jz	1f
	cmpq	$-1, %rax
	je	2f
	ret
2:
	xorl	%eax, %eax
	ret
1:
	jmpq	*cg_real_dlsym(%rip)
	.cfi_endproc
	.size	dlsym, .-dlsym
	.section .note.GNU-stack,"",@progbits
#else
#error "cgshim: dlsym entry stub is written for x86_64 only"
#endif
