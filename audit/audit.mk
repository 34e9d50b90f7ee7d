# audit/: the LD_AUDIT door, libxom-audit.so.  It links the loader's core
# (loader/loader.mk, included first) and exports la_* and xom_audit_api
# only.

ALL += $(B)/libxom-audit.so

AUDIT_OBJ := $(B)/audit/audit.o
AUDIT_LDFLAGS := -Wl,--version-script=audit/audit.map

$(B)/libxom-audit.so: $(RUNTIME_OBJ) $(AUDIT_OBJ) audit/audit.map
	$(CC) -o $@ $(RUNTIME_OBJ) $(AUDIT_OBJ) $(XLDFLAGS) \
		$(RUNTIME_LDFLAGS) $(AUDIT_LDFLAGS)
