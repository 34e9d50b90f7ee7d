# preload/: the LD_PRELOAD door, libxom.so.  It links the loader's core
# (loader/loader.mk, included first) and exports only the interposed
# functions.

ALL += $(B)/libxom.so

$(B)/libxom.so: $(RUNTIME_OBJ) $(B)/preload/preload.o preload/preload.map
	$(CC) -o $@ $(RUNTIME_OBJ) $(B)/preload/preload.o $(XLDFLAGS) \
		$(RUNTIME_LDFLAGS) -Wl,--version-script=preload/preload.map
