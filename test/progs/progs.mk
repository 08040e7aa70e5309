# Test programs, built by `make check`. Included from the top Makefile.
# sites is built without frame pointers (the distribution default at -O2) on purpose.

P := $(B)/progs
# -fno-ipa-icf: identical site functions must stay apart, or one name would stand for all
PROG_CFLAGS := -O2 -g -fno-ipa-icf -Wall -Wextra -Iinclude -pthread
TEST_PROGS := $(P)/fakeeval $(P)/sites $(P)/sites-nopie $(P)/sites-stripped $(P)/libsite.so $(P)/stress \
	$(P)/thread_churn $(P)/handoff $(P)/regleak \
	$(P)/stacktab $(P)/counts $(P)/cxx $(P)/cxx_index $(P)/cxx_chain $(P)/cxx_oom $(P)/forker $(P)/dlfork $(P)/realloc_check $(P)/libc_semantics \
	$(P)/libstrict_aligned.so $(P)/mangle $(P)/demo $(P)/leaky $(P)/exitstack $(P)/protnone $(P)/keys $(P)/arenas $(P)/arena_links $(P)/pinned $(P)/owners $(P)/shapes \
	$(P)/unwind_check-nofp $(P)/unwind_check-fp $(P)/libdecoy1.so $(P)/libdecoy2.so \
	$(P)/snapapi $(P)/snapapi-cxx $(P)/libplugin.so $(P)/plugin_host $(P)/nolive \
	$(P)/snaplife $(P)/snaplife-linked $(P)/rebuild $(P)/rebuild-extra $(P)/libopenswap.so \
	$(P)/libslowopen.so $(P)/mallocptr $(P)/resident $(P)/manystacks $(P)/manypcs $(P)/peaks $(P)/lifetimes \
	$(P)/manysamples $(P)/tiocsti $(P)/bigmap $(P)/threadexit $(P)/snaproots $(P)/cxxglobal $(P)/otherstacks $(P)/libc_callers \
	$(P)/types $(P)/attachee $(P)/liblate.so $(P)/oomleak $(P)/shop $(P)/maps \
	$(P)/libpystats.so $(P)/arena_server $(P)/leanchurn $(P)/entrycost $(P)/cfaexpr

check-build: $(TEST_PROGS)

$(P)/liblate.so: test/progs/liblate.c
	@mkdir -p $(@D)
	$(Q)$(call say,CC,$@)$(CC) $(PROG_CFLAGS) -fPIC -shared -o $@ $<

# Loaded by t3026's Python script through ctypes: the process's own figures.
$(P)/libpystats.so: test/progs/pystats.c test/progs/mallinfo.h
	@mkdir -p $(@D)
	$(Q)$(call say,CC,$@)$(CC) $(PROG_CFLAGS) -fPIC -shared -o $@ $< -ldl

$(P)/libsite.so: test/progs/libsite.c
	@mkdir -p $(@D)
	$(Q)$(call say,CC,$@)$(CC) $(PROG_CFLAGS) -fPIC -shared -o $@ $<

# Loaded, called and unloaded by plugin_host before the dump (t3005).
$(P)/libplugin.so: test/progs/libplugin.c
	@mkdir -p $(@D)
	$(Q)$(call say,CC,$@)$(CC) $(PROG_CFLAGS) -fPIC -shared -o $@ $<

$(P)/plugin_host: test/progs/plugin_host.c
	@mkdir -p $(@D)
	$(Q)$(call say,CC,$@)$(CC) $(PROG_CFLAGS) -o $@ $< -ldl

$(P)/libstrict_aligned.so: test/progs/libstrict_aligned.c
	@mkdir -p $(@D)
	$(Q)$(call say,CC,$@)$(CC) $(PROG_CFLAGS) -fPIC -shared -o $@ $<

$(P)/sites: test/progs/sites.c $(P)/libsite.so
	$(Q)$(call say,CC,$@)$(CC) $(PROG_CFLAGS) -fPIE -pie -o $@ $< -L$(P) -lsite -Wl,-rpath,'$$ORIGIN'

$(P)/sites-nopie: test/progs/sites.c $(P)/libsite.so
	$(Q)$(call say,CC,$@)$(CC) $(PROG_CFLAGS) -fno-pie -no-pie -o $@ $< -L$(P) -lsite -Wl,-rpath,'$$ORIGIN'

# Fixed addresses for made-up stacks through a fake evaluation loop (t2013)
$(P)/fakeeval: test/progs/fakeeval.c
	@mkdir -p $(@D)
	$(Q)$(call say,CC,$@)$(CC) $(PROG_CFLAGS) -fno-pie -no-pie -o $@ $<

