/*
 * Writes small raw memory images for the raw-mode tests: target memory at an address,
 * zeros or seeded noise, holding heapprof headers and v2 records
 * (include/heapprof_format.h) for any word size and byte order, valid or spoilt. With -E it writes a
 * bare ELF header instead: a PROGRAM that gives raw mode its word size and byte order.
 */
#include <elf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "heapprof_format.h"
#include "encode.h"

#define MAX_IMAGE (64u << 20)

static const char usage_text[] =
	"usage: mkdump [-w 4|8] [-B] [-a ADDR] [-n BYTES] [-R SEED] IMAGE [BLOCK...]\n"
	"       mkdump -E [-w 4|8] [-B] [-m MACHINE] PROGRAM\n"
	"IMAGE gets BYTES (default 4096) bytes of memory as it was at ADDR (default 0x10000):\n"
	"zeros, or noise from SEED, and a header for each BLOCK, in the byte order of the\n"
	"target (-B big-endian, else little) with pcs of -w bytes (default 8):\n"
	"  USER:SIZE[:PC,PC...][:FIELD=VALUE...]\n"
	"USER is the block's user pointer; the header and pcs lie below it, and what falls\n"
	"outside the image is left out. A FIELD (version, nframes, wsize, offset, flags) is\n"
	"stored as VALUE and the check value covers it; check=bad stores a wrong check.\n"
	"Block format version 2 (a BLOCK of these forms):\n"
	"  v2@USER:SIZE:SITE[:shift=N][:sampled][:check=bad]   a 16-byte header below USER\n"
	"  stack@ADDR:ID:PC,PC...[:truncated][:python][:check=bad]  a stack record at ADDR\n"
	"                        (python: HP2_STACK_PYTHON; Python word pairs given as PCs)\n"
	"  pycode@ADDR:QUALNAME:FILE:LINE[:version=V][:check=bad]  a Python name record:\n"
	"                        the instruction at byte offset 2K is on line LINE + K\n"
	"  site@ADDR:ID:STACK[:tid=N][:check=bad]             a site record at ADDR\n"
	"  proc@ADDR[:period=P][:version=N][:check=bad]       the process record at ADDR\n"
	"  slab@ADDR:START:STRIDE:SLOT,SLOT...[:offset=N][:check=bad]  a slab table at ADDR:\n"
	"                        slot I names the block at START + N (48) + I * STRIDE; a\n"
	"                        SLOT is 0 (none), SIZE/SITE or SIZE/SITE/s (sampled), or a\n"
	"                        word as =VALUE\n"
	"Records are written forward from ADDR; what falls outside the image is left out.\n"
	"-E writes an ELF header alone (ET_EXEC, e_machine MACHINE, default 62).\n";

static void __attribute__((noreturn)) usage(void)
{
	fputs(usage_text, stderr);
	exit(64);
}

static unsigned long long num(const char *s)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || end == s || *end)
		usage();
	return v;
}

struct block {
	uint64_t user;
	struct hp_hdr h;
	uint64_t pcs[HP_MAX_FRAMES];
	unsigned npcs;
	int bad_check;
};

/* FIELD=VALUE: a spoilt field, stored as given. */
static void block_field(struct block *b, const char *spec)
{
	const char *eq = strchr(spec, '=');
	size_t len = eq ? (size_t)(eq - spec) : 0;
	unsigned long long v;

	if (!eq)
		usage();
	if (len == 5 && !strncmp(spec, "check", 5) && !strcmp(eq + 1, "bad")) {
		b->bad_check = 1;
		return;
	}
	v = num(eq + 1);
	if (len == 7 && !strncmp(spec, "version", 7))
		b->h.version = (uint16_t)v;
	else if (len == 7 && !strncmp(spec, "nframes", 7))
		b->h.nframes = (uint8_t)v;
	else if (len == 5 && !strncmp(spec, "wsize", 5))
		b->h.wsize = (uint8_t)v;
	else if (len == 6 && !strncmp(spec, "offset", 6))
		b->h.offset = (uint32_t)v;
	else if (len == 5 && !strncmp(spec, "flags", 5))
		b->h.flags = (uint32_t)v;
	else
		usage();
}

/* USER:SIZE[:PC,PC...][:FIELD=VALUE...] */
static void block_parse(char *spec, struct block *b)
{
	char *part, *save = NULL;
	int i = 0;

	memset(b, 0, sizeof(*b));
	for (part = strtok_r(spec, ":", &save); part; part = strtok_r(NULL, ":", &save), i++) {
		if (i == 0) {
			b->user = num(part);
		} else if (i == 1) {
			b->h.size = num(part);
		} else if (strchr(part, '=')) {
			block_field(b, part);
		} else {
			char *pc, *save_pc = NULL;

			for (pc = strtok_r(part, ",", &save_pc); pc; pc = strtok_r(NULL, ",", &save_pc)) {
				if (b->npcs == HP_MAX_FRAMES)
					usage();
				b->pcs[b->npcs++] = num(pc);
			}
		}
	}
	if (i < 2)
		usage();
}

