/* libneednoso.so: a DT_NEEDED entry "libnoso.so", with rsub/ (which holds
 * another libnoso.so) in its RPATH. */
int plug_value(void);
int needed_value(void);
int needed_value(void)
{
	return plug_value();
}
