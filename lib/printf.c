/*
 * DOC: Our own printf engine and a growable output buffer.
 *
 * bvsnprintf() walks the format once, writing into the caller's buffer while
 * it fits and only counting once it does not, so the result is the length
 * the whole output would have had, as C99 vsnprintf() returns. Standard
 * integer, character, string and pointer conversions follow glibc output
 * exactly (the unit tests compare them); the routing conversions (%I %I4 %I6
 * %N %R %t %m %M, listed in lib/printf.h) format into a small stack buffer
 * and then go through the same padding as %s, so width and "-" work for them.
 *
 * Floating point (%e %f %g %a) and %n are not supported: the daemon never
 * prints floats, and %n writes through a pointer taken from the arguments.
 * An unknown conversion is copied to the output as written. "t" is C's
 * ptrdiff_t length modifier only when an integer conversion follows it
 * ("%td"); anywhere else it is our time conversion.
 *
 * Precision is honoured by %s %m %M (cut) and %t (decimals) and ignored by
 * %I %N %R: a cut address would only mislead.
 *
 * No state, no allocation in bvsnprintf(); errno is read for %m and left
 * as it was, except for EOVERFLOW when the result does not fit an int.
 * struct buffer is owned by whoever built it (one thread).
 */

#include "lib/printf.h"
#include "lib/ip.h"
#include "lib/net.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

/* Output cursor: len counts every character produced, even the ones past
 * the end of buf that were dropped. One byte is always kept for the NUL. */
struct out {
  char *buf;
  size_t size;
  size_t len;
};

static void
out_mem(struct out *o, const char *s, size_t n)
{
  if (o->len + 1 < o->size)
  {
    size_t room = o->size - 1 - o->len;
    memcpy(o->buf + o->len, s, MIN(n, room));
  }
  o->len += n;
}

static void
out_pad(struct out *o, char c, size_t n)
{
  if (o->len + 1 < o->size)
  {
    size_t room = o->size - 1 - o->len;
    memset(o->buf + o->len, c, MIN(n, room));
  }
  o->len += n;
}

enum {
  F_LEFT = 1,    /* "-" */
  F_PLUS = 2,    /* "+" */
  F_SPACE = 4,   /* " " */
  F_ZERO = 8,    /* "0" */
  F_ALT = 16,    /* "#" */
};

enum length { LEN_NONE, LEN_HH, LEN_H, LEN_L, LEN_LL, LEN_Z, LEN_J, LEN_T };

struct spec {
  uint flags;
  size_t width;
  int prec;      /* -1 when none was given */
  enum length len;
};

/* Text already rendered (strings and routing conversions): only padding. */
static void
emit_str(struct out *o, const struct spec *sp, const char *s, size_t n)
{
  size_t pad = sp->width > n ? sp->width - n : 0;
  if (!(sp->flags & F_LEFT))
    out_pad(o, ' ', pad);
  out_mem(o, s, n);
  if (sp->flags & F_LEFT)
    out_pad(o, ' ', pad);
}

/*
 * One integer as C specifies: [padding][sign or 0x][zeros][digits][padding].
 * Precision is the minimum digit count ("%.0d" of 0 prints no digit); the
 * "0" flag only pads when there is no precision and no "-"; "#" adds 0x to
 * non-zero hex and makes octal start with a 0.
 */
static void
emit_int(struct out *o, const struct spec *sp, u64 v, int neg, uint base, int upper, int is_signed)
{
  const char *dig = upper ? "0123456789ABCDEF" : "0123456789abcdef";
  char digits[24];   /* 22 octal digits for 2^64 - 1 */
  size_t nd = 0;
  int nonzero = v != 0;

  if (v || sp->prec)
    do
    {
      digits[sizeof(digits) - ++nd] = dig[v % base];
      v /= base;
    }
    while (v);
  const char *d = digits + sizeof(digits) - nd;

  char pre[2];
  size_t npre = 0;
  if (is_signed && neg)
    pre[npre++] = '-';
  else if (is_signed && (sp->flags & F_PLUS))
    pre[npre++] = '+';
  else if (is_signed && (sp->flags & F_SPACE))
    pre[npre++] = ' ';
  else if ((sp->flags & F_ALT) && base == 16 && nonzero)
  {
    pre[npre++] = '0';
    pre[npre++] = upper ? 'X' : 'x';
  }

  size_t zeros = sp->prec > 0 && (size_t) sp->prec > nd ? (size_t) sp->prec - nd : 0;
  if ((sp->flags & F_ALT) && base == 8 && !zeros && (!nd || d[0] != '0'))
    zeros = 1;

  size_t total = npre + zeros + nd;
  size_t pad = sp->width > total ? sp->width - total : 0;
  if ((sp->flags & (F_ZERO | F_LEFT)) == F_ZERO && sp->prec < 0)
  {
    zeros += pad;
    pad = 0;
  }

  if (!(sp->flags & F_LEFT))
    out_pad(o, ' ', pad);
  out_mem(o, pre, npre);
  out_pad(o, '0', zeros);
  out_mem(o, d, nd);
  if (sp->flags & F_LEFT)
    out_pad(o, ' ', pad);
}

