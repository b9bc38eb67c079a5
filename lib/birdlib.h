/*
 * DOC: Basic definitions shared by every module.
 *
 * Fixed-width integer names, container_of, debug and always-on assertions,
 * fatal exits. Everything here is header-only and has no state.
 */
#ifndef LIB_BIRDLIB_H
#define LIB_BIRDLIB_H

/* Built with AddressSanitizer or ThreadSanitizer: allocators that recycle
 * memory themselves (shared slabs, page pools) hand out malloc'd objects
 * instead, so the checkers see every one. */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define BIRD_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define BIRD_SANITIZED 1
#endif
#endif

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef uint8_t u8;
typedef uint16_t u16;
typedef uint32_t u32;
typedef uint64_t u64;
typedef int8_t s8;
typedef int16_t s16;
typedef int32_t s32;
typedef int64_t s64;
typedef unsigned int uint;

/* Time in microseconds: monotonic for timers, real (epoch) for display. */
typedef s64 btime;
#define TO_S 1000000
#define TO_MS 1000
#define S_ (btime) TO_S *
#define MS_ (btime) TO_MS *
#define BTIME_NEVER ((btime) 0x7fffffffffffffffLL)

#define ARRAY_SIZE(a) (sizeof(a) / sizeof(*(a)))
#define container_of(ptr, type, member) \
  ((type *) ((char *) (ptr) - offsetof(type, member)))
/* MIN and MAX evaluate each argument once. Read twice, a value another
 * thread moves made a minimum that no reader ever held (the journal freed
 * blocks a reader still read: session 75, rt_reader.c). MIN_CONST and
 * MAX_CONST are for constant expressions (array sizes, initializers of
 * statics), where a statement expression cannot stand. */
#define MIN(a, b) MINMAX_ONCE_(a, b, <, __COUNTER__)
#define MAX(a, b) MINMAX_ONCE_(a, b, >, __COUNTER__)
#define MINMAX_ONCE_(a, b, op, n) MINMAX_ONCE__(a, b, op, n)
#define MINMAX_ONCE__(a, b, op, n) \
  ({ __auto_type a_##n = (a); __auto_type b_##n = (b); a_##n op b_##n ? a_##n : b_##n; })
#define MIN_CONST(a, b) ((a) < (b) ? (a) : (b))
#define MAX_CONST(a, b) ((a) > (b) ? (a) : (b))
#define ALIGN_UP(x, a) (((x) + ((a) - 1)) & ~((size_t) (a) - 1))

#define likely(x) __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)
#define UNUSED __attribute__((unused))
#define NORET __attribute__((noreturn))
#define PRINTF_LIKE(f, a) __attribute__((format(printf, f, a)))

/* Always-on invariant: a broken one is a bug in our code, never in input. */
void bug(const char *fmt, ...) NORET;
/* Start-up failure: log and exit(1). */
void die(const char *fmt, ...) NORET;

#ifdef DEBUGGING
#define ASSERT(x) \
  do { if (unlikely(!(x))) bug("Assertion '%s' failed at %s:%d", #x, __FILE__, __LINE__); } while (0)
#else
#define ASSERT(x) do { (void) sizeof(x); } while (0)
#endif

/* Assertion that stays on in production: used for invariants whose breach
 * would corrupt shared state (refcounts, loop ownership). */
#define ASSERT_DIE(x) \
  do { if (unlikely(!(x))) bug("Assertion '%s' failed at %s:%d", #x, __FILE__, __LINE__); } while (0)

static inline u32 u32_mkmask(uint n) { return n ? ~((1U << (32 - n)) - 1) : 0; }

#endif
