# loader/: the runtime, linked into both doors (libxom.so, see
# preload/preload.mk, and the LD_AUDIT module libxom-audit.so, see
# audit/audit.mk), with the file formats it shares with the tools
# (formats/formats.mk).  The runtime is compiled once (PIC, hidden);
# neither library links Capstone or libelf.

# XOM_OPTIONS's parser, which the xom command links too.
OPTIONS_OBJ := $(B)/loader/options.o $(B)/loader/fmt.o
# A door links the runtime's objects, then its own.  objects.o comes
# first: the runtime's small variables share a page, and its tables lie
# after them in .lbss (XOM_COLD in loader.h), the object table's first
# slots first.
RUNTIME_OBJ := $(addprefix $(B)/loader/,objects.o state.o start.o refuse.o settings.o options.o fmt.o say.o \
	pkey.o kernkey.o elfmem.o stores.o apply.o fault.o calls.o str.o helper.o \
	arrive.o lookup.o batch.o profile.o storeread.o hide.o) $(PLAN_FORMAT_OBJ)
# str.c defines memcpy and friends: the compiler must not turn its loops
# back into calls to them.
$(B)/loader/str.o: CFLAGS += -fno-builtin -fno-tree-loop-distribute-patterns

RUNTIME_LDFLAGS := -shared -Wl,--no-undefined -Wl,-z,now,-z,relro \
	-Wl,--hash-style=both
