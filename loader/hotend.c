/*
 * hotend.c - marks the end of the variables that every process start
 * writes.  The doors link the runtime's small files, then their own, then
 * this, then the files with big tables (loader.mk): from the start of .bss
 * to here is what xom_start populates in one system call, instead of
 * taking a page fault (often two: a read, then a write) on each page.
 */
char xom_hot_end[1];
