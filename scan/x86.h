/*
 * x86.h - what disasm.c and flow.c both need to read x86-64 code: the
 * general-purpose register families, the lengths of the VEX and EVEX
 * encodings that Capstone 4 cannot decode, and the instructions that data
 * decoded as code runs into.  Not installed.
 */
#ifndef XOM_SCAN_X86_H
#define XOM_SCAN_X86_H

#include <capstone/capstone.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Register families: 0-15 for rax, rcx, rdx, rbx, rsp, rbp, rsi, rdi,
 * r8-r15 (the hardware numbering); X86_FAM_RIP for rip; X86_FAM_NONE for
 * anything else.  x86_fam_wide says whether a register is the family's
 * 64-bit or 32-bit form: writing one of those replaces the whole register
 * (a 32-bit write zero-extends), writing an 8- or 16-bit one does not. */
enum { X86_FAM_RIP = 16, X86_FAM_NONE = 0xff };
enum { X86_RAX = 0, X86_RSP = 4, X86_RBP = 5, X86_R11 = 11 };

unsigned x86_fam(unsigned reg);
bool x86_fam_wide(unsigned reg);
bool x86_is_reg64(unsigned reg);

/* The length of an instruction Capstone 4 cannot decode but this file can
 * (VEX/EVEX, rdpkru/wrpkru), or 0.  A RIP-relative operand sets *rip to its
 * target, else *rip is 0.  When modrm is not NULL it receives the offset of
 * the ModRM byte (0 when there is none). */
size_t x86_raw_length(const uint8_t *p, size_t left, uint64_t pc, uint64_t *rip,
                      size_t *modrm);

/* Instructions that ordinary user code does not contain: what data decoded
 * as code quickly runs into.  AMD's 3DNow! counts among them unless
 * amd3dnow: code written for the K6 and the Athlon still ships (xvidcore
 * selects it by CPUID), but no CPU with protection keys runs it. */
bool x86_implausible(const cs_insn *in, bool amd3dnow);

/*
 * Turns off Capstone's text printer on a handle opened with CS_OPT_DETAIL,
 * when it can be done safely; see x86.c.  Decoding then still gives the
 * instruction's id, size, bytes, groups, implicit registers and encoding
 * (ModRM, SIB, displacement, immediate offsets), but no operands, no
 * mnemonic and no text.  Returns false, the handle unchanged, otherwise.
 * in is scratch space for the check.
 */
bool x86_quiet(csh h, cs_insn *in);

/* Whether an instruction is a jump or a call (CS_GRP_JUMP, CS_GRP_CALL). */
bool x86_is_branch(const cs_detail *d);
bool x86_in_group(const cs_detail *d, uint8_t group);

#endif
