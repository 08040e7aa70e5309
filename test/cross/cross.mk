# Raw-mode and foreign-target test builds, included from the top Makefile.
# Host: mkdump, sites-dump and firmware_example under $(B)/progs/. Foreign: for each
# target in CROSS_TARGETS whose cross compiler is installed, heapprof.so (built the
# documented way, make preload CC=... B=...) and the test programs under $(B)/cross/ARCH/.
# test/t5002-foreign-targets.sh runs them under qemu-user and knows the same targets.
# `make check` builds all of them; `make cross` the foreign ones alone.

CROSS_TARGETS ?= s390x mips armhf
cross_cc_s390x := s390x-linux-gnu-gcc
cross_cc_mips := mips-linux-gnu-gcc
cross_cc_armhf := arm-linux-gnueabihf-gcc

# _Unwind_Backtrace needs tables for every frame it crosses, heapprof.so's own too; gcc
# for mips and arm emits none unless asked.
CROSS_CFLAGS := -O2 -g -funwind-tables -fasynchronous-unwind-tables
CROSS_PROG_CFLAGS := $(CROSS_CFLAGS) -fno-ipa-icf -Wall -Wextra -Iinclude -pthread
CROSS_AVAILABLE := $(foreach a,$(CROSS_TARGETS),\
	$(if $(shell command -v $(cross_cc_$(a)) 2>/dev/null),$(a)))

# The port example walks frame records where it can, so it keeps frame pointers.
FW_CFLAGS := -fno-omit-frame-pointer -no-pie -Ipreload
FW_SRCS := test/progs/firmware_example.c preload/hp_tag.c
FW_DEPS := $(FW_SRCS) preload/hp_tag.h include/heapprof_format.h

.PHONY: cross cross-always
cross: $(foreach a,$(CROSS_AVAILABLE),cross-$(a))

check-build: $(P)/mkdump $(P)/sites-dump $(P)/firmware_example cross

$(P)/mkdump: test/progs/encode.h

$(P)/sites-dump: test/progs/sites.c test/progs/dumpheap.c $(P)/libsite.so
	$(Q)$(call say,CC,$@)$(CC) $(PROG_CFLAGS) -fPIE -pie -o $@ $(filter %.c,$^) -L$(P) -lsite \
		-Wl,-rpath,'$$ORIGIN'

$(P)/firmware_example: $(FW_DEPS)
	@mkdir -p $(@D)
	$(Q)$(call say,CC,$@)$(CC) $(PROG_CFLAGS) $(FW_CFLAGS) -o $@ $(FW_SRCS)

# cross_target ARCH: heapprof.so, libheapprof.a, libsite.so, sites, sites-dump,
# firmware_example, leaky, arenas, sites-static, stacktab
define cross_target
CP_$(1) := $(B)/cross/$(1)/progs
.PHONY: cross-$(1)
cross-$(1): $(B)/cross/$(1)/heapprof.so $$(addprefix $$(CP_$(1))/,libsite.so sites sites-dump \
	firmware_example leaky arenas sites-static stacktab)

# the preload's own Makefile rules decide what is out of date; libheapprof.a in the same
# run, since the two share objects
$(B)/cross/$(1)/heapprof.so: cross-always
	$(Q)$$(MAKE) -s --no-print-directory preload static CC=$(cross_cc_$(1)) B=$(B)/cross/$(1) \
		CFLAGS='$(CROSS_CFLAGS)' SANITIZE=

# a static program linked the documented way: libheapprof.a and the flags that
# print-static-ldflags gives for this compiler (libatomic on 32-bit targets)
$$(CP_$(1))/sites-static: test/progs/sites.c test/progs/libsite.c $(B)/cross/$(1)/heapprof.so
	@mkdir -p $$(@D)
	$(Q)$$(call say,CC,$$@)$(cross_cc_$(1)) $(CROSS_PROG_CFLAGS) -static -o $$@ $$(filter %.c,$$^) \
		$(B)/cross/$(1)/libheapprof.a \
		$$$$($$(MAKE) -s --no-print-directory print-static-ldflags CC=$(cross_cc_$(1)))

$$(CP_$(1))/libsite.so: test/progs/libsite.c
	@mkdir -p $$(@D)
	$(Q)$$(call say,CC,$$@)$(cross_cc_$(1)) $(CROSS_PROG_CFLAGS) -fPIC -shared -o $$@ $$<

$$(CP_$(1))/sites: test/progs/sites.c $$(CP_$(1))/libsite.so
	$(Q)$$(call say,CC,$$@)$(cross_cc_$(1)) $(CROSS_PROG_CFLAGS) -fPIE -pie -o $$@ $$< \
		-L$$(CP_$(1)) -lsite -Wl,-rpath,'$$$$ORIGIN'

$$(CP_$(1))/sites-dump: test/progs/sites.c test/progs/dumpheap.c $$(CP_$(1))/libsite.so
	$(Q)$$(call say,CC,$$@)$(cross_cc_$(1)) $(CROSS_PROG_CFLAGS) -fPIE -pie -o $$@ \
		$$(filter %.c,$$^) -L$$(CP_$(1)) -lsite -Wl,-rpath,'$$$$ORIGIN'

$$(CP_$(1))/firmware_example: $(FW_DEPS)
	@mkdir -p $$(@D)
	$(Q)$$(call say,CC,$$@)$(cross_cc_$(1)) $(CROSS_PROG_CFLAGS) $(FW_CFLAGS) -o $$@ $(FW_SRCS)

$$(CP_$(1))/leaky: test/progs/leaky.c
	@mkdir -p $$(@D)
	$(Q)$$(call say,CC,$$@)$(cross_cc_$(1)) $(CROSS_PROG_CFLAGS) -fPIE -pie -o $$@ $$<

$$(CP_$(1))/arenas: test/progs/arenas.c test/progs/mallinfo.h
	@mkdir -p $$(@D)
	$(Q)$$(call say,CC,$$@)$(cross_cc_$(1)) $(CROSS_PROG_CFLAGS) -fPIE -pie -o $$@ $$<

$$(CP_$(1))/stacktab: test/progs/stacktab.c
	@mkdir -p $$(@D)
	$(Q)$$(call say,CC,$$@)$(cross_cc_$(1)) $(CROSS_PROG_CFLAGS) -fPIE -pie -o $$@ $$< -pthread
endef

$(foreach a,$(CROSS_AVAILABLE),$(eval $(call cross_target,$(a))))
