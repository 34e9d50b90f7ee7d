/*
 * ehframe.c - function starts and extents from .eh_frame.
 *
 * Stripped libraries are the norm on a distribution, and their call-frame
 * information is then the only complete list of functions.  Each FDE gives
 * [pc_begin, pc_begin + pc_range).  The format is the one the LSB describes
 * (CIE/FDE records, DW_EH_PE pointer encodings); only what is needed to
 * reach pc_begin and pc_range is decoded.
 *
 * Reads: the image, secs and segs (elf.c).
 * Adds: code entries and function extents.
 * Calls: util.c only.
 */
#include <elf.h>
#include <string.h>

#include "scan.h"

struct cur {
	const uint8_t *img;
	uint64_t lo, pos, end;  /* file offsets: section start, cursor, end */
	uint64_t vbase;         /* vaddr of file offset 0 of this section */
};

static bool get(struct cur *c, void *dst, uint64_t n)
{
	if (c->end - c->pos < n)
		return false;
	memcpy(dst, c->img + c->pos, n);
	c->pos += n;
	return true;
}

/* Reads the 7-bit groups of a LEB128 number; *shift ends past the last
 * group and *last is its byte, which get_sleb() needs for the sign. */
static bool get_leb(struct cur *c, uint64_t *v, unsigned *shift, uint8_t *last)
{
	uint8_t b;

	*v = 0;
	*shift = 0;
	do {
		if (!get(c, &b, 1))
			return false;
		if (*shift < 64)
			*v |= (uint64_t)(b & 0x7f) << *shift;
		*shift += 7;
	} while (b & 0x80);
	*last = b;
	return true;
}

static bool get_uleb(struct cur *c, uint64_t *v)
{
	unsigned shift;
	uint8_t last;

	return get_leb(c, v, &shift, &last);
}

static bool get_sleb(struct cur *c, int64_t *v)
{
	unsigned shift;
	uint64_t r;
	uint8_t last;

	if (!get_leb(c, &r, &shift, &last))
		return false;
	if (shift < 64 && (last & 0x40))
		r |= ~0ull << shift;
	*v = (int64_t)r;
	return true;
}

/* Reads a DW_EH_PE-encoded pointer; pcrel is applied, nothing else is. */
static bool get_ptr(struct cur *c, uint8_t enc, uint64_t *v)
{
	uint64_t field = c->vbase + c->pos;
	union { uint16_t u16; uint32_t u32; uint64_t u64; int16_t s16;
	        int32_t s32; } u = { 0 };
	int64_t sv;
	bool ok;

	switch (enc & 0x0f) {
	case 0x00: ok = get(c, &u.u64, 8); *v = u.u64; break;
	case 0x01: ok = get_uleb(c, v); break;
	case 0x02: ok = get(c, &u.u16, 2); *v = u.u16; break;
	case 0x03: ok = get(c, &u.u32, 4); *v = u.u32; break;
	case 0x04: ok = get(c, &u.u64, 8); *v = u.u64; break;
	case 0x09: ok = get_sleb(c, &sv); *v = (uint64_t)sv; break;
	case 0x0a: ok = get(c, &u.s16, 2); *v = (uint64_t)(int64_t)u.s16; break;
	case 0x0b: ok = get(c, &u.s32, 4); *v = (uint64_t)(int64_t)u.s32; break;
	case 0x0c: ok = get(c, &u.u64, 8); *v = u.u64; break;
	default: return false;
	}
	if (!ok)
		return false;
	switch (enc & 0x70) {
	case 0x00: return true;
	case 0x10: *v += field; return true;
	default: return false;          /* textrel/datarel/funcrel: not in .eh_frame */
	}
}

