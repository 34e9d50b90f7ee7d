/*
 * gadgets.c - lists every WRPKRU (0F 01 EF) and XRSTOR (0F AE /5, mod != 3)
 * byte sequence in the executable segments' file bytes, aligned to a
 * decoded instruction or not: jumping into one can switch the protection
 * keys off (ERIM, USENIX Security 2019).
 *
 * Reads: the image and segs (elf.c), the instruction-start bitmap (disasm.c).
 * Adds: the map's gadgets, sorted by address.
 * Calls: util.c only.
 */
#include <string.h>

#include "scan.h"

static bool is_prefix(uint8_t b)
{
	return (b >= 0x40 && b <= 0x4f) || b == 0x66 || b == 0x67 || b == 0xf0 ||
	       b == 0xf2 || b == 0xf3 || b == 0x2e || b == 0x36 || b == 0x3e ||
	       b == 0x26 || b == 0x64 || b == 0x65;
}

/* A gadget is aligned when a decoded instruction begins at it or at the
 * prefixes right before it (REX.W 0F AE /5 is xrstor64). */
static bool gadget_aligned(const struct scan *s, const struct xom_segment *g,
                           uint64_t off)
{
	uint64_t va = g->vaddr + (off - g->offset);

	for (unsigned k = 0; k <= 4 && k <= off - g->offset; k++) {
		if (k && !is_prefix(s->img[off - k]))
			return false;
		if (scan_is_start(s, va - k))
			return true;
	}
	return false;
}

int gadgets_find(struct scan *s, struct xom_map *m)
{
	const struct xom_segment *g = s->segs.p;
	struct vec v = { .size = sizeof(struct xom_gadget) };

	for (size_t i = 0; i < s->segs.n; i++) {
		const uint8_t *base = s->img + g[i].offset, *p = base;
		const uint8_t *end = base + g[i].filesz;

		while (end - p >= 3 && (p = memchr(p, 0x0f, (size_t)(end - p - 2)))) {
			int kind = -1;

			if (p[1] == 0x01 && p[2] == 0xef)
				kind = XOM_G_WRPKRU;
			else if (p[1] == 0xae && (p[2] >> 6) != 3 && ((p[2] >> 3) & 7) == 5)
				kind = XOM_G_XRSTOR;
			if (kind >= 0) {
				struct xom_gadget *x = vec_push(&v);
				uint64_t off = g[i].offset + (uint64_t)(p - base);
				if (!x) {
					vec_free(&v);
					return scan_fail(s, XOM_SCAN_ENOMEM, "out of memory");
				}
				*x = (struct xom_gadget){
					.addr = g[i].vaddr + (uint64_t)(p - base),
					.kind = (uint8_t)kind,
					.aligned = gadget_aligned(s, &g[i], off),
				};
			}
			p++;
		}
	}
	m->gadgets = v.p;
	m->ngadgets = v.n;
	return 0;
}