static s64
fetch_signed(va_list *ap, enum length len)
{
  switch (len)
  {
  case LEN_HH: return (signed char) va_arg(*ap, int);
  case LEN_H:  return (short) va_arg(*ap, int);
  case LEN_L:  return va_arg(*ap, long);
  case LEN_LL: return va_arg(*ap, long long);
  case LEN_Z:  return va_arg(*ap, ssize_t);
  case LEN_J:  return va_arg(*ap, intmax_t);
  case LEN_T:  return va_arg(*ap, ptrdiff_t);
  default:     return va_arg(*ap, int);
  }
}

static u64
fetch_unsigned(va_list *ap, enum length len)
{
  switch (len)
  {
  case LEN_HH: return (unsigned char) va_arg(*ap, uint);
  case LEN_H:  return (unsigned short) va_arg(*ap, uint);
  case LEN_L:  return va_arg(*ap, unsigned long);
  case LEN_LL: return va_arg(*ap, unsigned long long);
  case LEN_Z:  return va_arg(*ap, size_t);
  case LEN_J:  return va_arg(*ap, uintmax_t);
  case LEN_T:  return (size_t) va_arg(*ap, ptrdiff_t);
  default:     return va_arg(*ap, uint);
  }
}

/*
 * btime (microseconds) as seconds with prec decimals, default 3. Digits past
 * the sixth would always be zero, so precision is capped there. Truncates
 * rather than rounds, so a time never prints as later than it is.
 */
static size_t
format_time(char *buf, btime t, int prec)
{
  static const u32 scale[7] = { 1000000, 100000, 10000, 1000, 100, 10, 1 };
  if (prec < 0)
    prec = 3;
  if (prec > 6)
    prec = 6;

  u64 mag = t < 0 ? -(u64) t : (u64) t;
  char *p = buf;
  if (t < 0)
    *p++ = '-';

  char tmp[24];
  size_t n = 0;
  u64 sec = mag / TO_S;
  do
    tmp[n++] = '0' + sec % 10;
  while (sec /= 10);
  while (n)
    *p++ = tmp[--n];

  if (prec)
  {
    u32 frac = (mag % TO_S) / scale[prec];
    *p++ = '.';
    for (int i = prec - 1; i >= 0; i--, frac /= 10)
      p[i] = '0' + frac % 10;
    p += prec;
  }
  return p - buf;
}

/* strerror_r() comes in two flavours (XSI returns int, GNU returns the
 * text); pick by the result type so either libc works. strerror() itself
 * may share one buffer between threads. */
static inline const char *
strerror_xsi(int r, const char *buf)
{
  return r ? "Unknown error" : buf;
}

static inline const char *
strerror_gnu(const char *r, const char *buf)
{
  return r;
}

#define STRERROR_RESULT(r, buf) _Generic((r), int: strerror_xsi, default: strerror_gnu)((r), (buf))

static const char *
error_text(int err, char *buf, size_t size)
{
  buf[0] = 0;
  return STRERROR_RESULT(strerror_r(err, buf, size), buf);
}

/* A decimal width or precision, capped at INT_MAX as glibc does. */
static size_t
parse_num(const char **f)
{
  u64 v = 0;
  for (; **f >= '0' && **f <= '9'; (*f)++)
    v = MIN(v * 10 + (u64) (**f - '0'), (u64) INT_MAX);
  return v;
}

