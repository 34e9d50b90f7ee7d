# tests/dl/: what a program sees of the calls that the doors stand in for
# (dlopen, dlmopen, dlclose, dlerror, the signal and key calls), compared
# without xom, under the preload door and under the audit door.  Included
# from the top Makefile.

DL_DIR := $(B)/tests/dl
# sigset is deprecated, and tested here all the same.
DL_CFLAGS := $(CFLAGS) -std=gnu11 $(WARN) -Wno-deprecated-declarations -fPIC
# plug.c built as name:value:folder (under $(DL_DIR)).
DL_PLUGS := plug:42:sub plug2:43:sub2 rplug:7:rsub cplug:8:csub mplug:9:msub \
	prec_r:1:llp prec_r:3:rsub prec_n:1:llp prec_n:2:sub \
	noso:11:sub noso:12:rsub ref:13:sub nodel:14:. thr:77:sub
plug_path = $(DL_DIR)/$(word 3,$(subst :, ,$(1)))/lib$(word 1,$(subst :, ,$(1))).so
DL_PLUG_FILES := $(foreach p,$(DL_PLUGS),$(call plug_path,$(p)))
DL_FILES := $(DL_DIR)/dltest $(DL_DIR)/librunpath.so $(DL_DIR)/librpath.so \
	$(DL_DIR)/libplain.so $(DL_DIR)/libchain.so $(DL_DIR)/libchaintop.so \
	$(DL_DIR)/libsys.so $(DL_DIR)/sub/libsys.so $(DL_DIR)/libglob.so \
	$(DL_DIR)/libloc.so $(DL_DIR)/libneednoso.so $(DL_DIR)/libctor.so \
	$(DL_DIR)/libndl.so $(DL_PLUG_FILES)

define plug_rule
$(call plug_path,$(1)): tests/dl/plug.c
	@mkdir -p $$(@D)
	$$(CC) $$(DL_CFLAGS) -shared -DVALUE=$(word 2,$(subst :, ,$(1))) -o $$@ $$<
endef
$(foreach p,$(DL_PLUGS),$(eval $(call plug_rule,$(p))))

# Two files of one DT_SONAME, in two folders.
$(DL_DIR)/libsys.so $(DL_DIR)/sub/libsys.so: tests/dl/plug.c
	@mkdir -p $(@D)
	$(CC) $(DL_CFLAGS) -shared -DVALUE=$(if $(findstring /sub/,$@),6,5) \
		-Wl,-soname,libsys.so -o $@ $<
$(DL_DIR)/libglob.so $(DL_DIR)/libloc.so: tests/dl/plug.c
	@mkdir -p $(@D)
	$(CC) $(DL_CFLAGS) -shared -DVALUE=1 \
		-Dplug_value=$(if $(findstring glob,$@),glob_value,loc_value) -o $@ $<

$(DL_DIR)/librunpath.so: tests/dl/host.c
	@mkdir -p $(@D)
	$(CC) $(DL_CFLAGS) -shared -DHOST=runpath -o $@ $< \
		-Wl,--enable-new-dtags,-rpath,'$$ORIGIN/sub:$$ORIGIN/sub2'
$(DL_DIR)/librpath.so: tests/dl/host.c
	@mkdir -p $(@D)
	$(CC) $(DL_CFLAGS) -shared -DHOST=rpath -o $@ $< \
		-Wl,--disable-new-dtags,-rpath,'$$ORIGIN/rsub'
$(DL_DIR)/libplain.so $(DL_DIR)/libchain.so: tests/dl/host.c
	@mkdir -p $(@D)
	$(CC) $(DL_CFLAGS) -shared -DHOST=$(patsubst lib%.so,%,$(@F)) -o $@ $<
$(DL_DIR)/libchaintop.so: tests/dl/chaintop.c $(DL_DIR)/libchain.so
	$(CC) $(DL_CFLAGS) -shared -o $@ $< -L$(DL_DIR) -lchain \
		-Wl,--disable-new-dtags,-rpath,'$$ORIGIN/csub:$$ORIGIN'
$(DL_DIR)/libneednoso.so: tests/dl/neednoso.c $(DL_DIR)/rsub/libnoso.so
	$(CC) $(DL_CFLAGS) -shared -o $@ $< -L$(DL_DIR)/rsub -lnoso \
		-Wl,--disable-new-dtags,-rpath,'$$ORIGIN/rsub'
$(DL_DIR)/libctor.so: tests/dl/ctor.c
	@mkdir -p $(@D)
	$(CC) $(DL_CFLAGS) -shared -o $@ $< \
		-Wl,--enable-new-dtags,-rpath,'$$ORIGIN/sub:$$ORIGIN/sub2'
$(DL_DIR)/libndl.so: tests/dl/ndl.c
	@mkdir -p $(@D)
	$(CC) $(DL_CFLAGS) -shared -o $@ $< -Wl,-z,nodefaultlib \
		-Wl,--enable-new-dtags,-rpath,'$$ORIGIN/sub'
# The program's own DT_RPATH names msub/.
$(DL_DIR)/dltest: tests/dl/dltest.c $(DL_DIR)/librunpath.so $(DL_DIR)/librpath.so \
		$(DL_DIR)/libplain.so $(DL_DIR)/libctor.so $(DL_DIR)/libndl.so
	$(CC) $(DL_CFLAGS) -o $@ $< -L$(DL_DIR) -lrunpath -lrpath -lplain -lctor -lndl \
		-Wl,--disable-new-dtags,-rpath,'$$ORIGIN:$$ORIGIN/msub' -pthread

ALL += $(DL_FILES)
.PHONY: check-dl
CHECKS += check-dl
QUICK += check-dl
check-dl: $(DL_FILES) $(B)/libxom.so $(B)/libxom-audit.so
	@B=$(B) tests/dl/run.sh
