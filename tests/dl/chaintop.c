/* libchaintop.so: needs libchain.so (host.c, no paths of its own), and
 * names csub/ in its DT_RPATH for the objects it loads. */
void *chain_open(const char *name, int mode);
void *chain_top(const char *name, int mode);
void *chain_top(const char *name, int mode)
{
	return chain_open(name, mode);
}
