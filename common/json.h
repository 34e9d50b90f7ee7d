/*
 * json.h - the one JSON string writer of xom's tools: xom (cache stats
 * --json, status --system --json) and xom-scan --json print names through
 * it, so a file or process name with quotes, backslashes or control bytes
 * is escaped the same way everywhere.
 */
#ifndef XOM_JSON_H
#define XOM_JSON_H

/* s as a JSON string, quotes included, on stdout.  Bytes from 0x7f up
 * pass through unchanged. */
void json_put_str(const char *s);

#endif
