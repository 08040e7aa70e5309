/*
 * Diagnostics, environment parsing, thread ids and clocks for heapprof.so. Syscalls
 * and getenv only: these run inside malloc and before the real allocator is known.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "util.h"

void hp_warn(const char *a, const char *b, const char *c)
{
	char buf[512];
	const char *parts[] = { "heapprof: ", a, b, c, "\n" };
	size_t n = 0;

	for (size_t i = 0; i < sizeof(parts) / sizeof(parts[0]); i++) {
		size_t len;

		if (!parts[i])
			continue;
		len = strlen(parts[i]);
		if (len > sizeof(buf) - 1 - n)
			len = sizeof(buf) - 1 - n;
		memcpy(buf + n, parts[i], len);
		n += len;
	}
	if (buf[n - 1] != '\n')
		buf[n++] = '\n';
	/* Nothing to do if stderr is closed; the program must not notice us. */
	if (write(STDERR_FILENO, buf, n) < 0)
		return;
}

char *hp_utoa(char *p, uint64_t v)
{
	char tmp[24];
	int n = 0;

	do
		tmp[n++] = (char)('0' + v % 10);
	while ((v /= 10) != 0);
	while (n)
		*p++ = tmp[--n];
	*p = 0;
	return p;
}

/* "name=value" into buf, the value cut to fit. */
static void snprint_pair(char *buf, size_t size, const char *name, const char *value)
{
	size_t n = strnlen(name, size / 2);

	memcpy(buf, name, n);
	buf[n++] = '=';
	size_t v = strnlen(value, size - n - 1);
	memcpy(buf + n, value, v);
	buf[n + v] = 0;
}

bool hp_env_u64(const char *name, uint64_t lo, uint64_t hi, uint64_t def, uint64_t *out)
{
	const char *s = getenv(name);
	uint64_t v = 0;
	bool over = false;
	const char *p;

	*out = def;
	if (!s || !*s)
		return true;
	for (p = s; *p >= '0' && *p <= '9'; p++) {
		over |= __builtin_mul_overflow(v, 10, &v);
		over |= __builtin_add_overflow(v, (uint64_t)(*p - '0'), &v);
	}
	if (*p || over || v < lo || v > hi) {
		char what[96], why[96], *w = why;

		/* One line: HEAPPROF_FRAMES=abc is not a number in 1..1024; using 128 */
		snprint_pair(what, sizeof(what), name, s);
		w = stpcpy(w, " is not a number in ");
		w = hp_utoa(w, lo);
		w = stpcpy(w, "..");
		w = hp_utoa(w, hi);
		w = stpcpy(w, "; using ");
		if (def < lo || def > hi)
			stpcpy(w, "the default");	/* one that depends on other options */
		else
			hp_utoa(w, def);
		hp_warn(what, why, NULL);
		return false;
	}
	*out = v;
	return true;
}

HP_TLS uint32_t hp_tid_cache;
HP_TLS unsigned hp_own_map;

void *hp_map(size_t len, unsigned own, int extra)
{
	void *m;

	hp_own_map = own;
	m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | extra, -1, 0);
	hp_own_map = 0;
	return m;
}

uint32_t hp_tid_slow(void)
{
	hp_tid_cache = (uint32_t)syscall(SYS_gettid);
	return hp_tid_cache;
}

uint64_t hp_now_ns(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_MONOTONIC_COARSE, &ts) != 0)
		return 0;
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/*
 * The two functions of libm sampling needs, here: loading libm costs a program that
 * does not link it (git) half a MiB of resident pages. Each agrees with glibc's within
 * a few ulps (test/t1010 compares them with it).
 *
 * -log(u): u = m * 2^e with m in [sqrt(1/2), sqrt(2)); log(m) = 2 atanh(s), s = (m - 1) / (m + 1),
 * |s| < 0.1716, whose series' terms past s^19 / 19 are below 1e-16.
 */
double hp_neg_log(double u)
{
	uint64_t bits;
	double m, s, s2, t, sum = 0;
	int e;

	memcpy(&bits, &u, sizeof(bits));
	e = (int)((bits >> 52) & 0x7FF) - 1023;
	bits = (bits & 0x000FFFFFFFFFFFFFull) | 0x3FF0000000000000ull;	/* m in [1, 2) */
	memcpy(&m, &bits, sizeof(m));
	if (m > 1.4142135623730951) {
		m *= 0.5;
		e++;
	}
	s = (m - 1) / (m + 1);
	s2 = s * s;
	t = s;
	for (unsigned k = 1; k <= 19; k += 2) {
		sum += t / k;
		t *= s2;
	}
	return -(2 * sum + e * 0.69314718055994531);
}

/* 1 - exp(-x), x >= 0: the series below 0.5, where the subtraction would cancel;
 * else exp(-x) = 2^-k exp(-r), x = k ln 2 + r, by its series. */
double hp_one_minus_exp_neg(double x)
{
	static const double ln2_hi = 6.93147180369123816490e-01, ln2_lo = 1.90821492927058770002e-10;
	double sum = 0, t, r, scale;
	uint64_t bits;
	int k;

	if (!(x >= 0.5)) {
		t = x;
		for (unsigned j = 1; j <= 18; j++) {
			sum += t;
			t *= -x / (j + 1);
		}
		return sum;
	}
	if (x > 40)
		return 1.0;	/* exp(-x) is below half an ulp of 1 */
	k = (int)(x / 6.93147180559945309417e-01);
	r = (x - k * ln2_hi) - k * ln2_lo;
	t = 1;
	for (unsigned j = 1; j <= 22; j++) {
		sum += t;
		t *= -r / j;
	}
	bits = (uint64_t)(1023 - k) << 52;	/* 2^-k */
	memcpy(&scale, &bits, sizeof(scale));
	return 1 - sum * scale;
}

