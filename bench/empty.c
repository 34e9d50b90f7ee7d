/*
 * empty.c - an LD_PRELOAD library that does nothing.  Start-up with it is the
 * baseline for xom's preload library: both pay for the dynamic linker opening,
 * mapping and relocating one more object, and only the difference is xom's.
 */
int xom_bench_empty;