/* Parse the part between '%' and the conversion letter. */
static const char *
parse_spec(const char *f, struct spec *sp, va_list *ap)
{
  *sp = (struct spec) { .prec = -1 };

  for (;; f++)
  {
    if (*f == '-')
      sp->flags |= F_LEFT;
    else if (*f == '+')
      sp->flags |= F_PLUS;
    else if (*f == ' ')
      sp->flags |= F_SPACE;
    else if (*f == '0')
      sp->flags |= F_ZERO;
    else if (*f == '#')
      sp->flags |= F_ALT;
    else
      break;
  }

  if (*f == '*')
  {
    int w = va_arg(*ap, int);
    if (w < 0)
    {
      sp->flags |= F_LEFT;
      sp->width = -(size_t) w;
    }
    else
      sp->width = w;
    f++;
  }
  else
    sp->width = parse_num(&f);

  if (*f == '.')
  {
    f++;
    if (*f == '*')
    {
      int p = va_arg(*ap, int);
      sp->prec = p < 0 ? -1 : p;
      f++;
    }
    else
      sp->prec = (int) parse_num(&f);
  }

  switch (*f)
  {
  case 'h':
    if (*++f == 'h')
      sp->len = LEN_HH, f++;
    else
      sp->len = LEN_H;
    break;
  case 'l':
    if (*++f == 'l')
      sp->len = LEN_LL, f++;
    else
      sp->len = LEN_L;
    break;
  case 'z': sp->len = LEN_Z; f++; break;
  case 'j': sp->len = LEN_J; f++; break;
  case 't':
    /* C's ptrdiff_t modifier and our %t time share the letter: it is
     * the modifier only when an integer conversion follows. */
    if (f[1] && strchr("diouxX", f[1]))
      sp->len = LEN_T, f++;
    break;
  }
  return f;
}

/*
 * The routing conversions. *f is the conversion letter; returns the format
 * position after it, or NULL when it is not one of ours.
 */
static const char *
emit_routing(struct out *o, const struct spec *sp, const char *f, va_list *ap, int saved_errno)
{
  char buf[MAX_CONST(NET_MAX_TEXT_LENGTH, 128) + 1];
  const char *s = buf;
  size_t n;

  switch (*f++)
  {
  case 'I':
    if (*f == '4')
      n = ip4_ntop(va_arg(*ap, ip4_addr), buf) - buf, f++;
    else if (*f == '6')
      n = ip6_ntop(va_arg(*ap, ip6_addr), buf) - buf, f++;
    else
      n = ipa_ntop(va_arg(*ap, ip_addr), buf) - buf;
    break;

  case 'N':
  {
    const net_addr *net = va_arg(*ap, const net_addr *);
    if (net)
      n = net_ntop(net, buf) - buf;
    else
      s = "(null)", n = 6;
    break;
  }

  case 'R':
    n = ip4_ntop(ip4_from_u32(va_arg(*ap, u32)), buf) - buf;
    break;

  case 't':
    n = format_time(buf, va_arg(*ap, btime), sp->prec);
    break;

  case 'm':
  case 'M':
    s = error_text(f[-1] == 'm' ? saved_errno : va_arg(*ap, int), buf, sizeof(buf));
    n = sp->prec >= 0 ? strnlen(s, sp->prec) : strlen(s);
    break;

  default:
    return NULL;
  }

  emit_str(o, sp, s, n);
  return f;
}

/* One conversion starting at f (just past the '%'); returns where the next
 * literal text starts. */
static const char *
emit_conv(struct out *o, const char *f, va_list *ap, int saved_errno)
{
  const char *start = f - 1;
  struct spec sp;
  f = parse_spec(f, &sp, ap);

  switch (*f)
  {
  case 'd':
  case 'i':
  {
    s64 v = fetch_signed(ap, sp.len);
    emit_int(o, &sp, v < 0 ? -(u64) v : (u64) v, v < 0, 10, 0, 1);
    return f + 1;
  }
  case 'u':
    emit_int(o, &sp, fetch_unsigned(ap, sp.len), 0, 10, 0, 0);
    return f + 1;
  case 'x':
  case 'X':
    emit_int(o, &sp, fetch_unsigned(ap, sp.len), 0, 16, *f == 'X', 0);
    return f + 1;
  case 'o':
    emit_int(o, &sp, fetch_unsigned(ap, sp.len), 0, 8, 0, 0);
    return f + 1;

  case 'p':
  {
    void *p = va_arg(*ap, void *);
    if (!p)
    {
      emit_str(o, &sp, "(nil)", 5);
      return f + 1;
    }
    sp.flags |= F_ALT;
    emit_int(o, &sp, (uintptr_t) p, 0, 16, 0, 0);
    return f + 1;
  }

  case 'c':
  {
    char c = (char) va_arg(*ap, int);
    emit_str(o, &sp, &c, 1);
    return f + 1;
  }

  case 's':
  {
    const char *s = va_arg(*ap, const char *);
    if (!s)
      s = "(null)";
    emit_str(o, &sp, s, sp.prec >= 0 ? strnlen(s, sp.prec) : strlen(s));
    return f + 1;
  }

  case '%':
    out_mem(o, "%", 1);
    return f + 1;
  }

  const char *next = emit_routing(o, &sp, f, ap, saved_errno);
  if (next)
    return next;

  /* Unknown or truncated conversion: show it as written rather than guess. */
  size_t n = f - start + (*f ? 1 : 0);
  out_mem(o, start, n);
  return start + n;
}

