/*
 * The frame a function without unwind tables builds before its first call, read from
 * its x86_64 prologue: pushes and `sub $n, %rsp`, past the moves and arithmetic gcc
 * schedules between them. The stack scan (unwind_cfi.c) checks a candidate caller's
 * call target with it. Knows a common subset of the instruction set: at the first
 * instruction it cannot decode, it says what was built until there.
 */
#include "cfi_parse.h"

#include <string.h>

#if HP_CFI

#define PROLOGUE_BYTES 96	/* read at most this much code */

/* Length of a ModRM operand (the ModRM byte, SIB, displacement) at p, or 0. */
static unsigned modrm_len(const uint8_t *p, const uint8_t *end)
{
	unsigned mod = p[0] >> 6, rm = p[0] & 7, len = 1;

	if (mod == 3)
		return 1;
	if (rm == 4) {	/* SIB */
		if (p + 1 >= end)
			return 0;
		len++;
		if (mod == 0 && (p[1] & 7) == 5)
			len += 4;
	} else if (mod == 0 && rm == 5) {
		len += 4;	/* rip-relative */
	}
	return len + (mod == 1 ? 1 : mod == 2 ? 4 : 0);
}

/*
 * How an instruction changes rsp, in cfi_prologue_size's terms: OP_RSP moves it in a
 * way not followed here, OP_UNKNOWN is an instruction this reader cannot decode.
 */
enum op { OP_OTHER, OP_PUSH, OP_SUB_RSP, OP_CALL, OP_JMP, OP_BRANCH, OP_RSP, OP_UNKNOWN };

/*
 * Decode one instruction at p: its length in *len and what it does; *imm the size of
 * a `sub $imm, %rsp`, or a jmp's displacement.
 */
static enum op decode(const uint8_t *p, const uint8_t *end, unsigned *len, uint32_t *imm)
{
	const uint8_t *q = p;
	unsigned rex = 0, opsize = 0, m;
	uint8_t op;

	while (q < end && (*q == 0x66 || *q == 0xf2 || *q == 0xf3 || *q == 0x64 || *q == 0x65))
		opsize |= *q++ == 0x66;
	if (q < end && (*q & 0xf0) == 0x40)
		rex = *q++;
	if (q + 8 > end)
		return OP_UNKNOWN;
	op = *q++;
	*len = 0;
	if ((op & 0xf8) == 0x50 || op == 0x6a || op == 0x68) {	/* push r64, push $imm */
		*len = (unsigned)(q - p) + (op == 0x6a ? 1 : op == 0x68 ? 4 : 0);
		return OP_PUSH;
	}
	if (op == 0xe8 || (op == 0xff && (q[0] >> 3 & 7) == 2))
		return OP_CALL;
	if (op == 0xe9 || op == 0xeb) {			/* jmp rel32, rel8 */
		int32_t d = op == 0xeb ? (int8_t)q[0] : 0;

		if (op == 0xe9)
			memcpy(&d, q, 4);
		*len = (unsigned)(q - p) + (op == 0xeb ? 1 : 4);
		*imm = (uint32_t)d;
		return OP_JMP;
	}
	if (op == 0xc3 || (op & 0xf0) == 0x70 || op == 0xff)
		return OP_BRANCH;			/* ret, jcc, other indirect jumps */
	if (op == 0x0f) {
		op = *q++;
		if ((op & 0xf0) == 0x80)
			return OP_BRANCH;		/* jcc rel32 */
		/* nop/endbr, movs, imul, movzx/movsx, SSE moves and logic */
		if (op == 0x1e || op == 0x1f || op == 0x10 || op == 0x11 || op == 0x28 ||
		    op == 0x29 || op == 0x57 || op == 0xef || op == 0xd6 || op == 0x6f ||
		    op == 0x7f || op == 0xaf || op == 0xb6 || op == 0xb7 || op == 0xbe || op == 0xbf) {
			if (op == 0x1e && q[0] == 0xfa) {	/* endbr64 */
				*len = (unsigned)(q + 1 - p);
				return OP_OTHER;
			}
			m = modrm_len(q, end);
			*len = m ? (unsigned)(q + m - p) : 0;
			if (!m)
				return OP_UNKNOWN;
			return (q[0] & 0xc7) != 0xc4 ? OP_OTHER : OP_RSP;
		}
		return OP_UNKNOWN;
	}
	if ((op & 0xf8) == 0xb8) {			/* mov $imm, r */
		*len = (unsigned)(q - p) + ((rex & 8) ? 8 : opsize ? 2 : 4);
		return (op & 7) == 4 && !(rex & 1) ? OP_RSP : OP_OTHER;
	}
	if (op == 0xc6 || op == 0xc7) {			/* mov $imm, r/m */
		m = modrm_len(q, end);
		if (!m || (q[0] >> 3 & 7) != 0)
			return OP_UNKNOWN;
		*len = (unsigned)(q + m - p) + (op == 0xc6 ? 1 : opsize ? 2 : 4);
		return (q[0] & 0xc7) == 0xc4 && !(rex & 1) ? OP_RSP : OP_OTHER;
	}
	if (op == 0x83 || op == 0x81) {			/* arithmetic with an immediate */
		unsigned isz = op == 0x83 ? 1 : opsize ? 2 : 4;

		m = modrm_len(q, end);
		if (!m)
			return OP_UNKNOWN;
		*len = (unsigned)(q + m - p) + isz;
		if ((q[0] & 0xc7) != 0xc4 || (rex & 1))	/* not rsp */
			return OP_OTHER;
		if ((q[0] >> 3 & 7) == 7)
			return OP_OTHER;		/* cmp */
		if ((q[0] >> 3 & 7) != 5 || !(rex & 8))	/* only sub $imm, %rsp */
			return OP_RSP;
		if (op == 0x83)
			*imm = (uint32_t)(int32_t)(int8_t)q[1];
		else
			memcpy(imm, q + 1, 4);
		return *imm < (1u << 24) ? OP_SUB_RSP : OP_RSP;
	}
	/* ALU, test, xchg, mov, lea, movsxd with a ModRM operand and no immediate */
	if ((op < 0x40 && (op & 7) < 4) || op == 0x63 || (op >= 0x84 && op <= 0x8b) || op == 0x8d) {
		m = modrm_len(q, end);
		if (!m)
			return OP_UNKNOWN;
		*len = (unsigned)(q + m - p);
		/* a register destination of rsp (reg field, or rm for the store forms) */
		if ((op & 2) || op == 0x63 || op == 0x8d)
			return (q[0] >> 3 & 7) == 4 && !(rex & 4) ? OP_RSP : OP_OTHER;
		return (q[0] & 0xc7) == 0xc4 && !(rex & 1) ? OP_RSP : OP_OTHER;
	}
	if (op == 0x90)
		return *len = (unsigned)(q - p), OP_OTHER;
	if ((op & 0xf8) == 0x58 || op == 0xc9)
		return OP_RSP;				/* pop, leave */
	return OP_UNKNOWN;
}

