/*
 * cachelib.c - the libraries of the xom cache tests (tests/cmd/native.sh):
 * built several times with another CACHE_VALUE, so that each copy has a
 * build-id of its own, and once without a build-id, so that its plan is
 * keyed by the file's identity.
 */
int cache_value(void);

int cache_value(void)
{
	return CACHE_VALUE;
}
