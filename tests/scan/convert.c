/*
 * convert - runs FFmpeg's swscale and swresample on generated data and
 * prints a checksum of what they produce, for the codec test in the
 * emulated-PKU guest (tests/scan/vm-codecs.sh).
 *
 *   convert scale      a 64x48 YUV 4:2:0 picture to 40x30 RGB24, bicubic
 *   convert resample   0.1 s of a stereo float tone at 48 kHz to mono
 *                      16-bit at 22.05 kHz
 *   convert x264       three 64x64 frames encoded with libx264 (ultrafast,
 *                      one thread): a checksum of the H.264 stream
 *
 * x264's structures are reached through x264_param_parse(), the width
 * and height at their place in x264_param_t, and the picture's planes in
 * x264_picture_t, all fixed by the ABI of libx264.so.164 (x264.h).
 *
 * The libraries are opened with dlopen() and the few functions declared
 * here, so that no -dev package is needed; the dlopen is also what brings
 * them under the runtime's wrapper.  The calls used have the same ABI from
 * FFmpeg 5.1 (Debian 12: libswscale.so.6, libswresample.so.4) to FFmpeg 7
 * (Debian 13: libswscale.so.8, libswresample.so.5): swr_alloc_set_opts2()
 * and AVChannelLayout came in 5.1, and 7 dropped swr_alloc_set_opts().
 * The first of those sonames that opens is used.  Exit status 0, 1 when a
 * library or a call fails.
 */
#include <dlfcn.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define PIX_YUV420P 0           /* enum AVPixelFormat */
#define PIX_RGB24 2
#define SWS_BICUBIC 4
#define SMP_S16 1               /* enum AVSampleFormat */
#define SMP_FLT 3
#define LAYOUT_MONO 0x4ull      /* AV_CH_LAYOUT_* */
#define LAYOUT_STEREO 0x3ull
#define ORDER_NATIVE 1          /* enum AVChannelOrder */

/* AVChannelLayout: an order, a channel count and, for the native order,
 * the mask of channels. */
struct ch_layout {
	int order;
	int nb_channels;
	uint64_t mask;
	void *opaque;
};

/* Opens the first library of NAMES (a NULL-terminated list) that there is. */
static void *open_first(const char *const *names)
{
	for (; *names; names++) {
		void *lib = dlopen(*names, RTLD_NOW);

		if (lib)
			return lib;
	}
	fprintf(stderr, "convert: %s: %s\n", names[-1], dlerror());
	return NULL;
}

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
	const uint8_t *b = p;

	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * 1099511628211ull;
	return h;
}

static void *sym(void *lib, const char *name)
{
	void *f = lib ? dlsym(lib, name) : NULL;

	if (!f)
		fprintf(stderr, "convert: %s: %s\n", name, dlerror());
	return f;
}

static int scale(void)
{
	static const char *const names[] = { "libswscale.so.8", "libswscale.so.7",
	                                     "libswscale.so.6", NULL };
	void *lib = open_first(names);
	void *(*get)(int, int, int, int, int, int, int, void *, void *, const double *) =
		(void *(*)(int, int, int, int, int, int, int, void *, void *, const double *))sym(lib, "sws_getContext");
	int (*run)(void *, const uint8_t *const[], const int[], int, int,
	           uint8_t *const[], const int[]) =
		(int (*)(void *, const uint8_t *const[], const int[], int, int,
		         uint8_t *const[], const int[]))sym(lib, "sws_scale");
	static uint8_t y[64 * 48], u[32 * 24], v[32 * 24], rgb[40 * 30 * 3];
	const uint8_t *src[4] = { y, u, v, NULL };
	const int sstride[4] = { 64, 32, 32, 0 }, dstride[4] = { 40 * 3, 0, 0, 0 };
	uint8_t *dst[4] = { rgb, NULL, NULL, NULL };
	void *ctx;

	if (!get || !run)
		return 1;
	for (int i = 0; i < 64 * 48; i++)
		y[i] = (uint8_t)(i * 7 + i / 64 * 3);
	for (int i = 0; i < 32 * 24; i++)
		u[i] = (uint8_t)(i * 5), v[i] = (uint8_t)(255 - i * 3);
	ctx = get(64, 48, PIX_YUV420P, 40, 30, PIX_RGB24, SWS_BICUBIC, NULL, NULL, NULL);
	if (!ctx || run(ctx, src, sstride, 0, 48, dst, dstride) != 30)
		return fputs("convert: sws_scale failed\n", stderr), 1;
	printf("scale %016llx\n", (unsigned long long)fnv(1469598103934665603ull, rgb, sizeof rgb));
	return 0;
}

