#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static __thread int tls_counter;
__attribute__((section(".mysec"))) int in_my_section = 5;
static const char *const names[] = { "zero", "one", "two", "three", "four", "five", "six", "seven" };

__attribute__((cold, noinline)) static void fail(const char *why)
{
	fprintf(stderr, "fail: %s\n", why);
	exit(1);
}

__attribute__((constructor)) static void init(void) { tls_counter = 1; }

static int classify(int x)
{
	switch (x) {
	case 0: return 10; case 1: return 21; case 2: return 32; case 3: return 43;
	case 4: return 54; case 5: return 65; case 6: return 76; case 7: return 87;
	default: return -1;
	}
}

double average(const double *v, size_t n)
{
	double s = 0;
	for (size_t i = 0; i < n; i++)
		s += v[i];
	return n ? s / (double)n : 0.0;
}

int main(int argc, char **argv)
{
	double v[8];
	char buf[64];
	for (int i = 0; i < 8; i++)
		v[i] = classify(i) * 1.5;
	snprintf(buf, sizeof buf, "%s %d %.2f %d", names[argc % 8], tls_counter, average(v, 8), in_my_section);
	if (strlen(buf) == 0)
		fail("empty");
	puts(buf);
	(void)argv;
	return 0;
}
