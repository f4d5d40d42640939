/* SPDX-License-Identifier: MIT */
/*
 * A plugin for tests/helpers/reload.c, built twice (Makefile): the same
 * code and the same layout, but a frame of FRAME bytes, 264 or 4104 (both
 * immediates take four bytes, both CFA offsets two): each return address
 * sits at the same offset in either build, with another rule.
 *
 *   int plugin_refuse(const char *path): open(path, O_WRONLY|O_CREAT, 0644)
 */
	.text
	.globl plugin_refuse
	.type plugin_refuse, @function
plugin_refuse:
	.cfi_startproc
	subq $FRAME, %rsp
	.cfi_adjust_cfa_offset FRAME
	movl $0x41, %esi
	movl $0x1a4, %edx
	xorl %eax, %eax
	call open@PLT
	addq $FRAME, %rsp
	.cfi_adjust_cfa_offset -FRAME
	ret
	.cfi_endproc
	.size plugin_refuse, .-plugin_refuse
	.section .note.GNU-stack, "", @progbits
