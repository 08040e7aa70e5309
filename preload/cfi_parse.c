/*
 * The DWARF CFI reader behind the cfi unwinder: finds the FDE for a return address
 * through .eh_frame_hdr, parses its CIE and FDE and runs the CFA program up to the
 * address, every read bounds-checked against the object's readable segments; then
 * packs the resulting row into a rule (cfi_parse.h), or CFI_STOP (tables it cannot
 * follow), or CFI_NOINFO (none for the address).
 */
#define _GNU_SOURCE
#include "cfi_parse.h"

#include <link.h>
#include <stddef.h>
#include <string.h>

#if HP_CFI

/* ---- bounds-checked reading of unwind tables ---- */

/* not the analyzer's struct rd: this one reads our own process's tables, in place */
struct cfi_rd {
	const uint8_t *p, *end;
};

/* A reader from a to the end of its readable segment: lengths inside are then checked. */
static bool rd_open(const struct cfi_obj *o, uintptr_t a, struct cfi_rd *r)
{
	uintptr_t end = cfi_seg_end(o, a, 1, PF_R);

	r->p = (const uint8_t *)a;
	r->end = (const uint8_t *)end;
	return end != 0;
}

static bool rd_bytes(struct cfi_rd *r, void *out, size_t n)
{
	if ((size_t)(r->end - r->p) < n)
		return false;
	memcpy(out, r->p, n);	/* tables give no alignment promise */
	r->p += n;
	return true;
}

static bool rd_skip(struct cfi_rd *r, uint64_t n)
{
	if (n > (uint64_t)(r->end - r->p))
		return false;
	r->p += n;
	return true;
}

static bool rd_leb(struct cfi_rd *r, uint64_t *v, bool sign)
{
	uint64_t x = 0;
	unsigned shift = 0;
	uint8_t b;

	do {
		if (r->p >= r->end)
			return false;
		b = *r->p++;
		if (shift < 64)
			x |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
	} while (b & 0x80);
	if (sign && shift < 64 && (b & 0x40))
		x |= ~0ull << shift;
	*v = x;
	return true;
}

static bool rd_uleb(struct cfi_rd *r, uint64_t *v)
{
	return rd_leb(r, v, false);
}

static bool rd_sleb(struct cfi_rd *r, int64_t *v)
{
	return rd_leb(r, (uint64_t *)v, true);
}

/* DW_EH_PE_* pointer encodings (LSB "Linux Standard Base", .eh_frame) */
#define PE_ABSPTR 0x00
#define PE_ULEB128 0x01
#define PE_UDATA2 0x02
#define PE_UDATA4 0x03
#define PE_UDATA8 0x04
#define PE_SLEB128 0x09
#define PE_SDATA2 0x0a
#define PE_SDATA4 0x0b
#define PE_SDATA8 0x0c
#define PE_PCREL 0x10
#define PE_DATAREL 0x30
#define PE_INDIRECT 0x80
#define PE_OMIT 0xff

/* The value of an encoded pointer before its base is applied. */
static bool rd_enc_raw(struct cfi_rd *r, uint8_t enc, uint64_t *v)
{
	uint16_t u16;
	uint32_t u32;

	switch (enc & 0x0f) {
	case PE_ABSPTR:
	case PE_UDATA8:
	case PE_SDATA8:
		return rd_bytes(r, v, 8);
	case PE_UDATA4:
	case PE_SDATA4:
		if (!rd_bytes(r, &u32, 4))
			return false;
		*v = (enc & 0x0f) == PE_SDATA4 ? (uint64_t)(int64_t)(int32_t)u32 : u32;
		return true;
	case PE_UDATA2:
	case PE_SDATA2:
		if (!rd_bytes(r, &u16, 2))
			return false;
		*v = (enc & 0x0f) == PE_SDATA2 ? (uint64_t)(int64_t)(int16_t)u16 : u16;
		return true;
	case PE_ULEB128:
		return rd_uleb(r, v);
	case PE_SLEB128:
		return rd_sleb(r, (int64_t *)v);
	}
	return false;
}

