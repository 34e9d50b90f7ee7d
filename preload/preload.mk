# preload/: the LD_PRELOAD door, libxom.so.  It links the loader's core
# (loader/loader.mk, included first) and exports only the interposed
# functions.

ALL += $(B)/libxom.so

PRELOAD_OBJ := $(B)/preload/preload.o $(B)/preload/search.o $(B)/preload/sync.o
# An empty DT_RUNPATH: when the dlopen wrapper is glibc's caller, glibc
# then searches no RPATH (not even the main program's), only
# LD_LIBRARY_PATH, its cache and the default folders; search.c does the
# caller's own part of the search.
PRELOAD_LDFLAGS := -Wl,--version-script=preload/preload.map \
	-Wl,--enable-new-dtags -Wl,-rpath,

$(B)/libxom.so: $(RUNTIME_OBJ) $(PRELOAD_OBJ) preload/preload.map
	$(CC) -o $@ $(RUNTIME_OBJ) $(PRELOAD_OBJ) $(XLDFLAGS) \
		$(RUNTIME_LDFLAGS) $(PRELOAD_LDFLAGS)
