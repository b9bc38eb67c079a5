/*
 * DOC: Our own printf.
 *
 * Standard conversions (%d %i %u %x %X %o %c %s %p %%, flags "-+ 0#",
 * width and precision incl. "*", length modifiers hh h l ll z j t) plus the
 * routing ones:
 *   %I   ip_addr (v4-mapped prints as IPv4)   %I4 ip4_addr   %I6 ip6_addr
 *   %N   const net_addr *
 *   %R   router ID, u32 printed as a dotted quad
 *   %t   btime as seconds with 3 decimals ("212.848"); %t with precision .N
 *        gives N decimals
 *   %m   strerror(errno)    %M  strerror(int argument)
 * Width and "-" apply to the routing conversions too ("%-20N").
 * The compiler cannot check these formats, so keep call sites simple.
 */
#ifndef LIB_PRINTF_H
#define LIB_PRINTF_H

#include <stdarg.h>
#include "lib/birdlib.h"

/* Like vsnprintf: always NUL-terminates when size > 0 and returns the
 * length the full output would have had. */
int bvsnprintf(char *buf, size_t size, const char *fmt, va_list args);
int bsnprintf(char *buf, size_t size, const char *fmt, ...);

/* Growable output buffer, for building multi-line replies. */
struct buffer {
  char *start;   /* malloc'd */
  size_t len;
  size_t size;
};
void buffer_init(struct buffer *b);
void buffer_free(struct buffer *b);
void buffer_reset(struct buffer *b);
void buffer_vprint(struct buffer *b, const char *fmt, va_list args);
void buffer_print(struct buffer *b, const char *fmt, ...);
void buffer_puts(struct buffer *b, const char *s);
void buffer_append(struct buffer *b, const void *data, size_t len);

#endif