/* An encoded pointer; dbase is the DW_EH_PE_datarel base (0: not allowed here). */
static bool rd_enc(struct cfi_rd *r, uint8_t enc, const struct cfi_obj *o, uintptr_t dbase,
		   uintptr_t *out)
{
	uintptr_t field = (uintptr_t)r->p;
	uint64_t v;

	if (enc == PE_OMIT || !rd_enc_raw(r, enc, &v))
		return false;
	switch (enc & 0x70) {
	case 0:
		break;
	case PE_PCREL:
		v += field;
		break;
	case PE_DATAREL:
		if (!dbase)
			return false;
		v += dbase;
		break;
	default:	/* textrel, funcrel, aligned: no x86_64 toolchain emits them */
		return false;
	}
	if (enc & PE_INDIRECT) {
		if (!cfi_seg_end(o, v, 8, PF_R))
			return false;
		memcpy(&v, (const void *)v, 8);
	}
	*out = v;
	return true;
}

/* ---- .eh_frame_hdr search, CIE and FDE ---- */

/* Binary search of the sorted table; every linker writes it as datarel|sdata4 pairs. */
static bool hdr_find_fde(const struct cfi_obj *o, uintptr_t target, uintptr_t *fde)
{
	struct cfi_rd r = { (const uint8_t *)o->hdr, (const uint8_t *)o->hdr_end };
	uint8_t h[4];
	uintptr_t eh_frame, count, lo = 0, hi;
	int32_t ent[2];

	if (!o->hdr || !rd_bytes(&r, h, 4) || h[0] != 1)
		return false;
	if (!rd_enc(&r, h[1], o, o->hdr, &eh_frame) || !rd_enc(&r, h[2], o, o->hdr, &count))
		return false;
	if (h[3] != (PE_DATAREL | PE_SDATA4) || count == 0 || count > (uintptr_t)(r.end - r.p) / 8)
		return false;
	hi = count;
	while (hi - lo > 1) {
		uintptr_t mid = lo + (hi - lo) / 2;

		memcpy(ent, r.p + mid * 8, 4);
		if (o->hdr + (intptr_t)ent[0] <= target)
			lo = mid;
		else
			hi = mid;
	}
	memcpy(ent, r.p + lo * 8, 8);
	if (o->hdr + (intptr_t)ent[0] > target)
		return false;
	*fde = o->hdr + (intptr_t)ent[1];
	return true;
}

/* Length of a CIE or FDE (32-bit or the 64-bit escape); narrows r to the entry. */
static bool rd_entry(struct cfi_rd *r, bool *is64)
{
	uint32_t len32;
	uint64_t len;

	if (!rd_bytes(r, &len32, 4))
		return false;
	*is64 = len32 == 0xffffffffu;
	if (*is64) {
		if (!rd_bytes(r, &len, 8))
			return false;
	} else if (len32 >= 0xfffffff0u) {
		return false;	/* reserved values */
	} else {
		len = len32;
	}
	if (len == 0 || len > (uint64_t)(r->end - r->p))
		return false;
	r->end = r->p + len;
	return true;
}

struct cie {
	uint64_t code_align;
	int64_t data_align;
	uint8_t fde_enc;
	bool z;
	struct cfi_rd insn;		/* the CIE's initial instructions */
};

#define DW_RBP 6
#define DW_RSP 7
#define DW_RA 16

