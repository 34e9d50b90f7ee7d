# common/: the small pieces that xom and xom-scan both link: the JSON
# string writer, getopt_long that names the word it read (for their
# messages), and the exit codes of every tool (xom_exit.h, a header).

COMMON_OBJ := $(B)/common/json.o $(B)/common/optword.o