# Without PIE, malloc's address taken: a canonical PLT entry (t1001)
$(P)/mallocptr: test/progs/mallocptr.c
	@mkdir -p $(@D)
	$(Q)$(call say,CC,$@)$(CC) $(PROG_CFLAGS) -fno-pie -no-pie -o $@ $<

# Debug info moves to $(B)/debug/.build-id/xx/rest.debug, found only by build-id.
$(P)/sites-stripped: $(P)/sites
	$(Q)$(call say,STRIP,$@)id=$$(readelf -n $< | sed -n 's/.*Build ID: //p') && \
		mkdir -p $(B)/debug/.build-id/$${id%$${id#??}} && \
		objcopy --only-keep-debug $< $(B)/debug/.build-id/$${id%$${id#??}}/$${id#??}.debug && \
		objcopy --strip-all $< $@

# Preloaded with heapprof.so: each snapshot holds its lock 200 ms longer (t6003).
$(P)/libslowopen.so: test/progs/slowopen.c
	@mkdir -p $(@D)
	$(Q)$(call say,CC,$@)$(CC) $(PROG_CFLAGS) -fPIC -shared -o $@ $< -ldl

# Preloaded into the analyzer: swaps a file for a FIFO at its second blocking open (t2002).
$(P)/libopenswap.so: test/progs/openswap.c
	@mkdir -p $(@D)
	$(Q)$(call say,CC,$@)$(CC) $(PROG_CFLAGS) -fPIC -shared -o $@ $< -ldl

# One program built twice, the second with a function more before big() (t3010);
# -fno-toplevel-reorder keeps the functions in source order, so big() moves.
$(P)/rebuild-extra: REBUILD := -DEXTRA
$(P)/rebuild $(P)/rebuild-extra: test/progs/rebuild.c
	@mkdir -p $(@D)
	$(Q)$(call say,CC,$@)$(CC) $(PROG_CFLAGS) -fno-toplevel-reorder $(REBUILD) -o $@ $<

# Its clock_gettime stands in for libc's in heapprof.so too: exported (t4012)
$(P)/manysamples: test/progs/manysamples.c
	@mkdir -p $(@D)
	$(Q)$(call say,CC,$@)$(CC) $(PROG_CFLAGS) -rdynamic -o $@ $<

# Programs built from one C file with nothing special.
PLAIN_PROGS := $(addprefix $(P)/,stress manypcs leanchurn arena_links shapes thread_churn handoff regleak forker dlfork realloc_check libc_semantics mangle demo mkdump stacktab leaky exitstack protnone keys nolive snaplife arenas pinned owners resident manystacks peaks lifetimes tiocsti bigmap threadexit otherstacks libc_callers attachee oomleak maps entrycost cfaexpr)
$(PLAIN_PROGS): $(P)/%: test/progs/%.c include/heapprof_format.h
	@mkdir -p $(@D)
	$(Q)$(call say,CC,$@)$(CC) $(PROG_CFLAGS) -o $@ $<
$(P)/arenas $(P)/pinned $(P)/arena_links: test/progs/mallinfo.h

# a site in a unit of assembly, whose debug info names no function (x86-64 only)
ifeq ($(shell uname -m),x86_64)
check-build: $(P)/asmsite
endif
$(P)/asmsite: test/progs/asmsite.c test/progs/asmsite_x86_64.S
	@mkdir -p $(@D)
	$(Q)$(call say,CC,$@)$(CC) $(PROG_CFLAGS) -o $@ $^

# C and C++ sites in one program; -ldl for dlsym of the region API
$(P)/counts: test/progs/counts.c test/progs/counts_cxx.cc
	@mkdir -p $(@D)
	$(Q)$(call say,CXX,$@)$(CC) $(PROG_CFLAGS) -c -o $@.o test/progs/counts.c && \
		$(CXX) -O2 -g -fno-ipa-icf -Wall -Wextra -c -o $@-cxx.o test/progs/counts_cxx.cc && \
		$(CXX) -pthread -o $@ $@.o $@-cxx.o -ldl

$(P)/cxx_chain: test/progs/cxx_chain.cc
	@mkdir -p $(@D)
	$(Q)$(call say,CXX,$@)$(CXX) -O2 -g -fno-ipa-icf -std=c++17 -Wall -Wextra -o $@ $<

$(P)/cxx_index: test/progs/cxx_index.cc
	@mkdir -p $(@D)
	$(Q)$(call say,CXX,$@)$(CXX) -O2 -g -std=c++17 -Wall -Wextra -o $@ $<

$(P)/cxx_oom: test/progs/cxx_oom.cc
	@mkdir -p $(@D)
	$(Q)$(call say,CXX,$@)$(CXX) -O2 -g -std=c++17 -Wall -Wextra -o $@ $<

$(P)/cxx: test/progs/cxx.cc
	@mkdir -p $(@D)
	$(Q)$(call say,CXX,$@)$(CXX) -O2 -g -fno-ipa-icf -std=c++17 -Wall -Wextra -o $@ $<

$(P)/types: test/progs/types.cc
	@mkdir -p $(@D)
	$(Q)$(call say,CXX,$@)$(CXX) -O2 -g -std=c++17 -Wall -Wextra -o $@ $<

$(P)/arena_server: test/progs/arena_server.cc test/progs/mallinfo.h
	@mkdir -p $(@D)
	$(Q)$(call say,CXX,$@)$(CXX) -O2 -g -std=c++17 -Wall -Wextra -pthread -o $@ $<

$(P)/shop: test/progs/shop.cc
	@mkdir -p $(@D)
	$(Q)$(call say,CXX,$@)$(CXX) -O2 -g -std=c++17 -Wall -Wextra -o $@ $<

# The unwinders on their own, in a program built without and with frame pointers.
UNWIND_SRCS := $(wildcard preload/unwind*.c preload/cfi_*.c) preload/exports.c preload/gcc_unwind.c
$(P)/unwind_check-nofp: FP_FLAG := -fomit-frame-pointer
$(P)/unwind_check-fp: FP_FLAG := -fno-omit-frame-pointer
$(P)/unwind_check-nofp $(P)/unwind_check-fp: test/progs/unwind_check.c $(UNWIND_SRCS)
	@mkdir -p $(@D)
	$(Q)$(call say,CC,$@)$(CC) $(PROG_CFLAGS) $(FP_FLAG) -rdynamic -o $@ $^ -ldl -lgcc_s

# Loaded one after the other at the same address by unwind_check (see decoy.S).
$(P)/libdecoy1.so: DECOY := -DFRAME=8 -DSLOT=-8
$(P)/libdecoy2.so: DECOY := -DFRAME=72 -DSLOT=8
$(P)/libdecoy1.so $(P)/libdecoy2.so: test/progs/decoy.S
	@mkdir -p $(@D)
	$(Q)$(call say,AS,$@)$(CC) $(DECOY) -shared -fPIC -nostdlib -o $@ $<

# Built against include/heapprof.h alone: runs with and without the preload.
$(P)/snaproots: test/progs/snaproots.c include/heapprof.h
	@mkdir -p $(@D)
	$(Q)$(call say,CC,$@)$(CC) $(PROG_CFLAGS) -o $@ $<

$(P)/cxxglobal: test/progs/cxxglobal.cc
	@mkdir -p $(@D)
	$(Q)$(call say,CXX,$@)$(CXX) -O2 -g -Wall -Wextra -o $@ $<

$(P)/snapapi: test/progs/snapapi.c include/heapprof.h
	@mkdir -p $(@D)
	$(Q)$(call say,CC,$@)$(CC) $(PROG_CFLAGS) -o $@ $<

$(P)/snapapi-cxx: test/progs/snapapi.c include/heapprof.h
	@mkdir -p $(@D)
	$(Q)$(call say,CXX,$@)$(CXX) -x c++ -O2 -g -fno-ipa-icf -Wall -Wextra -Iinclude -pthread -o $@ $<

# Linked with heapprof.so (absolute run path, as a setuid program needs) instead of
# preloaded: how heapprof reaches a process with raised privileges (t6003).
$(P)/snaplife-linked: test/progs/snaplife.c $(B)/heapprof.so
	@mkdir -p $(@D)
	$(Q)$(call say,CC,$@)$(CC) $(PROG_CFLAGS) -o $@ $< $(abspath $(B)/heapprof.so) \
		-Wl,-rpath,$(abspath $(B))

# Linked with libheapprof.a instead of preloaded (t3011): static glibc, and with Debian's
# musl-gcc static and dynamic when it is installed (scripts/install-deps --test).
STATIC_PROGS := $(P)/sites-static $(P)/forker-static $(P)/snapapi-static $(P)/leaky-static \
	$(P)/getline-linked $(P)/exitstack-static $(P)/snaproots-static \
	$(P)/cxxglobal-static
$(P)/sites-static: test/progs/sites.c test/progs/libsite.c $(B)/libheapprof.a
	@mkdir -p $(@D)
	$(Q)$(call say,CC,$@)$(CC) $(PROG_CFLAGS) -static $(SAN_PRE) -o $@ $(filter %.c,$^) $(B)/libheapprof.a $(STATIC_LDFLAGS)

$(P)/%-static: test/progs/%.c $(B)/libheapprof.a
	@mkdir -p $(@D)
	$(Q)$(call say,CC,$@)$(CC) $(PROG_CFLAGS) -static $(SAN_PRE) -o $@ $< $(B)/libheapprof.a $(STATIC_LDFLAGS)

$(P)/cxxglobal-static: test/progs/cxxglobal.cc $(B)/libheapprof.a
	@mkdir -p $(@D)
	$(Q)$(call say,CXX,$@)$(CXX) -O2 -g -Wall -Wextra -static $(SAN_PRE) -o $@ $< $(B)/libheapprof.a $(STATIC_LDFLAGS)

# dynamic, with libheapprof.a: the shared libc's calls are not wrapped
$(P)/getline-linked: test/progs/getline.c $(B)/libheapprof.a
	@mkdir -p $(@D)
	$(Q)$(call say,CC,$@)$(CC) $(PROG_CFLAGS) $(SAN_PRE) -o $@ $< $(B)/libheapprof.a $(STATIC_LDFLAGS)

MUSL_CC ?= $(shell command -v musl-gcc 2>/dev/null)
ifneq ($(MUSL_CC),)
STATIC_PROGS += $(P)/sites-musl-static $(P)/sites-musl $(P)/forker-musl-static $(P)/snapapi-musl-static \
	$(P)/getline-musl $(P)/libc_callers-musl-static
MUSL_LIB := $(B)/musl/libheapprof.a

# the same archive built by musl-gcc, in a build directory of its own
$(MUSL_LIB): $(PRELOAD_SRCS) preload/real_wrap.c preload/gcc_unwind_linked.c $(wildcard preload/*.h include/*.h)
	$(Q)$(MAKE) --no-print-directory static CC=$(MUSL_CC) B=$(B)/musl SANITIZE=

$(P)/sites-musl-static $(P)/sites-musl: test/progs/sites.c test/progs/libsite.c $(MUSL_LIB)
	@mkdir -p $(@D)
	$(Q)$(call say,CC,$@)$(MUSL_CC) $(PROG_CFLAGS) $(if $(findstring static,$@),-static) -o $@ \
		$(filter %.c,$^) $(MUSL_LIB) $(STATIC_LDFLAGS)

$(P)/getline-musl: test/progs/getline.c $(MUSL_LIB)
	$(Q)$(call say,CC,$@)$(MUSL_CC) $(PROG_CFLAGS) -o $@ $< $(MUSL_LIB) $(STATIC_LDFLAGS)

$(P)/%-musl-static: test/progs/%.c $(MUSL_LIB)
	@mkdir -p $(@D)
	$(Q)$(call say,CC,$@)$(MUSL_CC) $(PROG_CFLAGS) -static -o $@ $< $(MUSL_LIB) $(STATIC_LDFLAGS)
endif

check-build: $(STATIC_PROGS)

# Python capture from C inside real interpreters, through ctypes (t1005, t3014): the
# preload's interp_python.c and the analyzer's, with table.c's record memory stubbed.
TEST_PROGS += $(P)/libpycapture.so $(P)/pyhost
check-build: $(P)/libpycapture.so $(P)/pyhost
$(P)/pyhost: test/progs/pyhost.c
	@mkdir -p $(@D)
	$(Q)$(call say,CC,$@)$(CC) $(PROG_CFLAGS) -o $@ $< -ldl
$(P)/libpycapture.so: test/progs/pycapture.c preload/interp_python.c preload/interp_python.h preload/interp.h preload/util.c \
		analyzer/python.c analyzer/python.h include/heapprof_format.h
	@mkdir -p $(@D)
	$(Q)$(call say,CC,$@)$(CC) $(PROG_CFLAGS) -Ipreload -Ianalyzer -fPIC -shared \
		-fvisibility=hidden -o $@ test/progs/pycapture.c preload/interp_python.c preload/util.c \
		analyzer/python.c -ldl

# The preload's sampling math against libm's (t1010): preload/util.c's -log and
# 1 - exp(-x), which spare heapprof.so loading libm.
TEST_PROGS += $(P)/sample_math
check-build: $(P)/sample_math
$(P)/sample_math: test/progs/sample_math.c preload/util.c preload/util.h
	@mkdir -p $(@D)
	$(Q)$(call say,CC,$@)$(CC) $(PROG_CFLAGS) -Ipreload -o $@ test/progs/sample_math.c preload/util.c -lm