/* Augmentation data of a "z..." CIE: only what .eh_frame on x86_64 uses. */
static bool cie_augment(struct cfi_rd *r, const char *aug, struct cie *c)
{
	uint64_t len, skipped;
	struct cfi_rd a;
	uint8_t enc;

	if (!rd_uleb(r, &len) || len > (uint64_t)(r->end - r->p))
		return false;
	a.p = r->p;
	a.end = r->p + len;
	r->p = a.end;
	for (aug++; *aug; aug++) {
		if (*aug == 'S')
			return false;	/* signal trampoline: CFA rules we never cache */
		if (*aug != 'R' && *aug != 'P' && *aug != 'L')
			return false;
		if (!rd_bytes(&a, &enc, 1))
			return false;
		if (*aug == 'R')
			c->fde_enc = enc;
		else if (*aug == 'P' && !rd_enc_raw(&a, enc, &skipped))
			return false;	/* the personality routine itself does not matter */
	}
	return true;
}

static bool cie_parse(const struct cfi_obj *o, uintptr_t at, struct cie *c)
{
	struct cfi_rd r;
	bool is64;
	uint64_t id = 0, ra;
	uint8_t ver;
	char aug[8];
	unsigned n = 0;

	if (!rd_open(o, at, &r) || !rd_entry(&r, &is64) || !rd_bytes(&r, &id, is64 ? 8 : 4) || id)
		return false;
	if (!rd_bytes(&r, &ver, 1) || (ver != 1 && ver != 3))
		return false;
	do {
		if (n == sizeof(aug) || !rd_bytes(&r, &aug[n], 1))
			return false;
	} while (aug[n++]);
	if (!rd_uleb(&r, &c->code_align) || !rd_sleb(&r, &c->data_align))
		return false;
	if (ver == 1) {
		uint8_t b;

		if (!rd_bytes(&r, &b, 1))
			return false;
		ra = b;
	} else if (!rd_uleb(&r, &ra)) {
		return false;
	}
	c->fde_enc = PE_ABSPTR;
	c->z = aug[0] == 'z';
	if (ra != DW_RA || (aug[0] && !c->z) || (c->z && !cie_augment(&r, aug, c)))
		return false;
	c->insn = r;
	return true;
}

/*
 * Parse the FDE at `at` and its CIE: CFI_FRAME if it covers target, CFI_NOINFO if it
 * does not (target lies between functions that have tables: code without any),
 * CFI_STOP if it cannot be read.
 */
static unsigned fde_parse(const struct cfi_obj *o, uintptr_t at, uintptr_t target, struct cie *c,
			  struct cfi_rd *insn, uintptr_t *start, uint64_t *range)
{
	struct cfi_rd r;
	bool is64;
	uint64_t cie_off = 0, auglen;
	uintptr_t field;

	if (!rd_open(o, at, &r) || !rd_entry(&r, &is64))
		return CFI_STOP;
	field = (uintptr_t)r.p;
	if (!rd_bytes(&r, &cie_off, is64 ? 8 : 4) || cie_off == 0 || cie_off > field)
		return CFI_STOP;
	if (!cie_parse(o, field - cie_off, c))
		return CFI_STOP;
	if (!rd_enc(&r, c->fde_enc, o, o->dbase, start) || !rd_enc_raw(&r, c->fde_enc & 0x0f, range))
		return CFI_STOP;
	if (target < *start || target - *start >= *range)
		return CFI_NOINFO;
	if (c->z && (!rd_uleb(&r, &auglen) || !rd_skip(&r, auglen)))
		return CFI_STOP;
	*insn = r;
	return CFI_FRAME;
}

/* ---- the CFA program ---- */

enum reg_how { REG_SAME, REG_UNDEF, REG_AT_CFA, REG_AT_RBP, REG_BAD };

struct reg_rule {
	enum reg_how how;
	int64_t off;
};

struct row {
	enum { ROW_CFA_REG, ROW_CFA_RBP_DEREF, ROW_CFA_BAD } cfa_how;
	uint64_t cfa_reg;
	int64_t cfa_off;
	struct reg_rule rbp, ra;
	bool rsp_ruled;		/* any rule for rsp: the caller's rsp is not the CFA */
};

#define STATE_DEPTH 8

struct interp {
	const struct cie *cie;
	const struct cfi_obj *o;
	uintptr_t loc, target;
	struct row row, init;	/* init: after the CIE program, for DW_CFA_restore */
	struct row saved[STATE_DEPTH];
	unsigned depth;
};