/*
 * The header as the format lays it out, in bytes: out gets offset bytes, the block's
 * real start to its user pointer. Fields not spoilt by the spec get their true values.
 */
static uint32_t block_encode(const struct block *b, struct target t, unsigned char *out, size_t cap)
{
	struct hp_hdr h = b->h;
	uint32_t need = HP_HDR_SIZE + b->npcs * t.wsize, offset;
	unsigned char *hp;

	h.birth = 1000000;
	h.tid = 1;
	h.magic = HP_MAGIC;
	if (!h.version)
		h.version = HP_FORMAT_VERSION;
	if (!h.nframes)
		h.nframes = (uint8_t)b->npcs;
	if (!h.wsize)
		h.wsize = (uint8_t)t.wsize;
	offset = (need + 7) & ~7u;
	if (!h.offset)
		h.offset = offset;
	if (offset > cap)
		usage();
	memset(out, 0, offset);
	hp = out + offset - HP_HDR_SIZE;
	encode_hdr(hp, h, b->user, b->pcs, b->npcs, t, b->bad_check ? 1 : 0);
	return offset;
}

/* Copy the encoded bytes that end at target address user into the image at addr. */
static void place(unsigned char *img, uint64_t addr, uint64_t len, uint64_t user,
		  const unsigned char *bytes, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++) {
		/* modular: an image may end at 2^64 exactly */
		uint64_t pos = user - n + i - addr;

		if (pos < len)
			img[pos] = bytes[i];
	}
}

/* The v2 options of a spec: NAME or NAME=VALUE; 1 if part is one of them. */
static int v2_option(const char *part, uint64_t *shift, int *sampled, int *bad, int *truncated,
		     uint64_t *period, uint64_t *version, uint64_t *tid)
{
	const char *eq = strchr(part, '=');

	if (!strcmp(part, "sampled"))
		*sampled = 1;
	else if (!strcmp(part, "truncated"))
		*truncated = 1;
	else if (!strcmp(part, "check=bad"))
		*bad = 1;
	else if (eq && !strncmp(part, "shift=", 6))
		*shift = num(eq + 1);
	else if (eq && !strncmp(part, "period=", 7))
		*period = num(eq + 1);
	else if (eq && !strncmp(part, "version=", 8))
		*version = num(eq + 1);
	else if (eq && !strncmp(part, "tid=", 4))
		*tid = num(eq + 1);
	else
		return 0;
	return 1;
}

/* A Python name record (include/heapprof_format.h) at rec into p, 64-bit targets:
 * code unit K on line first + K (K < 16); returns its length. */
static size_t encode_pycode(unsigned char *p, uint64_t rec, const char *q, const char *f,
			    unsigned first, uint64_t version, int bad, struct target t)
{
	uint8_t lt[32];
	size_t nq = strlen(q), nf = strlen(f), nl = sizeof(lt), nw = (nq + nf + nl + 7) / 8;
	uint64_t w[HP2_PYCODE_WORDS], x;
	unsigned char body[HP2_PYCODE_MAX_NAME + HP2_PYCODE_MAX_FILE + 64] = { 0 };

	if (nq > HP2_PYCODE_MAX_NAME || nf > HP2_PYCODE_MAX_FILE)
		usage();
	for (unsigned k = 0; k < 16; k++) {	/* NO_COLUMNS, one unit, line delta 0 then +1 */
		lt[2 * k] = 0x80 | 13 << 3;
		lt[2 * k + 1] = k ? 2 : 0;
	}
	memcpy(body, q, nq);
	memcpy(body + nq, f, nf);
	memcpy(body + nq + nf, lt, nl);
	w[0] = HP2_PYCODE_MAGIC;
	w[2] = 0x7f0000c0de00ULL;
	w[3] = (version & 0xFFFFFFFFu) | (uint64_t)first << 32;
	w[4] = nq | nf << 16 | (uint64_t)nl << 32;
	w[5] = 0;
	x = hp_mix(HP2_SEED, rec);
	for (unsigned i = 2; i < HP2_PYCODE_WORDS; i++)
		x = hp_mix(x, w[i]);
	for (size_t i = 0; i < nw; i++) {
		uint64_t v = 0;

		for (unsigned b = 0; b < 8; b++)	/* the record's words as the target loads them */
			v |= (uint64_t)body[8 * i + b] << (t.big_endian ? 56 - 8 * b : 8 * b);
		x = hp_mix(x, v);
	}
	w[1] = hp_check_final(x) ^ (bad ? 1 : 0);
	for (unsigned i = 0; i < HP2_PYCODE_WORDS; i++)
		put(p + 8 * i, w[i], 8, t.big_endian);
	memcpy(p + 8 * HP2_PYCODE_WORDS, body, nw * 8);
	return (HP2_PYCODE_WORDS + nw) * 8;
}