static int resample(void)
{
	static const char *const names[] = { "libswresample.so.5", "libswresample.so.4", NULL };
	void *lib = open_first(names);
	typedef int alloc_fn(void **, const struct ch_layout *, int, int,
	                     const struct ch_layout *, int, int, int, void *);
	alloc_fn *alloc = (alloc_fn *)sym(lib, "swr_alloc_set_opts2");
	const struct ch_layout mono = { ORDER_NATIVE, 1, LAYOUT_MONO, NULL };
	const struct ch_layout stereo = { ORDER_NATIVE, 2, LAYOUT_STEREO, NULL };
	int (*init)(void *) = (int (*)(void *))sym(lib, "swr_init");
	int (*conv)(void *, uint8_t **, int, const uint8_t **, int) =
		(int (*)(void *, uint8_t **, int, const uint8_t **, int))sym(lib, "swr_convert");
	static float in[4800 * 2];
	static int16_t out[4096];
	const uint8_t *ip[1] = { (const uint8_t *)in };
	uint8_t *op[1] = { (uint8_t *)out };
	uint64_t h = 1469598103934665603ull;
	void *ctx = NULL;
	int n, total = 0;

	if (!alloc || !init || !conv)
		return 1;
	for (int i = 0; i < 4800; i++)
		in[2 * i] = in[2 * i + 1] = (float)(0.5 * sin(i * 2 * 3.14159265 * 440 / 48000));
	if (alloc(&ctx, &mono, SMP_S16, 22050, &stereo, SMP_FLT, 48000, 0, NULL) < 0 ||
	    !ctx || init(ctx) < 0)
		return fputs("convert: swr_init failed\n", stderr), 1;
	if ((n = conv(ctx, op, 4096, ip, 4800)) < 0)
		return fputs("convert: swr_convert failed\n", stderr), 1;
	h = fnv(h, out, (size_t)n * 2), total += n;
	if ((n = conv(ctx, op, 4096, NULL, 0)) > 0)   /* flush */
		h = fnv(h, out, (size_t)n * 2), total += n;
	printf("resample %d %016llx\n", total, (unsigned long long)h);
	return 0;
}

struct x264_img {                /* x264_image_t */
	int csp, planes, stride[4];
	uint8_t *plane[4];
};

struct x264_pic {                /* x264_picture_t, as far as the image */
	int type, qpplus1, pic_struct, keyframe;
	int64_t pts, dts;
	void *param;
	struct x264_img img;
	char rest[512];         /* the fields after img, unused here */
};

struct x264_nal {                /* x264_nal_t */
	int ref_idc, type, long_startcode, first_mb, last_mb, payload;
	uint8_t *p_payload;
	int padding;
};

static int x264(void)
{
	void *lib = dlopen("libx264.so.164", RTLD_NOW);
	int (*preset)(void *, const char *, const char *) =
		(int (*)(void *, const char *, const char *))sym(lib, "x264_param_default_preset");
	int (*parse)(void *, const char *, const char *) =
		(int (*)(void *, const char *, const char *))sym(lib, "x264_param_parse");
	void *(*open_)(void *) = (void *(*)(void *))sym(lib, "x264_encoder_open_164");
	int (*alloc)(struct x264_pic *, int, int, int) =
		(int (*)(struct x264_pic *, int, int, int))sym(lib, "x264_picture_alloc");
	int (*enc)(void *, struct x264_nal **, int *, struct x264_pic *, struct x264_pic *) =
		(int (*)(void *, struct x264_nal **, int *, struct x264_pic *, struct x264_pic *))
			sym(lib, "x264_encoder_encode");
	int (*delayed)(void *) = (int (*)(void *))sym(lib, "x264_encoder_delayed_frames");
	static char param[8192];        /* x264_param_t is smaller */
	static const char *const opts[][2] = {
		{ "fps", "5" }, { "threads", "1" }, { "keyint", "3" },
	};
	struct x264_pic pic, out;
	struct x264_nal *nal;
	uint64_t h = 1469598103934665603ull;
	int nnal, bytes = 0;
	void *e;

	if (!preset || !parse || !open_ || !alloc || !enc || !delayed ||
	    preset(param, "ultrafast", NULL) < 0)
		return 1;
	/* x264_param_t starts: cpu, i_threads, i_lookahead_threads,
	 * b_sliced_threads, b_deterministic, b_cpu_independent,
	 * i_sync_lookahead, i_width, i_height (all 32-bit). */
	int wh[2] = { 64, 64 };
	memcpy(param + 28, wh, sizeof wh);
	for (size_t i = 0; i < sizeof opts / sizeof opts[0]; i++)
		if (parse(param, opts[i][0], opts[i][1]) < 0)
			return fprintf(stderr, "convert: x264 %s\n", opts[i][0]), 1;
	memset(&pic, 0, sizeof pic);
	if (alloc(&pic, 0x0002 /* X264_CSP_I420 */, 64, 64) < 0 || !(e = open_(param)))
		return fputs("convert: x264_encoder_open failed\n", stderr), 1;
	for (int f = 0; f < 3 + 8; f++) {
		struct x264_pic *in = f < 3 ? &pic : NULL;
		if (in) {
			for (int p = 0; p < 3; p++)
				for (int i = 0; i < (p ? 32 * 32 : 64 * 64); i++)
					pic.img.plane[p][i] = (uint8_t)(i * (p + 3) + f * 17);
			pic.pts = f;
		} else if (!delayed(e)) {
			break;
		}
		int n = enc(e, &nal, &nnal, in, &out);
		if (n < 0)
			return fputs("convert: x264_encoder_encode failed\n", stderr), 1;
		if (n > 0)      /* the payloads of one call are contiguous */
			h = fnv(h, nal[0].p_payload, (size_t)n), bytes += n;
	}
	printf("x264 %d %016llx\n", bytes, (unsigned long long)h);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 2 && !strcmp(argv[1], "x264"))
		return x264();
	if (argc == 2 && !strcmp(argv[1], "scale"))
		return scale();
	if (argc == 2 && !strcmp(argv[1], "resample"))
		return resample();
	fputs("usage: convert scale|resample|x264\n", stderr);
	return 1;
}