static void set_reg(struct interp *in, uint64_t reg, enum reg_how how, int64_t off)
{
	struct reg_rule rr = { how, off };

	if (reg == DW_RBP)
		in->row.rbp = rr;
	else if (reg == DW_RA)
		in->row.ra = rr;
	else if (reg == DW_RSP)
		in->row.rsp_ruled = true;
}

static void restore_reg(struct interp *in, uint64_t reg)
{
	if (reg == DW_RBP)
		in->row.rbp = in->init.rbp;
	else if (reg == DW_RA)
		in->row.ra = in->init.ra;
	else if (reg == DW_RSP)
		in->row.rsp_ruled = in->init.rsp_ruled;
}

/* Only the expressions gcc emits for stack realignment (DRAP) are understood. */
static bool expr_breg6(struct cfi_rd *r, int64_t *off, bool deref)
{
	uint64_t len;
	struct cfi_rd e;
	uint8_t op;

	if (!rd_uleb(r, &len) || len > (uint64_t)(r->end - r->p))
		return false;
	e.p = r->p;
	e.end = r->p + len;
	r->p = e.end;
	if (!rd_bytes(&e, &op, 1) || op != 0x76 || !rd_sleb(&e, off))	/* DW_OP_breg6 */
		return false;
	if (deref && (!rd_bytes(&e, &op, 1) || op != 0x06))		/* DW_OP_deref */
		return false;
	return e.p == e.end;
}

/* Factored offset: wraps instead of overflowing on hostile tables (UBSan builds). */
static int64_t factored(uint64_t v, int64_t align)
{
	return (int64_t)(v * (uint64_t)align);
}

/* Move loc; false once the row for target is complete. */
static bool advance(struct interp *in, uint64_t delta)
{
	in->loc += delta * in->cie->code_align;
	return in->loc <= in->target;
}

/* DW_CFA_* with the opcode in the low 6 bits (high 2 bits zero). Returns -1 bad, 0 stop. */
static int op_extended(struct interp *in, struct cfi_rd *r, uint8_t op)
{
	uint64_t reg, u, delta = 0;
	int64_t s;
	uintptr_t loc;

	switch (op) {
	case 0x00:	/* nop */
		return 1;
	case 0x01:	/* set_loc */
		if (!rd_enc(r, in->cie->fde_enc, in->o, in->o->dbase, &loc))
			return -1;
		in->loc = loc;
		return in->loc <= in->target;
	case 0x02:	/* advance_loc1 */
	case 0x03:	/* advance_loc2 */
	case 0x04:	/* advance_loc4 */
		if (!rd_bytes(r, &delta, op == 0x02 ? 1 : op == 0x03 ? 2 : 4))
			return -1;
		return advance(in, delta);
	case 0x05:	/* offset_extended */
		if (!rd_uleb(r, &reg) || !rd_uleb(r, &u))
			return -1;
		set_reg(in, reg, REG_AT_CFA, factored(u, in->cie->data_align));
		return 1;
	case 0x11:	/* offset_extended_sf */
		if (!rd_uleb(r, &reg) || !rd_sleb(r, &s))
			return -1;
		set_reg(in, reg, REG_AT_CFA, factored((uint64_t)s, in->cie->data_align));
		return 1;
	case 0x2f:	/* GNU_negative_offset_extended */
		if (!rd_uleb(r, &reg) || !rd_uleb(r, &u))
			return -1;
		set_reg(in, reg, REG_AT_CFA, factored(-u, in->cie->data_align));
		return 1;
	case 0x06:	/* restore_extended */
		if (!rd_uleb(r, &reg))
			return -1;
		restore_reg(in, reg);
		return 1;
	case 0x07:	/* undefined */
	case 0x08:	/* same_value */
		if (!rd_uleb(r, &reg))
			return -1;
		set_reg(in, reg, op == 0x07 ? REG_UNDEF : REG_SAME, 0);
		return 1;
	case 0x09:	/* register: a value we would have to track in another register */
	case 0x14:	/* val_offset */
	case 0x15:	/* val_offset_sf */
		if (!rd_uleb(r, &reg) || !rd_uleb(r, &u))
			return -1;
		set_reg(in, reg, REG_BAD, 0);
		return 1;
	}
	return -1;
}

