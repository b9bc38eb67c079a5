/*
 * DOC: Client command table: expansion, completion, `?` help
 *
 * commands.def is turned into a keyword tree once, on first use: one node per
 * keyword position, children in order of first appearance. A node may carry
 * a CMD entry (it is a complete command), a HELP entry (how its parent's
 * listing shows it) and OPT words (options that may follow the command).
 *
 * A user line is cut into words (a "quoted string" with spaces is one word)
 * and fed to a walker. In the tree a word matches a child exactly, or as the
 * unique prefix of one; once a word is not a keyword the walker either stops
 * (nothing after it is touched, as in BIRD) or, for commands with OPTs,
 * moves to option mode: from then on words are matched against the option
 * keywords, and the argument words of an option are skipped. The same walk
 * serves expansion (replace each keyword by its full form) and completion
 * (which keywords may come next). `?` help follows BIRD 2 exactly and only
 * looks at the tree.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client/client.h"

enum cmd_arg {
  CMD_ARG_NONE,
  CMD_ARG_ONE,
  CMD_ARG_TABLE,
  CMD_ARG_FILTER,
  CMD_ARG_REST,
};

struct cmd_entry {
  const char *words, *args, *help;
  bool help_only;
};

struct cmd_opt {
  const char *context, *word;
  enum cmd_arg arg;
};

static const struct cmd_entry cmd_entries[] = {
#define CMD(w, a, h) { w, a, h, false },
#define HELP(w, a, h) { w, a, h, true },
#include "client/commands.def"
};

static const struct cmd_opt cmd_opts[] = {
#define OPT(c, w, a) { c, w, CMD_ARG_##a },
#include "client/commands.def"
};

struct cmd_node {
  const char *token;            /* points into an entry's words */
  size_t len;
  const char *path;             /* "show route": words up to this node */
  size_t path_len;
  struct cmd_node *first, *last, *next;  /* children, in table order */
  const struct cmd_entry *cmd, *help;
  bool has_opts;
};

static struct cmd_node *cmd_root;

static bool cmd_isspace(char c)
{
  return isspace((unsigned char) c);
}

/* Next space-separated word of a table string; false at the end. */
static bool cmd_table_word(const char **p, const char **w, size_t *len)
{
  while (**p == ' ')
    (*p)++;
  if (!**p)
    return false;
  *w = *p;
  while (**p && **p != ' ')
    (*p)++;
  *len = *p - *w;
  return true;
}

static struct cmd_node *cmd_child(struct cmd_node *n, const char *tok, size_t len)
{
  for (struct cmd_node *c = n->first; c; c = c->next)
    if (c->len == len && !memcmp(c->token, tok, len))
      return c;
  return NULL;
}

/* Finds the node of @words, creating missing ones from @pool when given. */
static struct cmd_node *cmd_tree_path(const char *words, struct cmd_node *pool, size_t *used)
{
  struct cmd_node *n = cmd_root;
  const char *p = words, *w;
  size_t len;

  while (cmd_table_word(&p, &w, &len)) {
    struct cmd_node *c = cmd_child(n, w, len);
    if (!c) {
      if (!pool)
        return NULL;
      c = &pool[(*used)++];
      c->token = w;
      c->len = len;
      c->path = words;
      c->path_len = p - words;
      if (n->last)
        n->last->next = c;
      else
        n->first = c;
      n->last = c;
    }
    n = c;
  }
  return n;
}

