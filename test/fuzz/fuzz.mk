# make fuzz: libFuzzer targets for the analyzer (clang; ASan and UBSan). Not part of
# make check. FUZZ_SECONDS per target (default 60); corpora grow in $(B)/fuzz/, seeded
# from test/fuzz/seeds/ (test/fuzz/make-seeds.sh writes them). make fuzz-smoke runs
# every target on the seeds alone and prints one test line (.ci/run counts it).
# fuzz_core takes plain and compressed cores and runs every writer, --base and --leaks
# on each, so the smoke covers those in two targets' time; fuzz_graph makes up glibc
# arenas whose links loop and heap graphs of the shapes that were slow; fuzz_fleet
# merges two to four cores as heapprof-analyze PROGRAM CORE CORE... does.
FUZZ_CC ?= clang
FUZZ_SECONDS ?= 60
FZ := $(B)/fuzz
FUZZ_FLAGS := -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
	-Iinclude -Ianalyzer $(DW_CFLAGS) $(IBERTY_CFLAGS) -DHP_VERSION='"$(VERSION)"'
FUZZ_LIB_SRCS := $(filter-out analyzer/main.c,$(ANALYZER_SRCS))
FUZZ_SCAN_ARGS := -max_len=8192
FUZZ_CORE_ARGS := -max_len=65536 -timeout=10
FUZZ_GRAPH_ARGS := -max_len=4096 -timeout=10
FUZZ_FLEET_ARGS := -max_len=131072 -timeout=10

# fuzz_fleet: the merge's die() comes back to the target; PROGRAM (the target itself)
# has no build-id, so that it passes for the program of any seed
$(FZ)/fuzz_fleet: FUZZ_LINK := -Wl,--wrap=die -Wl,--build-id=none

$(FZ)/%: test/fuzz/%.c $(FUZZ_LIB_SRCS)
	@mkdir -p $(@D)
	$(Q)$(call say,FUZZCC,$@)$(FUZZ_CC) $(FUZZ_FLAGS) $(FUZZ_LINK) -o $@ $^ $(ANALYZER_LIBS)

fuzz: $(FZ)/fuzz_scan $(FZ)/fuzz_core $(FZ)/fuzz_graph $(FZ)/fuzz_fleet
	@mkdir -p $(FZ)/corpus_scan $(FZ)/corpus_core $(FZ)/corpus_graph $(FZ)/corpus_fleet
	$(FZ)/fuzz_scan -max_total_time=$(FUZZ_SECONDS) $(FUZZ_SCAN_ARGS) $(FZ)/corpus_scan test/fuzz/seeds/scan
	$(FZ)/fuzz_core -max_total_time=$(FUZZ_SECONDS) $(FUZZ_CORE_ARGS) $(FZ)/corpus_core test/fuzz/seeds/core
	$(FZ)/fuzz_graph -max_total_time=$(FUZZ_SECONDS) $(FUZZ_GRAPH_ARGS) $(FZ)/corpus_graph test/fuzz/seeds/graph
	$(FZ)/fuzz_fleet -max_total_time=$(FUZZ_SECONDS) $(FUZZ_FLEET_ARGS) $(FZ)/corpus_fleet test/fuzz/seeds/fleet

fuzz-smoke:
	@FUZZ_CC='$(FUZZ_CC)' FUZZ_SECONDS='$(FUZZ_SECONDS)' B='$(B)' MAKE='$(MAKE)' \
		FUZZ_SCAN_ARGS='$(FUZZ_SCAN_ARGS)' FUZZ_CORE_ARGS='$(FUZZ_CORE_ARGS)' \
		FUZZ_GRAPH_ARGS='$(FUZZ_GRAPH_ARGS)' FUZZ_FLEET_ARGS='$(FUZZ_FLEET_ARGS)' \
		sh test/fuzz/smoke.sh
