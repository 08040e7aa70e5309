# heapprof: `make` builds build/heapprof.so and build/heapprof-analyze,
# `make check` runs the test suite, `make install PREFIX=DIR` installs.
# Cross builds of the preload alone: make preload CC=s390x-linux-gnu-gcc B=build/s390x

PREFIX ?= /usr/local
DESTDIR ?=
PKG_CONFIG ?= pkg-config
CFLAGS ?= -O2 -g
SANITIZE ?=
B ?= build
V ?= 0

VERSION := 0.1.0
WARN := -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes -Wno-sign-compare
CPPFLAGS_ALL := -Iinclude -MMD -MP -DHP_VERSION='"$(VERSION)"'

ifeq ($(V),0)
Q := @
say = printf '  %-7s %s\n' $(1) $(2);
else
Q :=
say =
endif

# The analyzer and the units take the full sanitizer set; the preload only UBSan,
# since ASan must be the first library in a process.
ifneq ($(SANITIZE),)
SAN_ALL := -fsanitize=$(SANITIZE) -fno-omit-frame-pointer -fno-sanitize-recover=all
SAN_PRE := $(if $(findstring undefined,$(SANITIZE)),-fsanitize=undefined -fno-sanitize-recover=all)
endif

# hp_tag.c is the firmware kit (docs/PORTING.md): installed as source and built by the
# porting test, never called by heapprof.so. real_*.c: one way to the real allocator
# per build (preload/real.h); heapprof.so's is real_dlsym.c. gcc_unwind*.c: libgcc's
# unwinder loaded when first needed (heapprof.so) or linked (the static builds).
PRELOAD_SRCS := $(filter-out preload/hp_tag.c preload/real_wrap.c preload/real_libc.c preload/attach.c preload/gcc_unwind_linked.c,$(wildcard preload/*.c))
PRELOAD_OBJS := $(PRELOAD_SRCS:%.c=$(B)/%.o)
# heapprof-attach.so, which `heapprof attach` loads into a running process: the same
# core with thread-locals a dlopen can place (initial-exec ones need the static TLS
# that was sized at start-up) and attach.c, which points the process's references to
# the malloc family at it
ATTACH_OBJS := $(PRELOAD_SRCS:preload/%.c=$(B)/attach/%.o) $(B)/attach/attach.o
# libheapprof.a, for static links: the same core, entered through ld --wrap. What only
# a dynamic process has (dlclose, module records, C++ operators and thread names by
# interposition) stays out: in a static program libstdc++'s new reaches our malloc.
# maps.c too: its mmap would clash with the libc's in a static link.
STATIC_OUT := hooks new_delete exports modules real_dlsym sigmask maps gcc_unwind
STATIC_OBJS := $(filter-out $(STATIC_OUT:%=$(B)/preload/%.o),$(PRELOAD_OBJS)) \
	$(B)/static/hooks.o $(B)/static/sigmask.o $(B)/preload/real_wrap.o \
	$(B)/preload/gcc_unwind_linked.o
# the Rust crate's C core (rust/heapprof, HEAPPROF_LIB_DIR): entry points of its own
RUST_OBJS := $(filter-out $(STATIC_OUT:%=$(B)/preload/%.o),$(PRELOAD_OBJS)) \
	$(B)/rust/hooks.o $(B)/preload/real_libc.o $(B)/preload/gcc_unwind_linked.o
# the names --wrap sends to us; pkg-config --static --libs heapprof prints them
WRAP_NAMES := malloc free calloc realloc reallocarray posix_memalign aligned_alloc memalign \
	valloc pvalloc malloc_usable_size getdelim __getdelim getline \
	sigprocmask pthread_sigmask sigsuspend ppoll pselect epoll_pwait \
	execve execv execvp execvpe fexecve posix_spawn posix_spawnp
# 32-bit targets (mips, armhf) do 64-bit atomics in libatomic: the peak table's and the
# timeline's sums are 64-bit. Probed, so that 64-bit builds take no such dependency;
# a static link (and pkg-config --static) needs it as much as heapprof.so does.
ATOMIC_LIBS := $(shell printf 'unsigned long long x; int main(void) { return (int)__atomic_add_fetch(&x, 1, 5); }' | \
	$(CC) -x c - -o /dev/null 2>/dev/null || echo -latomic)
STATIC_LDFLAGS := $(WRAP_NAMES:%=-Wl,--wrap=%) -Wl,-u,__wrap_malloc -Wl,-u,heapprof_api_v1 -Wl,--eh-frame-hdr -lm -pthread \
	$(ATOMIC_LIBS)
# unwind tables: on mips and armhf libgcc cannot walk through frames without them
PRELOAD_CFLAGS := -fPIC -fvisibility=hidden -fno-omit-frame-pointer -funwind-tables -pthread $(SAN_PRE)
# NO_TIMELINE=1: a heapprof.so without the peak table, the timeline and their counting,
# only to measure what they cost (bench/timeline_cost.sh); build it in its own B=
ifeq ($(NO_TIMELINE),1)
PRELOAD_CFLAGS += -DHP_NO_LIVE
endif
# libgcc_s only where something references it (gcc_unwind.c: not on x86_64)
PRELOAD_LIBS := -ldl -Wl,--as-needed -lgcc_s -Wl,--no-as-needed -pthread $(ATOMIC_LIBS)

ANALYZER_SRCS := $(wildcard analyzer/*.c)
ANALYZER_OBJS := $(ANALYZER_SRCS:%.c=$(B)/%.o)
ANALYZER_LIB_OBJS := $(filter-out $(B)/analyzer/main.o,$(ANALYZER_OBJS))

.SECONDARY:
.PHONY: all preload static print-static-ldflags analyzer check check-build install uninstall clean demo bench fuzz fuzz-smoke man
all: preload static analyzer

preload: $(B)/heapprof.so $(B)/heapprof-attach.so $(B)/heapprof-inject
static: $(B)/libheapprof.a $(B)/libheapprof_rust.a
analyzer: $(B)/heapprof-analyze

$(B)/preload/%.o: preload/%.c
	@mkdir -p $(@D)
	$(Q)$(call say,CC,$@)$(CC) $(CPPFLAGS_ALL) $(CFLAGS) $(WARN) $(PRELOAD_CFLAGS) -c $< -o $@

$(B)/attach/%.o: preload/%.c
	@mkdir -p $(@D)
	$(Q)$(call say,CC,$@)$(CC) $(CPPFLAGS_ALL) -DHP_ATTACH $(CFLAGS) $(WARN) $(PRELOAD_CFLAGS) -c $< -o $@

$(B)/heapprof-attach.so: $(ATTACH_OBJS)
	$(Q)$(call say,LD,$@)$(CC) $(CFLAGS) $(LDFLAGS) -shared $(SAN_PRE) -o $@ $^ $(PRELOAD_LIBS)

# heapprof attach's injector: ptrace, one thread of the target, dlopen
$(B)/heapprof-inject: scripts/inject.c
	@mkdir -p $(@D)
	$(Q)$(call say,CC,$@)$(CC) $(CPPFLAGS_ALL) -Ipreload $(CFLAGS) $(WARN) -o $@ $< -ldl

$(B)/static/%.o: preload/%.c
	@mkdir -p $(@D)
	$(Q)$(call say,CC,$@)$(CC) $(CPPFLAGS_ALL) -DHP_ENTRIES_WRAP $(CFLAGS) $(WARN) $(PRELOAD_CFLAGS) -c $< -o $@

$(B)/libheapprof.a: $(STATIC_OBJS)
	$(Q)$(call say,AR,$@)rm -f $@ && $(AR) rcs $@ $^

$(B)/rust/%.o: preload/%.c
	@mkdir -p $(@D)
	$(Q)$(call say,CC,$@)$(CC) $(CPPFLAGS_ALL) -DHP_ENTRIES_RUST $(CFLAGS) $(WARN) $(PRELOAD_CFLAGS) -c $< -o $@

$(B)/libheapprof_rust.a: $(RUST_OBJS)
	$(Q)$(call say,AR,$@)rm -f $@ && $(AR) rcs $@ $^

$(B)/heapprof.so: $(PRELOAD_OBJS)
	$(Q)$(call say,LD,$@)$(CC) $(CFLAGS) $(LDFLAGS) -shared $(SAN_PRE) -Wl,-z,nodelete \
		-o $@ $^ $(PRELOAD_LIBS)

# Everything below needs elfutils, zlib, libzstd and liblzma (cores compressed with gzip,
# zstd or xz) and libiberty (Rust demangling); the preload above needs none of them.
ANALYZER_PKGS := libdw libelf zlib libzstd liblzma
# libiberty has no pkg-config file; Debian puts its headers in their own directory
IBERTY_CFLAGS ?= -I/usr/include/libiberty
IBERTY_LIBS ?= -liberty
ifneq ($(filter-out preload static print-static-ldflags $(B)/heapprof.so $(B)/libheapprof.a $(B)/libheapprof_rust.a clean uninstall,$(or $(MAKECMDGOALS),all)),)
DW_CFLAGS := $(shell $(PKG_CONFIG) --cflags $(ANALYZER_PKGS) 2>/dev/null)
DW_LIBS := $(shell $(PKG_CONFIG) --libs $(ANALYZER_PKGS) 2>/dev/null)
ifeq ($(shell $(PKG_CONFIG) --exists libdw libelf zlib && echo yes),)
$(error elfutils or zlib not found by $(PKG_CONFIG): install libdw-dev libelf-dev zlib1g-dev (Debian) or elfutils-devel zlib-devel (Fedora))
endif
ifeq ($(shell $(PKG_CONFIG) --exists libzstd liblzma && echo yes),)
$(error libzstd or liblzma not found by $(PKG_CONFIG) (they read zstd and xz cores): install libzstd-dev liblzma-dev (Debian) or libzstd-devel xz-devel (Fedora))
endif
ifeq ($(wildcard $(patsubst -I%,%,$(filter -I%,$(IBERTY_CFLAGS)))/demangle.h),)
$(error libiberty's demangle.h not found in $(IBERTY_CFLAGS) (it demangles Rust names): install libiberty-dev (Debian) or binutils-devel (Fedora), or set IBERTY_CFLAGS and IBERTY_LIBS)
endif
endif

ANALYZER_CFLAGS := $(DW_CFLAGS) $(IBERTY_CFLAGS) -pthread $(SAN_ALL)
ANALYZER_LIBS := $(DW_LIBS) $(IBERTY_LIBS) -lstdc++ -lm -pthread

# the page -f html writes is built into its writer (.incbin, from the top directory)
$(B)/analyzer/out_html.o: analyzer/html/page.html

$(B)/analyzer/%.o: analyzer/%.c
	@mkdir -p $(@D)
	$(Q)$(call say,CC,$@)$(CC) $(CPPFLAGS_ALL) $(CFLAGS) $(WARN) $(ANALYZER_CFLAGS) -c $< -o $@

$(B)/heapprof-analyze: $(ANALYZER_OBJS)
	$(Q)$(call say,LD,$@)$(CC) $(CFLAGS) $(LDFLAGS) $(SAN_ALL) -o $@ $^ $(ANALYZER_LIBS)

include test/progs/progs.mk
include test/unit/unit.mk
include test/cross/cross.mk
include test/fuzz/fuzz.mk

check: all check-build
	$(Q)BUILD=$(abspath $(B)) SANITIZE='$(SANITIZE)' sh test/run $(TESTS)

# doc/heapprof-analyze.1: each option's entry starts with its --help text (t0004 checks)
man: $(B)/heapprof-analyze
	$(Q)$(B)/heapprof-analyze --help >$(B)/help.txt && \
		sh scripts/man-options $(B)/help.txt doc/heapprof-analyze.1 >$(B)/heapprof-analyze.1 && \
		cp $(B)/heapprof-analyze.1 doc/heapprof-analyze.1

demo: all $(B)/progs/demo
	$(Q)sh scripts/demo.sh $(abspath $(B))

bench: all
	$(Q)sh bench/run $(abspath $(B))

# for bench/run: the flags a static link with libheapprof.a takes
print-static-ldflags:
	@echo $(STATIC_LDFLAGS)

install: all
	install -d $(DESTDIR)$(PREFIX)/lib $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/include/heapprof
	install -m 0644 $(B)/heapprof.so $(DESTDIR)$(PREFIX)/lib/heapprof.so
	install -m 0644 $(B)/heapprof-attach.so $(DESTDIR)$(PREFIX)/lib/heapprof-attach.so
	install -d $(DESTDIR)$(PREFIX)/lib/heapprof
	install -m 0755 $(B)/heapprof-inject $(DESTDIR)$(PREFIX)/lib/heapprof/heapprof-inject
	install -m 0644 $(B)/libheapprof.a $(DESTDIR)$(PREFIX)/lib/libheapprof.a
	install -m 0755 $(B)/heapprof-analyze $(DESTDIR)$(PREFIX)/bin/heapprof-analyze
	install -m 0755 scripts/heapprof $(DESTDIR)$(PREFIX)/bin/heapprof
	install -m 0644 include/heapprof_format.h preload/hp_tag.h preload/hp_tag.c \
		$(DESTDIR)$(PREFIX)/include/heapprof/
	install -d $(DESTDIR)$(PREFIX)/share/man/man1 $(DESTDIR)$(PREFIX)/share/man/man7
	install -m 0644 doc/heapprof-analyze.1 doc/heapprof.1 $(DESTDIR)$(PREFIX)/share/man/man1/
	install -m 0644 doc/heapprof.so.7 $(DESTDIR)$(PREFIX)/share/man/man7/
	install -m 0644 include/heapprof.h $(DESTDIR)$(PREFIX)/include/heapprof.h
	install -d $(DESTDIR)$(PREFIX)/share/heapprof
	install -m 0644 docs/report-schema.json $(DESTDIR)$(PREFIX)/share/heapprof/report-schema.json
	install -d $(DESTDIR)$(PREFIX)/lib/pkgconfig
	printf '%s\n' 'prefix=$(PREFIX)' 'includedir=$${prefix}/include' 'libdir=$${prefix}/lib' \
		'' 'Name: heapprof' \
		'Description: the control API of heapprof.so (snapshots, switches, regions); with --static, libheapprof.a for static programs' \
		'Version: $(VERSION)' 'Cflags: -I$${includedir}' 'Libs:' \
		'Libs.private: -L$${libdir} -lheapprof $(STATIC_LDFLAGS)' \
		>$(DESTDIR)$(PREFIX)/lib/pkgconfig/heapprof.pc

uninstall:
	rm -f $(DESTDIR)$(PREFIX)/lib/heapprof.so $(DESTDIR)$(PREFIX)/lib/libheapprof.a \
		$(DESTDIR)$(PREFIX)/lib/heapprof-attach.so $(DESTDIR)$(PREFIX)/lib/heapprof/heapprof-inject \
		$(DESTDIR)$(PREFIX)/bin/heapprof-analyze \
		$(DESTDIR)$(PREFIX)/bin/heapprof
	rm -rf $(DESTDIR)$(PREFIX)/include/heapprof $(DESTDIR)$(PREFIX)/include/heapprof.h
	rm -f $(DESTDIR)$(PREFIX)/lib/pkgconfig/heapprof.pc
	rm -rf $(DESTDIR)$(PREFIX)/share/heapprof
	rm -f $(DESTDIR)$(PREFIX)/share/man/man1/heapprof-analyze.1 \
		$(DESTDIR)$(PREFIX)/share/man/man1/heapprof.1 $(DESTDIR)$(PREFIX)/share/man/man7/heapprof.so.7

clean:
	rm -rf $(B)

-include $(PRELOAD_OBJS:.o=.d) $(ATTACH_OBJS:.o=.d) $(B)/static/hooks.d $(B)/static/sigmask.d $(B)/rust/hooks.d $(B)/preload/real_wrap.d $(B)/preload/real_libc.d $(ANALYZER_OBJS:.o=.d)
