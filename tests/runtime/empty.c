/* An empty shared library: the baseline preload for bench/startup.sh. */
void xom_empty_marker(void);
void xom_empty_marker(void)
{
}
