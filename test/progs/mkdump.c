/*
 * Writes small raw memory images for the raw-mode tests: target memory at an address,
 * zeros or seeded noise, holding heapprof headers (include/heapprof_format.h) for any
 * word size and byte order, valid or spoilt one field at a time. With -E it writes a
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

		block_parse(argv[i], &b);
		n = block_encode(&b, t, bytes, sizeof(bytes));
		place(img, addr, len, b.user, bytes, n);
	}
	rc = write_file(argv[optind], img, len);
	free(img);
	return rc;
}