static int op_cfa(struct interp *in, struct cfi_rd *r, uint8_t op)
{
	uint64_t reg, u;
	int64_t s;

	switch (op) {
	case 0x0a:	/* remember_state: the CFA rule is part of the saved row */
		if (in->depth == STATE_DEPTH)
			return -1;
		in->saved[in->depth++] = in->row;
		return 1;
	case 0x0b:	/* restore_state */
		if (in->depth == 0)
			return -1;
		in->row = in->saved[--in->depth];
		return 1;
	case 0x0c:	/* def_cfa */
	case 0x12:	/* def_cfa_sf */
		if (!rd_uleb(r, &reg))
			return -1;
		if (op == 0x0c ? !rd_uleb(r, &u) : !rd_sleb(r, &s))
			return -1;
		in->row.cfa_how = ROW_CFA_REG;
		in->row.cfa_reg = reg;
		in->row.cfa_off = op == 0x0c ? (int64_t)u : factored((uint64_t)s, in->cie->data_align);
		return 1;
	case 0x0d:	/* def_cfa_register */
		if (!rd_uleb(r, &reg))
			return -1;
		if (in->row.cfa_how != ROW_CFA_REG)
			in->row.cfa_how = ROW_CFA_BAD;
		in->row.cfa_reg = reg;
		return 1;
	case 0x0e:	/* def_cfa_offset */
	case 0x13:	/* def_cfa_offset_sf */
		if (op == 0x0e ? !rd_uleb(r, &u) : !rd_sleb(r, &s))
			return -1;
		if (in->row.cfa_how != ROW_CFA_REG)
			in->row.cfa_how = ROW_CFA_BAD;
		in->row.cfa_off = op == 0x0e ? (int64_t)u : factored((uint64_t)s, in->cie->data_align);
		return 1;
	case 0x2e:	/* GNU_args_size: only matters for landing pads */
		return rd_uleb(r, &u) ? 1 : -1;
	}
	return op_extended(in, r, op);
}

static int op_expr(struct interp *in, struct cfi_rd *r, uint8_t op)
{
	uint64_t reg;
	int64_t off = 0;

	if (op == 0x0f) {	/* def_cfa_expression */
		bool ok;
		struct cfi_rd save = *r;

		ok = expr_breg6(r, &off, true);
		if (!ok) {	/* skip an expression we cannot express */
			uint64_t len;

			*r = save;
			if (!rd_uleb(r, &len) || !rd_skip(r, len))
				return -1;
		}
		in->row.cfa_how = ok ? ROW_CFA_RBP_DEREF : ROW_CFA_BAD;
		in->row.cfa_off = off;
		return 1;
	}
	/* 0x10 expression, 0x16 val_expression */
	if (!rd_uleb(r, &reg))
		return -1;
	if (op == 0x10 && reg == DW_RBP) {
		struct cfi_rd save = *r;

		if (expr_breg6(r, &off, false)) {
			set_reg(in, reg, REG_AT_RBP, off);
			return 1;
		}
		*r = save;
	}
	set_reg(in, reg, REG_BAD, 0);
	{
		uint64_t len;

		return rd_uleb(r, &len) && rd_skip(r, len) ? 1 : -1;
	}
}

