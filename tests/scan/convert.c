/*
 * convert - runs FFmpeg's swscale and swresample on generated data and
 * prints a checksum of what they produce, for the codec test in the
 * emulated-PKU guest (tests/scan/vm-codecs.sh).
 *
 *   convert scale      a 64x48 YUV 4:2:0 picture to 40x30 RGB24, bicubic
 *   convert resample   0.1 s of a stereo float tone at 48 kHz to mono
 *                      16-bit at 22.05 kHz
 *
 * The libraries are opened with dlopen() and the few functions declared
 * here (FFmpeg 5.1's ABI: libswscale.so.6, libswresample.so.4), so that no
 * -dev package is needed; the dlopen is also what brings them under the
 * runtime's wrapper.  Exit status 0, 1 when a library or a call fails.
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
	void *lib = dlopen("libswscale.so.6", RTLD_NOW);
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
	void *lib = dlopen("libswresample.so.4", RTLD_NOW);
	void *(*alloc)(void *, int64_t, int, int, int64_t, int, int, int, void *) =
		(void *(*)(void *, int64_t, int, int, int64_t, int, int, int, void *))sym(lib, "swr_alloc_set_opts");
	int (*init)(void *) = (int (*)(void *))sym(lib, "swr_init");
	int (*conv)(void *, uint8_t **, int, const uint8_t **, int) =
		(int (*)(void *, uint8_t **, int, const uint8_t **, int))sym(lib, "swr_convert");
	static float in[4800 * 2];
	static int16_t out[4096];
	const uint8_t *ip[1] = { (const uint8_t *)in };
	uint8_t *op[1] = { (uint8_t *)out };
	uint64_t h = 1469598103934665603ull;
	void *ctx;
	int n, total = 0;

	if (!alloc || !init || !conv)
		return 1;
	for (int i = 0; i < 4800; i++)
		in[2 * i] = in[2 * i + 1] = (float)(0.5 * sin(i * 2 * 3.14159265 * 440 / 48000));
	ctx = alloc(NULL, (int64_t)LAYOUT_MONO, SMP_S16, 22050, (int64_t)LAYOUT_STEREO,
	            SMP_FLT, 48000, 0, NULL);
	if (!ctx || init(ctx) < 0)
		return fputs("convert: swr_init failed\n", stderr), 1;
	if ((n = conv(ctx, op, 4096, ip, 4800)) < 0)
		return fputs("convert: swr_convert failed\n", stderr), 1;
	h = fnv(h, out, (size_t)n * 2), total += n;
	if ((n = conv(ctx, op, 4096, NULL, 0)) > 0)   /* flush */
		h = fnv(h, out, (size_t)n * 2), total += n;
	printf("resample %d %016llx\n", total, (unsigned long long)h);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 2 && !strcmp(argv[1], "scale"))
		return scale();
	if (argc == 2 && !strcmp(argv[1], "resample"))
		return resample();
	fputs("usage: convert scale|resample\n", stderr);
	return 1;
}