int cfi_prologue_size(const struct cfi_obj *o, uintptr_t fn, uint32_t *size)
{
	uint8_t code[PROLOGUE_BYTES + 8];
	const uint8_t *p = code, *end = code;
	uintptr_t at = fn, seg_end;
	uint32_t s = 0, imm = 0;
	unsigned len, n = 0, hops = 0;

	for (unsigned i = 0; i < 48; i++) {
		if (p >= code + n) {	/* (re)fill from at: the start, or a jump's target */
			seg_end = cfi_seg_end(o, at, 1, PF_R | PF_X);
			if (!seg_end)
				return -1;
			n = seg_end - at < PROLOGUE_BYTES ? (unsigned)(seg_end - at) : PROLOGUE_BYTES;
			memset(code, 0xcc, sizeof(code));	/* int3: never part of a prologue */
			memcpy(code, (const void *)at, n);
			p = code;
			end = code + n + 8;
		}
		switch (decode(p, end, &len, &imm)) {
		case OP_PUSH:
			s += 8;
			break;
		case OP_SUB_RSP:
			s += imm;
			break;
		case OP_OTHER:
			break;
		case OP_CALL:
			*size = s;
			return 1;
		case OP_JMP:
			/* a thunk that only jumps on (qsort to __qsort_r): its target's frame */
			if (s != 0 || ++hops > 2) {
				*size = s;
				return 0;
			}
			at += len + (uintptr_t)(intptr_t)(int32_t)imm;
			p = code + n;	/* refill there */
			continue;
		case OP_BRANCH:
		case OP_UNKNOWN:	/* what was built so far, more may follow */
			*size = s;
			return 0;
		default:
			return -1;
		}
		at += len;
		p += len;
	}
	return -1;
}

#else /* not x86_64 */

int cfi_prologue_size(const struct cfi_obj *o, uintptr_t fn, uint32_t *size)
{
	(void)o, (void)fn, (void)size;
	return -1;
}

#endif