/* pycode@ADDR:QUALNAME:FILE:LINE[:version=V][:check=bad] */
static void pycode_spec(char *rest, struct target t, unsigned char *img, uint64_t addr,
			uint64_t len)
{
	static unsigned char bytes[8 * HP2_PYCODE_WORDS + HP2_PYCODE_MAX_NAME +
				   HP2_PYCODE_MAX_FILE + 64];
	char *part[6], *save = NULL;
	unsigned n = 0;
	uint64_t version = 0x030C01F0, rec;
	int bad = 0;
	size_t k;

	for (char *p = strtok_r(rest, ":", &save); p; p = strtok_r(NULL, ":", &save)) {
		if (!strcmp(p, "check=bad"))
			bad = 1;
		else if (!strncmp(p, "version=", 8))
			version = num(p + 8);
		else if (n < 4)
			part[n++] = p;
		else
			usage();
	}
	if (n != 4 || t.wsize != 8)
		usage();
	rec = num(part[0]);
	k = encode_pycode(bytes, rec, part[1], part[2], (unsigned)num(part[3]), version, bad, t);
	place(img, addr, len, rec + k, bytes, (uint32_t)k);
}

/* slab@ADDR:START:STRIDE:SLOT,SLOT...[:offset=N][:check=bad] */
static void slab_spec(char *rest, struct target t, unsigned char *img, uint64_t addr, uint64_t len)
{
	static unsigned char bytes[32 + 8 * 4096];
	static uint64_t slots[4096];
	char *part[4], *save = NULL;
	unsigned n = 0, ns = 0;
	uint64_t offset = 48, rec;
	int bad = 0;
	size_t k;

	for (char *p = strtok_r(rest, ":", &save); p; p = strtok_r(NULL, ":", &save)) {
		if (!strcmp(p, "check=bad"))
			bad = 1;
		else if (!strncmp(p, "offset=", 7))
			offset = num(p + 7);
		else if (n < 4)
			part[n++] = p;
		else
			usage();
	}
	if (n != 4)
		usage();
	for (char *sp = NULL, *w = strtok_r(part[3], ",", &sp); w; w = strtok_r(NULL, ",", &sp)) {
		char *f[3], *s2 = NULL;
		unsigned nf = 0;

		if (ns == 4096)
			usage();
		if (*w == '=') {
			slots[ns++] = num(w + 1);
			continue;
		}
		for (char *x = strtok_r(w, "/", &s2); x; x = strtok_r(NULL, "/", &s2))
			if (nf < 3)
				f[nf++] = x;
		if (nf == 1 && !strcmp(f[0], "0"))
			slots[ns++] = 0;
		else if (nf >= 2)
			slots[ns++] = encode2_slot((uint32_t)num(f[1]), num(f[0]), 5,
						   nf == 3 && !strcmp(f[2], "s"));
		else
			usage();
	}
	rec = num(part[0]);
	k = encode2_slab(bytes, rec, num(part[1]), (unsigned)offset, (unsigned)num(part[2]), slots, ns,
			 t, bad);
	place(img, addr, len, rec + k, bytes, (uint32_t)k);
}

