# formats/: the files that the runtime reads and the tools write - plans,
# the store index and its sets, symbol files, profile lines - with their
# checks and the store trust rule.  Compiled once, PIC and hidden like the
# runtime, and linked into both: the doors (loader/loader.mk), the helper
# and the xom command.

PLAN_FORMAT_OBJ := $(B)/formats/format.o
