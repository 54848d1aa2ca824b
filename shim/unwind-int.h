/*
 * shim/unwind-int.h -- what unwind.c (the cache and the walk) and
 * unwind-cfi.c (the rules) share: the rule word, and every assumption the
 * unwinder makes about the architecture (docs/design.md, "Architectures",
 * lists them with the rest of the shim's).
 */
#ifndef CGSHIM_UNWIND_INT_H
#define CGSHIM_UNWIND_INT_H

#include <link.h>
#include <stdint.h>

extern int _dl_find_object(void *pc, struct dl_find_object *result) __attribute__((weak));

/* ---- the architecture ----------------------------------------------------
 * CG_DW_SP, CG_DW_FP  DWARF numbers of the stack pointer and the frame
 *                     pointer (the CFA registers followed);
 * CG_RA_OK(off)       whether the return address saved at CFA+off is a
 *                     shape the walk follows, CG_RA_RULE(off) its bits in
 *                     the rule word, CG_RA_OFF(rule) the offset back;
 * cg_unwind_ra(v)     a saved return address as a code address;
 * CG_DW_CFA_NEGATE_RA_STATE  an architecture's CFA opcode accepted.
 * The walk's start (the caller's sp, frame pointer and pc) is taken in
 * unwind.c's entry points, per architecture too. Little-endian (the DWARF
 * reader), 8-byte pointers and stack words. */
#if defined(__x86_64__)
#define CG_DW_FP 6 /* %rbp */
#define CG_DW_SP 7 /* %rsp */
/* The call pushed the return address: always at CFA-8 (no bits needed). */
#define CG_RA_OK(off) ((off) == -8)
#define CG_RA_RULE(off) 0ull
#define CG_RA_OFF(rule) ((intptr_t)-8)
static inline uintptr_t cg_unwind_ra(uintptr_t v)
{
	return v;
}
#elif defined(__aarch64__)
#define CG_DW_FP 29 /* x29: the frame record's register */
#define CG_DW_SP 31
/* x30 (the link register) is saved by the function itself, at a CFA
 * offset that depends on its frame: with a frame record [x29, x30] at the
 * frame's bottom (GCC) it is -frame+8, at its top (Clang) -8. Kept as a
 * multiple of 8 in [-4096, -8], bits 38..47 of the rule (int10, x8). */
#define CG_RA_OK(off) ((off) < 0 && (off) >= -4096 && (off) % 8 == 0)
#define CG_RA_RULE(off) ((uint64_t)(((off) / 8) & 0x3ff) << 38)
#define CG_RA_OFF(rule) ((intptr_t)((int64_t)((uint64_t)(rule) << 16) >> 54) * 8)
/* DW_CFA_AARCH64_negate_ra_state: the frame signs x30 (pointer
 * authentication, -mbranch-protection=pac-ret) */
#define CG_DW_CFA_NEGATE_RA_STATE 0x2d
/* XPACLRI (hint space: a NOP on a core without pointer authentication):
 * the signature bits of a saved x30 cleared. */
static inline uintptr_t cg_unwind_ra(uintptr_t v)
{
	register uintptr_t x30 __asm__("x30") = v;
	__asm__("hint #7" : "+r"(x30));
	return x30;
}
#else
#error "cgshim: the call-site unwinder knows x86_64 and aarch64 (shim/unwind-int.h)"
#endif

/* ---- the rule word -------------------------------------------------------
 * bits 0..31 CFA offset (int32), 48..63 the frame pointer's save slot
 * relative to the CFA (int16), 38..47 the return address's (aarch64),
 * flags in between. 0 means "no rule". */
#define R_KNOWN (1ull << 32)
#define R_CFA_FP (1ull << 33)	/* CFA = frame pointer + offset (else sp + offset) */
#define R_FP_SAVED (1ull << 34) /* the frame pointer saved at CFA + bits 48..63 */
#define R_CUDA (1ull << 35)
#define R_STOP (1ull << 36) /* outermost frame (no FDE, return address undefined) */
#define R_HARD (1ull << 37) /* needs the generic unwinder */

/* Work out the rule for the instruction at pc (a return address minus
 * one) in the module fo describes (unwind-cfi.c; counted in
 * cg_unwind_misses). */
uint64_t cg_unwind_rule(uintptr_t pc, const struct dl_find_object *fo);

#endif
