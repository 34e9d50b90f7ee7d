/*
 * json.c - writes a C string as a JSON string on stdout (json.h).
 */
#include <stdio.h>

#include "json.h"

void json_put_str(const char *s)
{
	putchar('"');
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\')
			printf("\\%c", c);
		else if (c < 0x20)
			printf("\\u%04x", c);
		else
			putchar(c);
	}
	putchar('"');
}
