/*
 * DOC: Verdicts of filters that read only attributes, memoized.
 *
 * A route server's export filter per client tests the route's
 * communities and path and scrubs the server's own communities: what it
 * decides is a function of the route's attribute list alone. An update
 * group runs every client's filter on every route (one per export
 * class), and the routes of one UPDATE share their list, so most of
 * those runs repeat one that the thread made a moment before. Such a
 * filter is marked pure when compiled (f_mark_pure()), and f_run() then
 * looks in the thread's memo (nest/ea_memo.h) by (filter, list, stamped
 * preference) before it runs anything.
 *
 * Pure means: no instruction reads the net, the sending protocol or a
 * ROA or ASPA table (whose contents change under the filter), none
 * prints, asserts or raises an error of its own, and every function it
 * calls is pure too. Run-time errors are never remembered (each is
 * logged). Verdicts go in the memo as the result list: NULL rejects, the
 * input list itself accepts it unchanged, any other accepts with that
 * list. A verdict-only run (verdict_only: an update group asking whether
 * a class took the route a change replaces, whose list it met long
 * before) runs the code: it would mostly miss, and an accept without
 * its list could not serve a full run.
 */
#include "filter/f_inst.h"
#include "filter/filter.h"
#include "nest/ea_memo.h"

static bool
jtest_pure(const struct f_jtest *t)
{
  return t->attr && t->method != FI_ROA_CHECK;
}

static bool
insn_pure(const struct f_insn *in)
{
  switch (in->op) {
  case FI_SA_NET: case FI_NET_METHOD: case FI_JCMP_NET: case FI_JMATCH_NET:
  case FI_ROA_CHECK: case FI_ROA_CHECK_ROUTE: case FI_ASPA_CHECK:
  case FI_PRINT: case FI_ASSERT: case FI_ERROR:
    return false;
  case FI_SA_GET:
    return in->b != SA_NET && in->b != SA_PROTO;
  case FI_SA_SET:
    return in->b != SA_IFNAME;          /* looks the interface up by name */
  case FI_ACCEPT: case FI_REJECT:
    return !in->a;                      /* prints its values first */
  case FI_JCMP_RT: case FI_JMATCH_RT: case FI_JCMP_PATH: case FI_JMATCH_PATH: case FI_JMATCH_CLIST:
    return jtest_pure(in->p.p);
  case FI_CALL: {
    const struct filter *callee = in->p.p;
    return callee->compiled && callee->pure;
  }
  }
  return true;
}

void
f_mark_pure(struct filter *f)
{
  f->pure = f->kind == FK_FILTER || f->kind == FK_FUNCTION || f->kind == FK_WHERE;
  for (uint i = 0; i < f->len && f->pure; i++)
    f->pure = insn_pure(&f->code[i]);
}

bool
filter_pure(const struct filter *f)
{
  return f == FILTER_ACCEPT || f == FILTER_REJECT || (f && f->pure);
}

struct f_verdict_bytes {
  u64 uid;
  u32 set_preference;
  u32 zero;
};

static struct ea_memo_key
verdict_key(const struct filter *f, const struct f_route *r, struct f_verdict_bytes *kb)
{
  *kb = (struct f_verdict_bytes){ .uid = f->uid, .set_preference = r->set_preference };
  /* One multiply: the memo is the thread's own and holds its keys'
   * references, so no one can aim collisions at it that matter. */
  u64 x = (uintptr_t) r->attrs ^ (f->uid * 0x9e3779b97f4a7c15ULL) ^ ((u64) r->set_preference << 40);
  return (struct ea_memo_key){
    .src = r->attrs, .hash = (u32) ((x * 0x9e3779b97f4a7c15ULL) >> 32), .len = sizeof(*kb), .bytes = kb };
}

enum f_result
f_run_pure(const struct filter *f, struct f_route *r, linpool *tmp)
{
  if (r->verdict_only)
    return f_exec(f, r, tmp, NULL, NULL);
  struct f_verdict_bytes kb;
  struct ea_memo_key k = verdict_key(f, r, &kb);
  struct ea_list *out;
  if (ea_memo_get(EA_MEMO_VERDICT, &k, &out)) {
    if (!out)
      return F_REJECT;
    if (out != r->attrs)
      ea_memo_take(EA_MEMO_VERDICT, &k, &r->out);   /* a reference from the entry's stock */
    return F_ACCEPT;
  }
  enum f_result res = f_exec(f, r, tmp, NULL, NULL);
  if (res == F_REJECT)
    ea_memo_put(EA_MEMO_VERDICT, &k, NULL);
  else if (res == F_ACCEPT)
    ea_memo_put(EA_MEMO_VERDICT, &k, ea_ref(r->out ? r->out : r->attrs));
  return res;
}