/* ---- lines of text built without stdio ---------------------------------------- */

void hp_line_add(struct hp_line *l, const char *s)
{
	while (s && *s && l->n < sizeof(l->buf) - 2)
		l->buf[l->n++] = *s++;
	l->buf[l->n] = 0;
}

void hp_line_num(struct hp_line *l, uint64_t v)
{
	char tmp[24];

	hp_utoa(tmp, v);
	hp_line_add(l, tmp);
}

/* "2.53 s", "41 ms" or "370 us": durations in the unit that reads best. */
void hp_line_ns(struct hp_line *l, uint64_t ns)
{
	if (ns >= 10000000000ull) {
		hp_line_num(l, ns / 1000000000u);
		hp_line_add(l, " s");
	} else if (ns >= 10000000u) {
		hp_line_num(l, ns / 1000000u);
		hp_line_add(l, " ms");
	} else {
		hp_line_num(l, ns / 1000u);
		hp_line_add(l, " us");
	}
}

void hp_line_say(struct hp_line *l)
{
	hp_warn(l->buf, NULL, NULL);
}

const char *hp_strerror(int err)
{
	switch (err) {
	case ENOSPC: return "no space left on device";
	case EDQUOT: return "disk quota exceeded";
	case EEXIST: return "the file exists (snapshots never overwrite one)";
	case ENOENT: return "no such directory";
	case EACCES: return "permission denied";
	case EROFS: return "read-only file system";
	case EAGAIN: return "cannot fork (EAGAIN)";
	case ENOMEM: return "out of memory (ENOMEM)";
	case EBUSY: return "this thread is already taking one";
	case ENAMETOOLONG: return "name too long";
	case EFBIG: return "file too large (ulimit -f?)";
	case EIO: return "input/output error";
	}
#if defined(__GLIBC__) && (__GLIBC__ > 2 || __GLIBC_MINOR__ >= 32)
	{
		const char *s = strerrorname_np(err);

		if (s)
			return s;
	}
#endif
	return "an unknown error";
}

uint64_t hp_clock_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* ---- signal names ------------------------------------------------------------ */

static const struct { const char *name; int sig; } sig_names[] = {
	{ "HUP", SIGHUP }, { "INT", SIGINT }, { "QUIT", SIGQUIT }, { "USR1", SIGUSR1 },
	{ "USR2", SIGUSR2 }, { "PIPE", SIGPIPE }, { "ALRM", SIGALRM }, { "TERM", SIGTERM },
	{ "CONT", SIGCONT }, { "TSTP", SIGTSTP }, { "TTIN", SIGTTIN }, { "TTOU", SIGTTOU },
	{ "URG", SIGURG }, { "XCPU", SIGXCPU }, { "XFSZ", SIGXFSZ }, { "VTALRM", SIGVTALRM },
	{ "PROF", SIGPROF }, { "WINCH", SIGWINCH }, { "IO", SIGIO }, { "PWR", SIGPWR },
	{ "SYS", SIGSYS },
};

int hp_signal_parse(const char *var, const char *s)
{
	const char *name = strncmp(s, "SIG", 3) ? s : s + 3;
	char *end;
	long n;

	for (size_t i = 0; i < sizeof(sig_names) / sizeof(sig_names[0]); i++)
		if (!strcmp(name, sig_names[i].name))
			return sig_names[i].sig;
	if (!strncmp(name, "RTMIN+", 6)) {
		n = strtol(name + 6, &end, 10);
		if (!*end && end != name + 6 && n >= 0 && SIGRTMIN + n <= SIGRTMAX)
			return SIGRTMIN + (int)n;
	} else {
		n = strtol(name, &end, 10);
		if (!*end && end != name && n > 0 && n <= SIGRTMAX && n != SIGKILL &&
		    n != SIGSTOP && n != SIGCHLD && n != SIGSEGV && n != SIGBUS && n != SIGILL &&
		    n != SIGFPE && n != SIGABRT)
			return (int)n;
	}
	{
		struct hp_line l = { .n = 0 };

		hp_line_add(&l, var);
		hp_line_add(&l, "=");
		hp_line_add(&l, s);
		hp_line_add(&l, " is not a signal heapprof can take (a name such as USR2, or "
			      "a number); ignored");
		hp_line_say(&l);
	}
	return 0;
}

void *hp_sys_mmap(void *addr, size_t len, int flags)
{
	int prot = PROT_READ | PROT_WRITE;

	flags |= MAP_ANONYMOUS;
#if defined(__s390x__)
	long args[6] = { (long)addr, (long)len, prot, flags, -1, 0 };

	return (void *)syscall(SYS_mmap, args);
#elif defined(SYS_mmap2) && !defined(__LP64__)
	return (void *)syscall(SYS_mmap2, addr, len, prot, flags, -1, 0l);
#else
	return (void *)syscall(SYS_mmap, addr, len, prot, flags, -1, 0l);
#endif
}

int hp_sys_munmap(void *addr, size_t len)
{
	return (int)syscall(SYS_munmap, addr, len);
}
