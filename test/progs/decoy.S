/*
 * Two libraries from this file (test/progs/progs.mk): the same layout, f() calling
 * fake_malloc from unwind_check at the same offset, only the frame differs. With
 * FRAME=8 the return address sits at rsp + 8 when fake_malloc returns; with FRAME=72
 * it sits at rsp + 72, and rsp + 8 holds a decoy return address into decoy(), whose
 * rule ends the stack. An unwinder still using the first library's rule for the
 * second one's code records decoy and never reaches main. SLOT is where f stores the
 * decoy: in the red zone (overwritten by the call) for the first, rsp + 8 for the second.
 */
	.text
	.globl	f
	.type	f, @function
f:
	.cfi_startproc
	subq	$FRAME, %rsp
	.cfi_def_cfa_offset FRAME + 8
	leaq	decoy_ret(%rip), %rax
	movq	%rax, SLOT(%rsp)
	call	fake_malloc@PLT
	addq	$FRAME, %rsp
	.cfi_def_cfa_offset 8
	ret
	.cfi_endproc
	.size	f, .-f

	.globl	decoy
	.type	decoy, @function
decoy:
	.cfi_startproc
	.cfi_undefined %rip
	call	abort@PLT
decoy_ret:
	ret
	.cfi_endproc
	.size	decoy, .-decoy

	.section .note.GNU-stack, "", @progbits
