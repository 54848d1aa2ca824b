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
 *
 * One stub per architecture (docs/design.md, "Architectures"): x86-64
 * reads the return address the call pushed; aarch64 takes it from x30, and
 * builds a frame record only for the policy call, gone again (sp, x29 and
 * x30 as the caller left them) before the tail branch.
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
#elif defined(__aarch64__)
	.text
	.p2align 2
	.globl	dlsym
	.type	dlsym, %function
dlsym:
	.cfi_startproc
	hint	#34			/* BTI c: dlsym is called through the PLT */
	stp	x29, x30, [sp, #-32]!
	.cfi_def_cfa_offset 32
	.cfi_offset 29, -32
	.cfi_offset 30, -24
	mov	x29, sp
	stp	x0, x1, [sp, #16]
	mov	x2, x30			/* the caller's return address */
	bl	cg_dlsym_policy
	mov	x9, x0
	ldp	x0, x1, [sp, #16]
	ldp	x29, x30, [sp], #32
	.cfi_restore 29
	.cfi_restore 30
	.cfi_def_cfa_offset 0
	cbz	x9, 1f
	cmn	x9, #1
	b.eq	2f
	mov	x0, x9
	ret
2:
	mov	x0, #0
	ret
1:
	adrp	x16, cg_real_dlsym
	ldr	x16, [x16, :lo12:cg_real_dlsym]
	br	x16			/* x16: a BTI c landing pad accepts it */
	.cfi_endproc
	.size	dlsym, .-dlsym
	.section .note.GNU-stack,"",%progbits
#else
#error "cgshim: dlsym entry stub is written for x86_64 and aarch64"
#endif
