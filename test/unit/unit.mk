# Unit tests: link the analyzer's objects (all but main.o) into small test programs.
# Included from the top Makefile; built with the analyzer's flags and sanitizers.

U := $(B)/unit
UNIT_TESTS := $(U)/sym_test $(U)/scan_test $(U)/v2_test $(U)/pprof_test $(U)/flame_test \
	$(U)/names_test $(U)/counts_test $(U)/timeline_test $(U)/chart_test $(U)/pyname $(U)/python_test \
	$(U)/util_test $(U)/pystacks $(U)/pystack_test $(U)/graph_test $(U)/env_table $(U)/spool_test $(U)/maps_test \
	$(U)/pyobj_test $(U)/duration_test

check-build: $(UNIT_TESTS)

$(U)/%.o: test/unit/%.c
	@mkdir -p $(@D)
	$(Q)$(call say,CC,$@)$(CC) $(CPPFLAGS_ALL) -Ianalyzer -Ipreload -Itest/progs $(CFLAGS) $(WARN) \
		$(ANALYZER_CFLAGS) -c $< -o $@

# the scan test checks its encoder against the preload's portable writer
$(U)/hp_tag.o: preload/hp_tag.c
	@mkdir -p $(@D)
	$(Q)$(call say,CC,$@)$(CC) $(CPPFLAGS_ALL) $(CFLAGS) $(WARN) $(SAN_ALL) -c $< -o $@

$(U)/scan_test: $(U)/hp_tag.o

# preload/options.c's table, printed (t0004): the preload's code, no analyzer objects
$(U)/env_table: $(U)/env_table.o
	$(Q)$(call say,LD,$@)$(CC) $(CFLAGS) $(LDFLAGS) $(SAN_ALL) -o $@ $^

# include/heapprof_duration.h, which both halves read DURATIONs with: no objects
$(U)/duration_test: $(U)/duration_test.o
	$(Q)$(call say,LD,$@)$(CC) $(CFLAGS) $(LDFLAGS) $(SAN_ALL) -o $@ $^

$(U)/%: $(U)/%.o $(ANALYZER_LIB_OBJS)
	$(Q)$(call say,LD,$@)$(CC) $(CFLAGS) $(LDFLAGS) $(SAN_ALL) -o $@ $^ $(ANALYZER_LIBS)

# CPPFLAGS_ALL has -MMD: the units are rebuilt when a header they include changes
-include $(wildcard $(U)/*.d)
