/*
 * evex8 - says whether the Capstone that the scanner is linked with
 * decodes an EVEX memory operand's compressed displacement (disp8*N).
 *
 *   evex8    prints "exact" when vpdpwssd 0x1fc0(%rax), %zmm1, %zmm0
 *            decodes with its displacement 0x1fc0, "inexact" when it
 *            does not decode or gives another displacement
 *
 * Capstone 4 does not know the instruction, and the scanner then measures
 * it itself and knows only that the displacement is 0x7f times an N from
 * 1 to 64; Capstone 5 decodes it exactly.  flow.S's raw_evex8 case is
 * answered differently by the two, both safely, and the test asks this
 * helper which answer is the right one here.  Exit status: 0 answered,
 * 2 the disassembler could not be started.
 */
#include <stdio.h>

#include <capstone/capstone.h>

int main(void)
{
	static const uint8_t code[] = { 0x62, 0xf2, 0x75, 0x48, 0x52, 0x40, 0x7f };
	const cs_x86_op *op;
	cs_insn *in = NULL;
	bool exact = false;
	csh h;
	size_t n;

	if (cs_open(CS_ARCH_X86, CS_MODE_64, &h) != CS_ERR_OK) {
		fputs("evex8: cannot start the disassembler\n", stderr);
		return 2;
	}
	cs_option(h, CS_OPT_DETAIL, CS_OPT_ON);
	n = cs_disasm(h, code, sizeof code, 0, 1, &in);
	if (n == 1 && in[0].size == sizeof code)
		for (uint8_t i = 0; i < in[0].detail->x86.op_count; i++) {
			op = &in[0].detail->x86.operands[i];
			if (op->type == X86_OP_MEM && op->mem.disp == 0x1fc0)
				exact = true;
		}
	if (n)
		cs_free(in, n);
	cs_close(&h);
	puts(exact ? "exact" : "inexact");
	return 0;
}
