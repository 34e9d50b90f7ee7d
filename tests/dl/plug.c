/* A plugin: each copy is built with its own VALUE, so that a test can tell
 * which file a name was resolved to. */
int plug_value(void);
int plug_value(void)
{
	return VALUE;
}