static void cmd_tree_init(void)
{
  size_t words = 0, used = 0;

  if (cmd_root)
    return;

  for (size_t i = 0; i < ARRAY_SIZE(cmd_entries); i++) {
    const char *p = cmd_entries[i].words, *w;
    size_t len;
    while (cmd_table_word(&p, &w, &len))
      words++;
  }

  /* The root and every possible node in one block that lives until exit. */
  struct cmd_node *pool = calloc(words + 1, sizeof(*pool));
  if (!pool) {
    fputs("Out of memory\n", stderr);
    exit(1);
  }
  cmd_root = pool;
  used = 1;

  for (size_t i = 0; i < ARRAY_SIZE(cmd_entries); i++) {
    const struct cmd_entry *e = &cmd_entries[i];
    struct cmd_node *n = cmd_tree_path(e->words, pool, &used);
    if (e->help_only)
      n->help = e;
    else
      n->cmd = e;
  }

  for (size_t i = 0; i < ARRAY_SIZE(cmd_opts); i++) {
    struct cmd_node *n = cmd_tree_path(cmd_opts[i].context, NULL, NULL);
    if (n)
      n->has_opts = true;
  }
}

static bool cmd_opt_of(const struct cmd_node *n, const struct cmd_opt *o)
{
  return n->has_opts && strlen(o->context) == n->path_len && !memcmp(o->context, n->path, n->path_len);
}

/* ---- Words of a user line ---- */

struct cmd_word {
  const char *s;
  size_t len;
  bool quoted;          /* contains a '"': never a keyword */
};

/* Next word at or after *@p, a quoted part with spaces included. */
static bool cmd_next_word(const char **p, const char *end, struct cmd_word *w)
{
  const char *c = *p;
  bool in_string = false;

  while (c < end && cmd_isspace(*c))
    c++;
  if (c >= end)
    return false;

  w->s = c;
  w->quoted = false;
  for (; c < end && (in_string || !cmd_isspace(*c)); c++)
    if (*c == '"') {
      in_string = !in_string;
      w->quoted = true;
    }
  w->len = c - w->s;
  *p = c;
  return true;
}

static bool cmd_word_is(const struct cmd_word *w, const char *s)
{
  return strlen(s) == w->len && !memcmp(w->s, s, w->len);
}

/* Change of {} nesting in a word, ignoring quoted parts. */
static int cmd_brace_delta(const struct cmd_word *w)
{
  bool in_string = false;
  int d = 0;

  for (size_t i = 0; i < w->len; i++)
    if (w->s[i] == '"')
      in_string = !in_string;
    else if (!in_string && w->s[i] == '{')
      d++;
    else if (!in_string && w->s[i] == '}')
      d--;
  return d;
}

/* ---- Matching ---- */

/* A keyword candidate: a child node or an option word. */
struct cmd_cand {
  const struct cmd_node *node;
  const struct cmd_opt *opt;
};

static const char *cmd_cand_word(const struct cmd_cand *c, size_t *len)
{
  if (c->node) {
    *len = c->node->len;
    return c->node->token;
  }
  *len = strlen(c->opt->word);
  return c->opt->word;
}

typedef void (*cmd_cand_fn)(const struct cmd_cand *c, void *ctx);

/* Calls @fn for every keyword of node @n (children if @tree, options if
 * @opts) that starts with @prefix. Returns how many there were. */
static int cmd_candidates(const struct cmd_node *n, bool tree, bool opts, const char *prefix, size_t len,
                          cmd_cand_fn fn, void *ctx)
{
  int count = 0;

  if (tree)
    for (const struct cmd_node *c = n->first; c; c = c->next)
      if (c->len >= len && !memcmp(c->token, prefix, len)) {
        if (fn)
          fn(&(struct cmd_cand) { .node = c }, ctx);
        count++;
      }

  for (size_t i = 0; opts && i < ARRAY_SIZE(cmd_opts); i++) {
    const struct cmd_opt *o = &cmd_opts[i];
    if (cmd_opt_of(n, o) && strlen(o->word) >= len && !memcmp(o->word, prefix, len)) {
      if (fn)
        fn(&(struct cmd_cand) { .opt = o }, ctx);
      count++;
    }
  }
  return count;
}

struct cmd_find {
  const char *word;
  size_t len;
  struct cmd_cand exact, any;
};

