/*
 * DOC: json.c - the one-line JSON summaries
 *
 * Every mode ends with one flat JSON object of numbers and words on
 * stdout, so that scripts read a run's results with one json.loads().
 */
#include <stdarg.h>
#include <stdio.h>

#include "bgpblast.h"

void json_raw(struct json *j, const char *key, const char *fmt, ...)
{
	if (j->n + 64 > sizeof(j->s))
		return;
	j->n += (size_t)snprintf(j->s + j->n, sizeof(j->s) - j->n, "%s\"%s\":", j->n ? "," : "{", key);
	va_list ap;
	va_start(ap, fmt);
	j->n += (size_t)vsnprintf(j->s + j->n, sizeof(j->s) - j->n, fmt, ap);
	va_end(ap);
}

void json_u64(struct json *j, const char *key, uint64_t v)
{
	json_raw(j, key, "%llu", (unsigned long long)v);
}

void json_word(struct json *j, const char *key, const char *v)
{
	json_raw(j, key, "\"%s\"", v);
}

/* seconds, or null for a moment that never came (times are > 0) */
void json_time(struct json *j, const char *key, double t)
{
	if (t > 0)
		json_raw(j, key, "%.6f", t);
	else
		json_raw(j, key, "null");
}

/* count / seconds, or null */
void json_rate(struct json *j, const char *key, double count, double s)
{
	if (s > 0)
		json_raw(j, key, "%.0f", count / s);
	else
		json_raw(j, key, "null");
}

void json_print(struct json *j)
{
	printf("%s}\n", j->s);
	fflush(stdout);
}

