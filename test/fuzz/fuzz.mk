# make fuzz: libFuzzer targets for the analyzer (clang; ASan and UBSan). Not part of
# make check. FUZZ_SECONDS per target (default 60); corpora stay in $(B)/fuzz/.
FUZZ_CC ?= clang
FUZZ_SECONDS ?= 60
FZ := $(B)/fuzz
FUZZ_FLAGS := -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
	-Iinclude -Ianalyzer $(DW_CFLAGS) -DHP_VERSION='"$(VERSION)"'
FUZZ_LIB_SRCS := $(filter-out analyzer/main.c,$(ANALYZER_SRCS))

$(FZ)/%: test/fuzz/%.c $(FUZZ_LIB_SRCS)
	@mkdir -p $(@D)
	$(Q)$(call say,FUZZCC,$@)$(FUZZ_CC) $(FUZZ_FLAGS) -o $@ $^ $(ANALYZER_LIBS)

fuzz: $(FZ)/fuzz_scan $(FZ)/fuzz_core
	@mkdir -p $(FZ)/corpus_scan $(FZ)/corpus_core
	$(FZ)/fuzz_scan -max_total_time=$(FUZZ_SECONDS) -max_len=8192 $(FZ)/corpus_scan
	$(FZ)/fuzz_core -max_total_time=$(FUZZ_SECONDS) -max_len=65536 -timeout=10 $(FZ)/corpus_core