static void cmd_find_one(const struct cmd_cand *c, void *ctx)
{
  struct cmd_find *f = ctx;
  size_t len;
  cmd_cand_word(c, &len);
  if (len == f->len && !f->exact.node && !f->exact.opt)
    f->exact = *c;
  f->any = *c;
}

/* Resolves an abbreviation: an exact keyword wins, else the only keyword it
 * is a prefix of. Returns the number of matches (>1: ambiguous). */
static int cmd_find(const struct cmd_node *n, bool tree, bool opts, const struct cmd_word *w,
                    struct cmd_cand *out)
{
  struct cmd_find f = { .word = w->s, .len = w->len };
  int count = cmd_candidates(n, tree, opts, w->s, w->len, cmd_find_one, &f);

  if (f.exact.node || f.exact.opt) {
    *out = f.exact;
    return 1;
  }
  *out = f.any;
  return count;
}

/* ---- Walking a line ---- */

enum cmd_mode {
  CMD_MODE_TREE,        /* still matching command keywords */
  CMD_MODE_OPTS,        /* past the command: option keywords and arguments */
  CMD_MODE_STOP,        /* a non-keyword ended expansion */
  CMD_MODE_REST,        /* the rest of the line is an argument */
};

struct cmd_walk {
  const struct cmd_node *node;  /* the command reached so far */
  enum cmd_mode mode;
  int args;                     /* argument words still to skip */
  enum cmd_arg expect;          /* kind of the next argument word */
  int depth;                    /* inside a { ... } filter argument */
};

enum cmd_step {
  CMD_STEP_PASS,        /* not a keyword: keep the word */
  CMD_STEP_KEYWORD,     /* a keyword: replace the word by *kw */
  CMD_STEP_AMBIGUOUS,
};

static void cmd_walk_init(struct cmd_walk *w)
{
  cmd_tree_init();
  *w = (struct cmd_walk) { .node = cmd_root, .mode = CMD_MODE_TREE };
}

static bool cmd_walk_in_arg(const struct cmd_walk *w)
{
  return w->args > 0 || w->depth > 0;
}

static void cmd_walk_arg(struct cmd_walk *w, const struct cmd_word *word)
{
  if (w->depth > 0) {
    w->depth += cmd_brace_delta(word);
    if (w->depth < 0)
      w->depth = 0;
    return;
  }

  enum cmd_arg e = w->expect;
  w->expect = CMD_ARG_ONE;
  w->args--;
  if (e == CMD_ARG_TABLE && cmd_word_is(word, "table"))
    w->args++;
  if (e == CMD_ARG_FILTER && cmd_brace_delta(word) > 0)
    w->depth = cmd_brace_delta(word);
}

static void cmd_walk_option(struct cmd_walk *w, const struct cmd_opt *o)
{
  w->mode = CMD_MODE_OPTS;
  w->expect = o->arg;
  switch (o->arg) {
  case CMD_ARG_NONE:
    w->args = 0;
    break;
  case CMD_ARG_REST:
    w->mode = CMD_MODE_REST;
    break;
  default:
    w->args = 1;
    break;
  }
}

static enum cmd_step cmd_walk_step(struct cmd_walk *w, const struct cmd_word *word,
                                   const char **kw, size_t *kw_len)
{
  if (w->mode == CMD_MODE_STOP || w->mode == CMD_MODE_REST)
    return CMD_STEP_PASS;

  if (cmd_walk_in_arg(w)) {
    cmd_walk_arg(w, word);
    return CMD_STEP_PASS;
  }

  if (!word->quoted) {
    struct cmd_cand c;
    int n = cmd_find(w->node, w->mode == CMD_MODE_TREE, true, word, &c);
    if (n > 1)
      return CMD_STEP_AMBIGUOUS;
    if (n == 1) {
      *kw = cmd_cand_word(&c, kw_len);
      if (c.node)
        w->node = c.node;
      else
        cmd_walk_option(w, c.opt);
      return CMD_STEP_KEYWORD;
    }
  }

  /* A value (prefix, name, string): options may still follow it. */
  w->mode = w->node->has_opts ? CMD_MODE_OPTS : CMD_MODE_STOP;
  return CMD_STEP_PASS;
}