/* Run one program (CIE or FDE): -1 malformed or unsupported, 0 row complete, 1 ran out. */
static int run_program(struct interp *in, struct cfi_rd r)
{
	uint8_t op;
	uint64_t u;
	int st = 1;

	while (st > 0 && rd_bytes(&r, &op, 1)) {
		switch (op >> 6) {
		case 1:		/* advance_loc */
			st = advance(in, op & 0x3f);
			break;
		case 2:		/* offset */
			if (!rd_uleb(&r, &u))
				return -1;
			set_reg(in, op & 0x3f, REG_AT_CFA, factored(u, in->cie->data_align));
			break;
		case 3:		/* restore */
			restore_reg(in, op & 0x3f);
			break;
		default:
			st = op == 0x0f || op == 0x10 || op == 0x16 ? op_expr(in, &r, op)
								  : op_cfa(in, &r, op);
		}
	}
	return st;
}

/* The row at the target, packed; anything the walk cannot follow is CFI_STOP. */
static uint64_t row_pack(const struct row *row)
{
	enum cfa_how cfa;
	enum fp_how fp = FP_LOST;
	int64_t fp_off = 0;

	if (row->ra.how == REG_UNDEF)
		return CFI_END;
	if (row->ra.how != REG_AT_CFA || row->ra.off != -8 || row->rsp_ruled)
		return CFI_STOP;
	if (row->cfa_how == ROW_CFA_RBP_DEREF)
		cfa = CFA_RBP_DEREF;
	else if (row->cfa_how == ROW_CFA_REG && (row->cfa_reg == DW_RSP || row->cfa_reg == DW_RBP))
		cfa = row->cfa_reg == DW_RSP ? CFA_RSP : CFA_RBP;
	else
		return CFI_STOP;
	if (row->cfa_off < INT32_MIN || row->cfa_off > INT32_MAX)
		return CFI_STOP;
	if (row->rbp.how == REG_SAME) {
		fp = FP_SAME;
	} else if ((row->rbp.how == REG_AT_CFA || row->rbp.how == REG_AT_RBP) &&
		   row->rbp.off >= RULE_FP_MIN && row->rbp.off <= RULE_FP_MAX) {
		fp = row->rbp.how == REG_AT_CFA ? FP_AT_CFA : FP_AT_RBP;
		fp_off = row->rbp.off;
	}
	return rule_make(cfa, (int32_t)row->cfa_off, fp, (int32_t)fp_off);
}

uint64_t cfi_rule_in(const struct cfi_obj *o, uintptr_t pc)
{
	struct interp in = { .o = o, .target = pc - 1 };	/* pc is a return address */
	struct cie c;
	struct cfi_rd fde_insn;
	uintptr_t fde;
	uint64_t range;
	unsigned found;
	int st;

	/* no table, or target below its first function: no unwind info for target */
	if (!hdr_find_fde(o, in.target, &fde))
		return CFI_NOINFO;
	found = fde_parse(o, fde, in.target, &c, &fde_insn, &in.loc, &range);
	if (found != CFI_FRAME)
		return found;
	in.cie = &c;
	in.row.cfa_how = ROW_CFA_BAD;	/* until the CIE defines it */
	st = run_program(&in, c.insn);
	in.init = in.row;
	in.depth = 0;
	if (st > 0)
		st = run_program(&in, fde_insn);
	if (st < 0)
		return CFI_STOP;
	return row_pack(&in.row);
}

uintptr_t cfi_code_floor(const struct cfi_obj *o, uintptr_t pc)
{
	struct cie c;
	struct cfi_rd insn;
	uintptr_t fde, start;
	uint64_t range;

	if (!hdr_find_fde(o, pc - 1, &fde) ||
	    fde_parse(o, fde, pc - 1, &c, &insn, &start, &range) != CFI_NOINFO ||
	    start + range <= start || start + range > pc - 1)
		return 0;
	return start + range;
}

#else /* not x86_64 */

uintptr_t cfi_code_floor(const struct cfi_obj *o, uintptr_t pc)
{
	(void)o, (void)pc;
	return 0;
}

uint64_t cfi_rule_in(const struct cfi_obj *o, uintptr_t pc)
{
	(void)o, (void)pc;
	return CFI_STOP;
}

#endif
