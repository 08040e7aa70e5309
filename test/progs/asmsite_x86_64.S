/* asm_alloc: malloc(777) from a unit of assembly (asmsite.c says why) */
	.text
	.globl asm_alloc
asm_alloc:
	push %rbp
	mov %rsp, %rbp
	mov $777, %edi
	call malloc@PLT
	pop %rbp
	ret
	.section .note.GNU-stack, "", @progbits
