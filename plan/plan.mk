# plan/: the tools' side of the plans, which the runtime never links: the
# plan builder (build.c, from the scanner's code map), the store writer
# (storewrite.c, for the helper and xom cache) and the helper itself,
# xom-plan, which the runtime runs on a plan-cache miss.

ALL += $(B)/xom-plan

# The helper is found by the runtime next to its own library.  It is
# linked statically, so that no dynamic linker runs for it and neither
# LD_PRELOAD nor /etc/ld.so.preload can load xom into it.
PLAN_TOOL_OBJ := $(B)/plan/build.o $(B)/plan/storewrite.o \
	$(PLAN_FORMAT_OBJ)
XOM_PLAN_OBJ := $(B)/plan/xom-plan.o $(PLAN_TOOL_OBJ)
#
# The libraries' own static link lines come from pkg-config: elfutils 0.192
# adds -lzstd, for one.  Its libelf.a also calls search-tree functions that
# only elfutils' internal libeu holds, which Debian does not ship (elfutils
# bug 32293): when the link says they are missing, and only then,
# plan/eu-search.c is compiled and the link tried again with it.
XOM_PLAN_LINK = $(CC) -static -o $@ $(XOM_PLAN_OBJ) $(B)/libxom-scan.a $(XLDFLAGS)
EU_SEARCH_OBJ := $(B)/plan/eu-search.o
$(B)/xom-plan: $(XOM_PLAN_OBJ) $(B)/libxom-scan.a plan/eu-search.c
	@libs="$$(pkg-config --static --libs libelf capstone) -pthread" && \
	echo "$(XOM_PLAN_LINK) $$libs" && \
	if ! $(XOM_PLAN_LINK) $$libs 2>$@.log; then \
		if ! grep -q "undefined reference to .eu_" $@.log; then cat $@.log >&2; rm -f $@.log; exit 1; fi; \
		echo "xom-plan: libelf.a lacks elfutils' libeu (elfutils bug 32293); linking plan/eu-search.c"; \
		echo "$(CC) $(CFLAGS) $(XCFLAGS) -c -o $(EU_SEARCH_OBJ) plan/eu-search.c" && \
		$(CC) $(CFLAGS) $(XCFLAGS) -c -o $(EU_SEARCH_OBJ) plan/eu-search.c && \
		echo "$(XOM_PLAN_LINK) $(EU_SEARCH_OBJ) $$libs" && \
		$(XOM_PLAN_LINK) $(EU_SEARCH_OBJ) $$libs; \
	else cat $@.log >&2; fi; rc=$$?; rm -f $@.log; exit $$rc