/* A v2 spec (KIND@...); 0 if spec is not one. Its bytes go into img (at addr, len). */
static int v2_spec(char *spec, struct target t, unsigned char *img, uint64_t addr, uint64_t len)
{
	static unsigned char bytes[32 + HP2_MAX_FRAMES * 8];
	char *at = strchr(spec, '@'), *part, *save = NULL;
	uint64_t v[3] = { 0 }, pcs[HP2_MAX_FRAMES], shift = 0, period = 0, version = 2, tid = 1;
	int nv = 0, sampled = 0, bad = 0, truncated = 0, python = 0;
	unsigned npcs = 0;
	size_t n;

	if (!at)
		return 0;
	*at = 0;
	if (!strcmp(spec, "pycode")) {
		pycode_spec(at + 1, t, img, addr, len);
		return 1;
	}
	if (!strcmp(spec, "slab")) {
		slab_spec(at + 1, t, img, addr, len);
		return 1;
	}
	for (part = strtok_r(at + 1, ":", &save); part; part = strtok_r(NULL, ":", &save)) {
		if (v2_option(part, &shift, &sampled, &bad, &truncated, &period, &version, &tid))
			continue;
		if (!strcmp(part, "python")) {
			python = 1;
			continue;
		}
		if (!strcmp(spec, "stack") && nv == 2) {
			char *pc, *sp = NULL;

			for (pc = strtok_r(part, ",", &sp); pc; pc = strtok_r(NULL, ",", &sp)) {
				if (npcs == HP2_MAX_FRAMES)
					usage();
				pcs[npcs++] = num(pc);
			}
			nv++;
		} else if (nv < 3) {
			v[nv++] = num(part);
		} else {
			usage();
		}
	}
	if (!strcmp(spec, "v2") && nv == 3) {
		memset(bytes, 0, 24);
		encode2_block(bytes + 24, v[0], v[1], (uint32_t)v[2], (unsigned)shift,
			      sampled ? HP2_F_SAMPLED : 0, 5, t, bad);
		place(img, addr, len, v[0], bytes, 24);
		return 1;
	}
	if (!strcmp(spec, "stack") && nv >= 2)
		n = encode2_stack(bytes, v[0], (uint32_t)v[1],
				  (truncated ? HP2_STACK_TRUNCATED : 0) | (python ? HP2_STACK_PYTHON : 0),
				  pcs, npcs, t, bad);
	else if (!strcmp(spec, "site") && nv == 3)
		n = encode2_site(bytes, v[0], (uint32_t)v[1], (uint32_t)v[2], (uint32_t)tid,
				 HP2_ENTRY_MALLOC, 0, t, bad);
	else if (!strcmp(spec, "proc") && nv == 1)
		n = encode2_proc(bytes, v[0], (unsigned)version, 4242, period, 1000000, 2000000,
				 64, t, bad);
	else
		usage();
	place(img, addr, len, v[0] + n, bytes, (uint32_t)n);
	return 1;
}

static uint64_t xorshift(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static int write_file(const char *path, const void *p, size_t n)
{
	FILE *f = fopen(path, "wb");

	if (!f || fwrite(p, 1, n, f) != n || fclose(f) != 0) {
		fprintf(stderr, "mkdump: cannot write '%s': %s\n", path, strerror(errno));
		return 1;
	}
	return 0;
}

/* An ELF header alone: all raw mode asks of PROGRAM when no symbols are wanted. */
static int write_elf(const char *path, struct target t, unsigned machine)
{
	unsigned char e[64] = { ELFMAG0, ELFMAG1, ELFMAG2, ELFMAG3 };
	int be = t.big_endian;

	e[EI_CLASS] = t.wsize == 8 ? ELFCLASS64 : ELFCLASS32;
	e[EI_DATA] = be ? ELFDATA2MSB : ELFDATA2LSB;
	e[EI_VERSION] = EV_CURRENT;
	put(e + 16, ET_EXEC, 2, be);
	put(e + 18, machine, 2, be);
	put(e + 20, EV_CURRENT, 4, be);
	if (t.wsize == 8)
		put(e + 52, sizeof(Elf64_Ehdr), 2, be);	/* e_ehsize */
	else
		put(e + 40, sizeof(Elf32_Ehdr), 2, be);
	return write_file(path, e, t.wsize == 8 ? sizeof(Elf64_Ehdr) : sizeof(Elf32_Ehdr));
}

int main(int argc, char **argv)
{
	struct target t = { 8, 0 };
	unsigned long long addr = 0x10000, len = 4096, seed = 0, machine = EM_X86_64;
	int elf = 0, c, rc;
	unsigned char *img;

	while ((c = getopt(argc, argv, "w:Ba:n:R:Em:")) != -1) {
		switch (c) {
		case 'w': t.wsize = (unsigned)num(optarg); break;
		case 'B': t.big_endian = 1; break;
		case 'a': addr = num(optarg); break;
		case 'n': len = num(optarg); break;
		case 'R': seed = num(optarg); break;
		case 'E': elf = 1; break;
		case 'm': machine = num(optarg); break;
		default: usage();
		}
	}
	if ((t.wsize != 4 && t.wsize != 8) || optind >= argc || len > MAX_IMAGE)
		usage();
	if (elf)
		return write_elf(argv[optind], t, (unsigned)machine);
	img = calloc(1, len ? len : 1);
	if (!img)
		return 1;
	for (uint64_t i = 0, s = seed; seed && i < len; i++)
		img[i] = (unsigned char)(xorshift(&s) >> 56);
	for (int i = optind + 1; i < argc; i++) {
		unsigned char bytes[HP_HDR_SIZE + HP_MAX_FRAMES * 8];
		struct block b;
		uint32_t n;

		if (v2_spec(argv[i], t, img, addr, len))
			continue;
		block_parse(argv[i], &b);
		n = block_encode(&b, t, bytes, sizeof(bytes));
		place(img, addr, len, b.user, bytes, n);
	}
	rc = write_file(argv[optind], img, len);
	free(img);
	return rc;
}