/* ---- Help lines ---- */

static void cmd_print_entry(FILE *out, const struct cmd_entry *e)
{
  char buf[512];

  snprintf(buf, sizeof(buf), "%s%s%s", e->words, e->args[0] ? " " : "", e->args);
  fprintf(out, "%-45s  %s\n", buf, e->help);
}

/* How a node shows in its parent's listing; hidden when it has no entry. */
static void cmd_print_node(FILE *out, const struct cmd_node *n)
{
  const struct cmd_entry *e = n->help ? n->help : n->cmd;
  if (e)
    cmd_print_entry(out, e);
}

/* Listing line of a candidate in `?` help and ambiguity messages. */
static void cmd_print_cand(const struct cmd_cand *c, void *ctx)
{
  FILE *out = ctx;

  if (c->node)
    cmd_print_node(out, c->node);
  else
    fprintf(out, "%s %s\n", c->opt->context, c->opt->word);
}

/* Listing line of a TAB candidate: hidden nodes show too ("mrt ..."). */
static void cmd_print_completion(const struct cmd_cand *c, void *ctx)
{
  FILE *out = ctx;

  if (c->node && !c->node->help && !c->node->cmd)
    fprintf(out, "%.*s ...\n", (int) c->node->path_len, c->node->path);
  else
    cmd_print_cand(c, out);
}

static void cmd_print_ambiguous(const struct cmd_walk *w, const struct cmd_word *word, FILE *out)
{
  fputs("Ambiguous command, possible expansions are:\n", out);
  cmd_candidates(w->node, w->mode == CMD_MODE_TREE, true, word->s, word->len, cmd_print_cand, out);
}

/* ---- Public interface ---- */

static void cmd_append(char **buf, size_t *len, size_t *cap, const char *s, size_t n)
{
  if (*len + n + 1 > *cap) {
    size_t want = MAX(*cap * 2, *len + n + 64);
    char *b = realloc(*buf, want);
    if (!b) {
      fputs("Out of memory\n", stderr);
      exit(1);
    }
    *buf = b;
    *cap = want;
  }
  memcpy(*buf + *len, s, n);
  *len += n;
  (*buf)[*len] = 0;
}

enum cmd_expand_result cmd_expand(const char *line, char **out, FILE *msg)
{
  const char *end = line + strlen(line), *p = line, *copied = NULL;
  char *buf = NULL;
  size_t len = 0, cap = 0;
  struct cmd_walk w;
  struct cmd_word word;

  cmd_walk_init(&w);
  *out = NULL;

  while (cmd_next_word(&p, end, &word)) {
    const char *kw = word.s;
    size_t kw_len = word.len;

    /* What separated this word from the previous one stays as typed. */
    if (copied)
      cmd_append(&buf, &len, &cap, copied, word.s - copied);
    copied = word.s + word.len;

    switch (cmd_walk_step(&w, &word, &kw, &kw_len)) {
    case CMD_STEP_AMBIGUOUS:
      cmd_print_ambiguous(&w, &word, msg);
      free(buf);
      return CMD_EXPAND_AMBIGUOUS;
    case CMD_STEP_KEYWORD:
    case CMD_STEP_PASS:
      cmd_append(&buf, &len, &cap, kw, kw_len);
      break;
    }
  }

  if (!copied)
    return CMD_EXPAND_EMPTY;

  if (!w.node->cmd) {
    fputs("No such command. Press `?' for help.\n", msg);
    free(buf);
    return CMD_EXPAND_UNKNOWN;
  }

  cmd_append(&buf, &len, &cap, copied, end - copied);
  *out = buf;
  return CMD_EXPAND_OK;
}

enum cmd_internal cmd_internal(const char *expanded)
{
  const char *p = expanded;
  struct cmd_word w;