int
bvsnprintf(char *buf, size_t size, const char *fmt, va_list args)
{
  int saved_errno = errno;
  struct out o = { buf, size, 0 };
  va_list ap;
  va_copy(ap, args);

  while (*fmt)
  {
    const char *pct = strchr(fmt, '%');
    if (!pct)
    {
      out_mem(&o, fmt, strlen(fmt));
      break;
    }
    out_mem(&o, fmt, pct - fmt);
    fmt = emit_conv(&o, pct + 1, &ap, saved_errno);
  }

  va_end(ap);
  if (size)
    buf[MIN(o.len, size - 1)] = 0;
  errno = saved_errno;   /* strerror_r() may have touched it */
  if (o.len > INT_MAX)
  {
    errno = EOVERFLOW;
    return -1;
  }
  return (int) o.len;
}

int
bsnprintf(char *buf, size_t size, const char *fmt, ...)
{
  va_list args;
  va_start(args, fmt);
  int n = bvsnprintf(buf, size, fmt, args);
  va_end(args);
  return n;
}

/*
 * struct buffer: ->start is always a NUL-terminated string of ->len bytes.
 * An empty buffer points at a shared static "" with size 0 (the trick git's
 * strbuf uses), so readers never see NULL and init cannot fail; nothing is
 * ever written there because any write needs size > len first.
 *
 * The functions return void, so there is no way to report a failed
 * allocation; the buffer then keeps what fit and stays consistent.
 */
static char buffer_empty[1];

void
buffer_init(struct buffer *b)
{
  b->start = buffer_empty;
  b->len = 0;
  b->size = 0;
}

void
buffer_free(struct buffer *b)
{
  if (b->size)
    free(b->start);
  buffer_init(b);
}

void
buffer_reset(struct buffer *b)
{
  b->len = 0;
  if (b->size)
    b->start[0] = 0;
}

/* Make room for extra bytes plus the NUL; 0 when memory ran out. */
static int
buffer_grow(struct buffer *b, size_t extra)
{
  if (extra >= SIZE_MAX - b->len)
    return 0;
  size_t need = b->len + extra + 1;
  if (need <= b->size)
    return 1;

  size_t size = b->size ? b->size : 64;
  while (size < need)
  {
    if (size > SIZE_MAX / 2)
    {
      size = need;
      break;
    }
    size *= 2;
  }

  char *p = b->size ? realloc(b->start, size) : malloc(size);
  if (!p)
    return 0;
  if (!b->size)
    p[0] = 0;
  b->start = p;
  b->size = size;
  return 1;
}

void
buffer_vprint(struct buffer *b, const char *fmt, va_list args)
{
  /* realloc() may change errno before the second pass reads it for %m */
  int saved_errno = errno;
  size_t room = b->size - b->len;
  va_list ap;
  va_copy(ap, args);
  int n = bvsnprintf(room ? b->start + b->len : NULL, room, fmt, ap);
  va_end(ap);

  if (n < 0)
    return;
  if ((size_t) n < room)
  {
    b->len += n;
    return;
  }

  if (!buffer_grow(b, n))
  {
    /* What fit is already there, NUL-terminated. */
    if (room)
      b->len = b->size - 1;
    return;
  }
  errno = saved_errno;
  bvsnprintf(b->start + b->len, b->size - b->len, fmt, args);
  b->len += n;
}

void
buffer_print(struct buffer *b, const char *fmt, ...)
{
  va_list args;
  va_start(args, fmt);
  buffer_vprint(b, fmt, args);
  va_end(args);
}

void
buffer_append(struct buffer *b, const void *data, size_t len)
{
  if (!len)
    return;
  if (!buffer_grow(b, len))
  {
    if (!b->size)
      return;
    len = b->size - 1 - b->len;
  }
  memcpy(b->start + b->len, data, len);
  b->len += len;
  b->start[b->len] = 0;
}

void
buffer_puts(struct buffer *b, const char *s)
{
  buffer_append(b, s, strlen(s));
}