/* Finds the FDE pointer encoding of the CIE at file offset off. */
static bool parse_cie(const struct cur *sec, uint64_t off, uint8_t *fde_enc,
                      bool *signal)
{
	struct cur c = *sec;
	uint32_t len32, cie_id;
	uint64_t len, aug_len, skip;
	int64_t sskip;
	uint8_t version, b;
	char aug[16];
	size_t n = 0;

	c.pos = off;
	if (!get(&c, &len32, 4))
		return false;
	len = len32;
	if (len32 == 0xffffffff && !get(&c, &len, 8))
		return false;
	if (len > c.end - c.pos)
		return false;
	c.end = c.pos + len;
	if (!get(&c, &cie_id, 4) || cie_id != 0 || !get(&c, &version, 1))
		return false;
	do {
		if (!get(&c, &b, 1) || n == sizeof aug)
			return false;
		aug[n++] = (char)b;
	} while (b);
	*fde_enc = 0;                   /* DW_EH_PE_absptr */
	*signal = strchr(aug, 'S') != NULL;
	if (aug[0] != 'z')
		return aug[0] == 0;
	if (!get_uleb(&c, &skip) || !get_sleb(&c, &sskip))
		return false;
	if (version == 1 ? !get(&c, &b, 1) : !get_uleb(&c, &skip))
		return false;
	if (!get_uleb(&c, &aug_len) || aug_len > c.end - c.pos)
		return false;
	for (size_t i = 1; aug[i]; i++) {
		uint64_t ignored;

		switch (aug[i]) {
		case 'R':
			if (!get(&c, fde_enc, 1))
				return false;
			break;
		case 'P':
			if (!get(&c, &b, 1) || !get_ptr(&c, b & 0x7f, &ignored))
				return false;
			break;
		case 'L':
			if (!get(&c, &b, 1))
				return false;
			break;
		case 'S': case 'B': case 'G':
			break;
		default:
			return true;    /* unknown: R, if any, came earlier */
		}
	}
	return true;
}

static int walk(struct scan *s, struct cur *sec)
{
	uint64_t last_cie = UINT64_MAX;
	uint8_t enc = 0;
	bool signal = false;

	while (sec->end - sec->pos >= 4) {
		uint64_t len, body, next;
		uint32_t len32, cie_ptr = 0;   /* back to the FDE's CIE; 0 in a CIE */

		get(sec, &len32, 4);
		if (len32 == 0)
			break;                  /* terminator */
		len = len32;
		if (len32 == 0xffffffff && !get(sec, &len, 8))
			goto bad;
		body = sec->pos;
		if (len > sec->end - body || len < 4)
			goto bad;
		next = body + len;
		get(sec, &cie_ptr, 4);
		if (cie_ptr != 0) {
			uint64_t cie = body - cie_ptr, pc, range;
			struct cur f = *sec;

			if (cie_ptr > body || body - cie_ptr < sec->lo)
				goto bad;
			if (cie != last_cie) {
				if (!parse_cie(sec, cie, &enc, &signal))
					goto bad;
				last_cie = cie;
			}
			f.end = next;
			if (!get_ptr(&f, enc, &pc) || !get_ptr(&f, enc & 0x0f, &range))
				goto bad;
			if (pc && exec_seg_at(s, pc)) {
				uint64_t *e = vec_push(&s->entries);
				struct xom_range *r = vec_push(&s->funcs);
				if (!e || !r)
					return scan_fail(s, XOM_SCAN_ENOMEM, "out of memory");
				*e = pc;
				r->start = pc;
				/* A signal trampoline's FDE starts one byte early
				 * (a nop) because unwinders do not step back from
				 * its return address; its address, stored as
				 * sa_restorer, is the byte after. */
				if (signal) {
					if (!(e = vec_push(&s->entries)))
						return scan_fail(s, XOM_SCAN_ENOMEM, "out of memory");
					*e = pc + 1;
				}
				r->end = range < (1ull << 32) ? pc + range : pc;
			}
		}
		sec->pos = next;
	}
	return 0;
bad:
	return scan_fail(s, XOM_SCAN_EMALFORMED,
	                 "malformed: .eh_frame record at offset %#llx",
	                 (unsigned long long)sec->pos);
}

int ehframe_parse(struct scan *s)
{
	const struct section *sec = s->secs.p;
	size_t i;
	int rc;

	for (i = 0; i < s->secs.n; i++) {
		if (strcmp(sec[i].name, ".eh_frame") != 0 || sec[i].type == SHT_NOBITS)
			continue;
		/* Offsets were checked against the image by elf_load(). */
		struct cur c = {
			.img = s->img, .lo = sec[i].offset, .pos = sec[i].offset,
			.end = sec[i].offset + sec[i].size,
			.vbase = sec[i].addr - sec[i].offset,
		};
		if ((rc = walk(s, &c)))
			return rc;
	}
	return 0;
}