  if (!cmd_next_word(&p, p + strlen(p), &w))
    return CMD_INTERNAL_NONE;
  if (cmd_word_is(&w, "quit") || cmd_word_is(&w, "exit"))
    return CMD_INTERNAL_QUIT;
  if (cmd_word_is(&w, "help"))
    return CMD_INTERNAL_HELP;
  return CMD_INTERNAL_NONE;
}

void cmd_help(const char *line, size_t len, FILE *out)
{
  const char *p = line, *end = line + len;
  const struct cmd_node *n;
  struct cmd_word word;

  cmd_tree_init();
  n = cmd_root;

  /* Only the tree counts: the first word that is not a command keyword
   * (a "?" glued to a word included) ends the walk, as in BIRD. */
  while (cmd_next_word(&p, end, &word)) {
    struct cmd_cand c = { 0 };
    int count = word.quoted ? 0 : cmd_find(n, true, false, &word, &c);

    if (count > 1) {
      cmd_candidates(n, true, false, word.s, word.len, cmd_print_cand, out);
      return;
    }
    if (!count)
      break;
    n = c.node;
  }

  if (n->cmd)
    cmd_print_entry(out, n->cmd);
  for (const struct cmd_node *c = n->first; c; c = c->next)
    cmd_print_node(out, c);
}

/* Walks the words before the one being completed. False when the position
 * takes no keyword (an argument, or an ambiguous word before it). */
static bool cmd_complete_walk(const char *line, size_t point, struct cmd_walk *w, struct cmd_word *partial)
{
  const char *p = line, *end = line + point;
  struct cmd_word word;

  cmd_walk_init(w);
  *partial = (struct cmd_word) { .s = end, .len = 0 };

  while (cmd_next_word(&p, end, &word)) {
    const char *kw;
    size_t kw_len;

    if (word.s + word.len == end && !cmd_isspace(end[-1])) {
      *partial = word;
      break;
    }
    if (cmd_walk_step(w, &word, &kw, &kw_len) == CMD_STEP_AMBIGUOUS)
      return false;
  }

  if (partial->quoted || cmd_walk_in_arg(w))
    return false;
  return w->mode == CMD_MODE_TREE || w->mode == CMD_MODE_OPTS;
}

struct cmd_common {
  const char *first;
  size_t len;           /* length of the common prefix so far */
  bool any;
};

static void cmd_common_one(const struct cmd_cand *c, void *ctx)
{
  struct cmd_common *cc = ctx;
  size_t len;
  const char *word = cmd_cand_word(c, &len);

  if (!cc->any) {
    cc->first = word;
    cc->len = len;
    cc->any = true;
    return;
  }
  size_t i = 0;
  while (i < cc->len && i < len && cc->first[i] == word[i])
    i++;
  cc->len = i;
}

int cmd_complete(const char *line, size_t point, char **insert)
{
  struct cmd_walk w;
  struct cmd_word partial;
  struct cmd_common cc = { 0 };

  *insert = NULL;
  if (!cmd_complete_walk(line, point, &w, &partial))
    return 0;

  int n = cmd_candidates(w.node, w.mode == CMD_MODE_TREE, true, partial.s, partial.len, cmd_common_one, &cc);
  if (!n)
    return 0;

  size_t rest = cc.len - partial.len;
  char *s = malloc(rest + 2);
  if (!s) {
    fputs("Out of memory\n", stderr);
    exit(1);
  }
  memcpy(s, cc.first + partial.len, rest);
  if (n == 1)
    s[rest++] = ' ';
  s[rest] = 0;
  *insert = s;
  return n;
}

void cmd_list_completions(const char *line, size_t point, FILE *out)
{
  struct cmd_walk w;
  struct cmd_word partial;

  if (cmd_complete_walk(line, point, &w, &partial))
    cmd_candidates(w.node, w.mode == CMD_MODE_TREE, true, partial.s, partial.len, cmd_print_completion, out);
}
