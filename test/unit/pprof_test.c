/*
 * pb.c against hand-computed bytes, and pprof.c on a fixed small profile. With a file
 * name as argument it also writes that profile there (gzip profile.proto), for
 * test/t4002-pprof.sh to read back with the real pprof.
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "pb.h"
#include "pprof.h"
#include "tap.h"

static bool bytes_are(const struct pb *b, const char *hex)
{
	char got[256] = "";

	for (size_t i = 0; i < b->len && 2 * i + 2 < sizeof(got); i++)
		sprintf(got + 2 * i, "%02x", b->p[i]);
	if (strcmp(got, hex))
		printf("# got %s, expected %s\n", got, hex);
	return !strcmp(got, hex);
}

static void varints(void)
{
	static const struct { uint64_t v; const char *hex; } cases[] = {
		{ 0, "00" }, { 1, "01" }, { 127, "7f" }, { 128, "8001" }, { 300, "ac02" },
		{ 16383, "ff7f" }, { 16384, "808001" }, { UINT32_MAX, "ffffffff0f" },
		{ UINT64_MAX, "ffffffffffffffffff01" },
		/* -1 as int64: ten bytes, as protobuf writes negative int64 */
		{ (uint64_t)-1, "ffffffffffffffffff01" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct pb b = { 0 };

		pb_varint(&b, cases[i].v);
		ok(bytes_are(&b, cases[i].hex), "varint %llu is %s",
		   (unsigned long long)cases[i].v, cases[i].hex);
		pb_free(&b);
	}
}

static void fields(void)
{
	struct pb b = { 0 };
	uint64_t packed[] = { 3, 270, 86942 };

	pb_uint(&b, 1, 150);
	ok(bytes_are(&b, "089601"), "field 1 = 150 (the protobuf docs' example)");
	b.len = 0;
	pb_uint(&b, 5, 0);
	ok(b.len == 0, "a zero field is left out");
	pb_bytes(&b, 2, "testing", 7);
	ok(bytes_are(&b, "120774657374696e67"), "field 2 = \"testing\"");
	b.len = 0;
	pb_packed(&b, 4, packed, 3);
	ok(bytes_are(&b, "2206038e029ea705"), "packed field 4 = 3, 270, 86942");
	b.len = 0;
	pb_uint(&b, 16, 1);
	ok(bytes_are(&b, "800101"), "field 16 needs a two-byte key");
	pb_free(&b);
}

/*
 * main -> site_a: 2 blocks, 2000 bytes; main -> site_b, with inl_fill inlined into
 * it: 1 block, 4096 bytes; main -> site_b -> ns::holder<int>::grow: 1 block, 16 bytes.
 * Totals 4 blocks, 6112 bytes.
 */
static const struct pprof_value_type types[] = {
	{ "inuse_objects", "count" }, { "inuse_space", "bytes" },
};
static const struct pprof_function funcs[] = {
	{ 1, "main", NULL, "prog.c", 10 },
	{ 2, "site_a", NULL, "prog.c", 20 },
	{ 3, "site_b", NULL, "prog.c", 30 },
	{ 4, "inl_fill", NULL, "fill.h", 5 },
	{ 5, "ns::holder<int>::grow(unsigned long)", "_ZN2ns6holderIiE4growEm", "h.cc", 1 },
};
static const struct pprof_line l_main[] = { { 1, 12 } }, l_a[] = { { 2, 22 } },
	l_b[] = { { 4, 7 }, { 3, 33 } }, l_grow[] = { { 5, 3 } };
static const struct pprof_location locs[] = {
	{ 1, 1, 0x401010, l_a, 1 },
	{ 2, 1, 0x401100, l_main, 1 },
	{ 3, 1, 0x401200, l_b, 2 },
	{ 4, 1, 0x401300, l_grow, 1 },
};
static const struct pprof_mapping maps[] = {
	{ 1, 0x400000, 0x500000, 0, "/usr/bin/prog", "0123abcd", true, true, true, true },
};
static const uint64_t st_a[] = { 1, 2 }, st_b[] = { 3, 2 }, st_grow[] = { 4, 3, 2 };
static const int64_t v_a[] = { 2, 2000 }, v_b[] = { 1, 4096 }, v_grow[] = { 1, 16 };
static const struct pprof_sample samples[] = {
	{ st_a, 2, v_a, NULL, 0 }, { st_b, 2, v_b, NULL, 0 }, { st_grow, 3, v_grow, NULL, 0 },
};
static const struct pprof_profile profile = {
	types, 2, samples, 3, locs, 4, funcs, 5, maps, 1,
	"heapprof test profile", { "space", "bytes" }, 1, "inuse_space",
};

static unsigned count(const unsigned char *p, size_t len, const char *s)
{
	unsigned n = 0;
	size_t k = strlen(s);

	for (size_t i = 0; i + k <= len; i++)
		n += !memcmp(p + i, s, k);
	return n;
}

/* The gzip inflates, and holds each string once. */
static void profile_bytes(void)
{
	char *buf = NULL;
	size_t len = 0;
	unsigned char out[4096];
	uLongf out_len = sizeof(out);
	z_stream z = { 0 };
	FILE *f = open_memstream(&buf, &len);

	ok(f && pprof_write(&profile, f) == 0 && fclose(f) == 0, "pprof_write succeeds");
	ok(len > 18 && (unsigned char)buf[0] == 0x1f && (unsigned char)buf[1] == 0x8b,
	   "the output is gzip");
	inflateInit2(&z, 15 + 16);
	z.next_in = (unsigned char *)buf;
	z.avail_in = (uInt)len;
	z.next_out = out;
	z.avail_out = (uInt)out_len;
	ok(inflate(&z, Z_FINISH) == Z_STREAM_END, "it inflates completely");
	out_len = z.total_out;
	inflateEnd(&z);
	ok(memmem(out, out_len, "\x32\x00", 2) != NULL, "string 0 is the empty string");
	ok(count(out, out_len, "prog.c") == 1 && count(out, out_len, "bytes") == 1,
	   "a repeated string is stored once");
	free(buf);
}

int main(int argc, char **argv)
{
	varints();
	fields();
	profile_bytes();
	if (argc > 1) {
		FILE *f = fopen(argv[1], "wb");

		ok(f && pprof_write(&profile, f) == 0 && fclose(f) == 0, "wrote %s", argv[1]);
	}
	return tap_done();
}
