# loader/: the runtime, linked into both doors (libxom.so, see
# preload/preload.mk, and the LD_AUDIT module libxom-audit.so, see
# audit/audit.mk), and
# loader/plan/: the plan file, shared with the xom-plan helper that runs the
# scanner on a plan-cache miss.  The runtime is compiled once (PIC, hidden);
# neither library links Capstone or libelf.

PLAN_FORMAT_OBJ := $(B)/loader/plan/format.o
# XOM_OPTIONS's parser, which the xom command links too.
OPTIONS_OBJ := $(B)/loader/options.o $(B)/loader/fmt.o
# A door links the runtime's objects, then its own.  objects.o comes
# first: the runtime's small variables share a page, and its tables lie
# after them in .lbss (XOM_COLD in loader.h), the object table's first
# slots first.
RUNTIME_OBJ := $(addprefix $(B)/loader/,objects.o state.o start.o refuse.o settings.o options.o fmt.o say.o \
	pkey.o kernkey.o elfmem.o store.o apply.o fault.o calls.o str.o helper.o \
	arrive.o lookup.o batch.o profile.o storeread.o) $(PLAN_FORMAT_OBJ)
# str.c defines memcpy and friends: the compiler must not turn its loops
# back into calls to them.
$(B)/loader/str.o: CFLAGS += -fno-builtin -fno-tree-loop-distribute-patterns

RUNTIME_LDFLAGS := -shared -Wl,--no-undefined -Wl,-z,now,-z,relro \
	-Wl,--hash-style=both

ALL += $(B)/xom-plan

# The helper is found by the runtime next to its own library.  It is
# linked statically, so that no dynamic linker runs for it and neither
# LD_PRELOAD nor /etc/ld.so.preload can load xom into it.
PLAN_TOOL_OBJ := $(B)/loader/plan/build.o $(B)/loader/plan/store.o \
	$(PLAN_FORMAT_OBJ)
XOM_PLAN_OBJ := $(B)/loader/plan/xom-plan.o $(PLAN_TOOL_OBJ)
#
# The libraries' own static link lines come from pkg-config: elfutils 0.192
# adds -lzstd, for one.  Its libelf.a also calls search-tree functions that
# only elfutils' internal libeu holds, which Debian does not ship (elfutils
# bug 32293): when the link says they are missing, and only then,
# loader/plan/eu-search.c is compiled and the link tried again with it.
XOM_PLAN_LINK = $(CC) -static -o $@ $(XOM_PLAN_OBJ) $(B)/libxom-scan.a $(XLDFLAGS)
EU_SEARCH_OBJ := $(B)/loader/plan/eu-search.o
$(B)/xom-plan: $(XOM_PLAN_OBJ) $(B)/libxom-scan.a loader/plan/eu-search.c
	@libs="$$(pkg-config --static --libs libelf capstone) -pthread" && \
	echo "$(XOM_PLAN_LINK) $$libs" && \
	if ! $(XOM_PLAN_LINK) $$libs 2>$@.log; then \
		if ! grep -q "undefined reference to .eu_" $@.log; then cat $@.log >&2; rm -f $@.log; exit 1; fi; \
		echo "xom-plan: libelf.a lacks elfutils' libeu (elfutils bug 32293); linking loader/plan/eu-search.c"; \
		echo "$(CC) $(CFLAGS) $(XCFLAGS) -c -o $(EU_SEARCH_OBJ) loader/plan/eu-search.c" && \
		$(CC) $(CFLAGS) $(XCFLAGS) -c -o $(EU_SEARCH_OBJ) loader/plan/eu-search.c && \
		echo "$(XOM_PLAN_LINK) $(EU_SEARCH_OBJ) $$libs" && \
		$(XOM_PLAN_LINK) $(EU_SEARCH_OBJ) $$libs; \
	else cat $@.log >&2; fi; rc=$$?; rm -f $@.log; exit $$rc
