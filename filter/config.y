/* Filter language grammar (filters, functions, expressions, sets). */
%%header
#include "filter/f_inst.h"
#include "nest/ea_bgp.h"
/* Grammar actions: abort the parse when a tree builder failed. */
#define FX(e) ({ __typeof__(e) fx_ = (e); if (!fx_) YYABORT; fx_; })

%%decls
%union {
  struct f_expr *x;
  struct f_val fv;
  const struct f_attr *fa;
  struct filter *fl;
  struct f_setb *sb;
  struct f_pmi *pmi;
  struct f_arm *arm;
  struct f_prefix fp;
}

%token <i> CF_ENUM

%precedence THEN
%precedence ELSE

%type <x> term cmd cmds cmds_nonempty block var_list var_list_ne function_call symbol_value
%type <x> constructor static_attr_get dynamic_attr_get lvalue function_vars function_body decl
%type <x> bgp_path_expr for_var
%type <i> type ftype sa_name ec_kind cnum print_verb r_export_mode
%type <fa> dynamic_attr
%type <fv> constant fipa set_atom switch_atom
%type <fl> filter where_filter filter_inline
%type <sb> set_items set_start set_again set_tuple
%type <pmi> bgp_path_tail
%type <arm> switch_body switch_items switch_item
%type <fp> fprefix

%%keywords function print printn unset return accept reject error
%%keywords int bool ip type prefix rd pair quad ec lc set string bytestring bgpmask bgppath clist eclist lclist
%%keywords if then else case for do
%%keywords rt ro unknown generic
%%keywords gw net proto source scope dest ifname ifindex weight onlink igp_metric gw_mpls
%%keywords roa_check aspa_check aspa_check_upstream aspa_check_downstream asn src dst
%%keywords is_v4 is_v6 len maxlen data data1 data2 defined
%%keywords add delete contains reset prepend first last last_nonaggregated match empty
%%keywords where eval attribute from_hex format
%%keywords bt_assert bt_test_suite bt_check_assign bt_test_same
%%keywords bgp_path bgp_origin bgp_next_hop bgp_med bgp_local_pref bgp_atomic_aggr bgp_aggregator
%%keywords bgp_community bgp_ext_community bgp_large_community bgp_originator_id bgp_cluster_list bgp_otc bgp_aigp
%%keywords keep aspa mask noexport preexport exported

%%grammar
/* --- Definitions --- */

conf_item: filter_def ;
conf_item: function_def ;
conf_item: ATTRIBUTE type symbol ';' { if (f_define_attribute(cx, $3, $2) < 0) YYABORT; } ;
conf_item: BT_TEST_SUITE '(' CF_SYM_KNOWN ',' text ')' ';' {
    if (f_test_suite(cx, $3, $5) < 0) YYABORT;
  } ;
conf_item: BT_TEST_SAME '(' CF_SYM_KNOWN ',' CF_SYM_KNOWN ',' NUM ')' ';' {
    if (f_test_same(cx, $3, $5, $7) < 0) YYABORT;
  } ;

filter_def: FILTER symbol { if (f_function_start(cx, $2, 1) < 0) YYABORT; } function_body {
    if (!f_function_end(cx, $4)) YYABORT;
  } ;

function_def: FUNCTION symbol { if (f_function_start(cx, $2, 0) < 0) YYABORT; }
    '(' function_params ')' function_type function_body {
    if (!f_function_end(cx, $8)) YYABORT;
  } ;

function_params: /* empty */ | function_params_ne ;
function_params_ne: function_param | function_params_ne ',' function_param | function_params_ne ';' function_param ;
function_param: type symbol { if (f_function_arg(cx, $1, $2) < 0) YYABORT; } ;
function_type: /* empty */ { f_function_ret(cx, T_ANY); } | IMP type { f_function_ret(cx, $2); } ;

/* Locals declared before the body's '{' (BIRD's older style). */
function_body: function_vars '{' cmds '}' { $$ = f_append($1, $3); } ;
function_vars:
   /* empty */ { $$ = NULL; }
 | function_vars type symbol ';' { $$ = f_append($1, FX(f_new_decl(cx, $2, $3, NULL))); }
 ;

/* Types */
ftype:
   INT { $$ = T_INT; }
 | BOOL { $$ = T_BOOL; }
 | IP { $$ = T_IP; }
 | RD { $$ = T_RD; }
 | PREFIX { $$ = T_NET; }
 | PAIR { $$ = T_PAIR; }
 | QUAD { $$ = T_QUAD; }
 | EC { $$ = T_EC; }
 | LC { $$ = T_LC; }
 | STRING { $$ = T_STRING; }
 | BYTESTRING { $$ = T_BYTESTRING; }
 | BGPMASK { $$ = T_PATH_MASK; }
 | BGPPATH { $$ = T_PATH; }
 | CLIST { $$ = T_CLIST; }
 | ECLIST { $$ = T_ECLIST; }
 | LCLIST { $$ = T_LCLIST; }
 ;
type:
   ftype
 | ftype SET {
     switch ($1) {
     case T_INT: case T_PAIR: case T_QUAD: case T_EC: case T_LC: case T_RD: case T_IP: case T_STRING:
       $$ = T_SET; break;
     case T_NET:
       $$ = T_PREFIX_SET; break;
     default:
       cf_error("You can't create sets of this type.");
     }
   }
 ;

/* --- Filters in channels and commands --- */

filter:
   CF_SYM_KNOWN {
     if ($1->class != SYM_FILTER) cf_error("No such filter.");
     $$ = $1->def;
   }
 | filter_inline
 ;
filter_inline: { f_inline_start(cx); } function_body { $$ = FX(f_inline_end(cx, $2)); } ;
where_filter: WHERE { f_inline_start(cx); } term { $$ = FX(f_new_where(cx, $3)); } ;

channel_item: IMPORT FILTER filter { cx->this_channel->in_filter = $3; cx->this_channel->in_filter_set = 1; } ;
channel_item: EXPORT FILTER filter { cx->this_channel->out_filter = $3; cx->this_channel->out_filter_set = 1; } ;
channel_item: IMPORT where_filter { cx->this_channel->in_filter = $2; cx->this_channel->in_filter_set = 1; } ;
channel_item: EXPORT where_filter { cx->this_channel->out_filter = $2; cx->this_channel->out_filter_set = 1; } ;
channel_item: IMPORT KEEP FILTERED bool { cx->this_channel->in_keep_filtered = $4; } ;

/* CLI */
cli_cmd: EVAL { f_inline_start(cx); } term END { f_cli_eval(cx->cli, cx, $3); } ;
r_args: r_args FILTER filter {
    $$ = $1;
    if ($$->filter) cf_error("Filter specified twice");
    $$->filter = $3;
  } ;
r_args: r_args EXPORT CF_SYM_KNOWN {
    $$ = $1;
    if ($3->class != SYM_PROTO) cf_error("%s is not a protocol", $3->name);
    if ($$->export_mode) cf_error("Export specified twice");
    $$->export_mode = SRA_EXPORT; $$->export_proto = $3->name;
    $$->tables_direct = 0;
  } ;
r_args: r_args r_export_mode CF_SYM_KNOWN {
    $$ = $1;
    if ($3->class != SYM_PROTO) cf_error("%s is not a protocol", $3->name);
    if ($$->export_mode) cf_error("Export specified twice");
    $$->export_mode = $2; $$->export_proto = $3->name;
    $$->tables_direct = 0;
  } ;
r_export_mode: NOEXPORT { $$ = SRA_NOEXPORT; } | PREEXPORT { $$ = SRA_PREEXPORT; } | EXPORTED { $$ = SRA_EXPORTED; } ;
r_args: r_args where_filter {
    $$ = $1;
    if ($$->filter) cf_error("Filter specified twice");
    $$->filter = $2;
  } ;

/* --- Statements --- */

cmds: /* empty */ { $$ = NULL; } | cmds_nonempty ;
cmds_nonempty: cmd | cmds_nonempty cmd { $$ = f_append($1, $2); } ;

block: '{' { f_scope_push(cx); } cmds '}' { f_scope_pop(cx); $$ = FX(f_new_block(cx, $3)); } ;

cmd:
   block
 | IF term THEN cmd %prec THEN { $$ = FX(f_new_if(cx, $2, $4, NULL)); }
 | IF term THEN cmd ELSE cmd { $$ = FX(f_new_if(cx, $2, $4, $6)); }
 | decl
 | CF_SYM_KNOWN '=' term ';' { $$ = FX(f_new_assign(cx, $1, $3)); }
 | CF_SYM_UNDEFINED '=' term ';' { $$ = FX(f_new_assign(cx, $1, $3)); }
 | RETURN term ';' { $$ = FX(f_new_return(cx, $2)); }
 | RETURN ';' { $$ = FX(f_new_return(cx, NULL)); }
 | dynamic_attr '=' term ';' { $$ = FX(f_new_ea_set(cx, $1, $3)); }
 | sa_name '=' term ';' { $$ = FX(f_new_sa_set(cx, $1, $3)); }
 | UNSET '(' dynamic_attr ')' ';' { $$ = FX(f_new_ea_unset(cx, $3)); }
 | UNSET '(' CF_SYM_KNOWN ')' ';' {
     if ($3->class != SYM_ATTRIBUTE) cf_error("Attribute expected");
     $$ = FX(f_new_ea_unset(cx, $3->def));
   }
 | ACCEPT ';' { $$ = FX(f_new_print(cx, FI_ACCEPT, 0, NULL)); }
 | ACCEPT var_list_ne ';' { $$ = FX(f_new_print(cx, FI_ACCEPT, 0, $2)); }
 | REJECT ';' { $$ = FX(f_new_print(cx, FI_REJECT, 0, NULL)); }
 | REJECT var_list_ne ';' { $$ = FX(f_new_print(cx, FI_REJECT, 0, $2)); }
 | ERROR var_list_ne ';' { $$ = FX(f_new_print(cx, FI_ERROR, 0, $2)); }
 | print_verb var_list ';' { $$ = FX(f_new_print(cx, FI_PRINT, $1, $2)); }
 | function_call ';' { $$ = $1; }
 | CASE term '{' switch_body '}' { $$ = FX(f_new_case(cx, $2, $4)); }
 | lvalue '.' EMPTY ';' { $$ = FX(f_new_lvalue_method(cx, $1, FI_EMPTY, NULL)); }
 | lvalue '.' PREPEND '(' term ')' ';' { $$ = FX(f_new_lvalue_method(cx, $1, FI_PREPEND, $5)); }
 | lvalue '.' ADD '(' term ')' ';' { $$ = FX(f_new_lvalue_method(cx, $1, FI_ADD_ITEM, $5)); }
 | lvalue '.' DELETE '(' term ')' ';' { $$ = FX(f_new_lvalue_method(cx, $1, FI_DELETE, $5)); }
 | lvalue '.' FILTER '(' term ')' ';' { $$ = FX(f_new_lvalue_method(cx, $1, FI_FILTER, $5)); }
 | BT_ASSERT '(' term ')' ';' { $$ = FX(f_new_assert(cx, $3, NULL)); }
 | BT_CHECK_ASSIGN '(' lvalue ',' term ')' ';' { $$ = FX(f_new_check_assign(cx, $3, $5)); }
 | FOR { f_scope_push(cx); } for_var IN term DO cmd {
     f_scope_pop(cx);
     $$ = FX(f_new_for(cx, $3, $5, $7));
   }
 ;

print_verb: PRINT { $$ = 0; } | PRINTN { $$ = 1; } ;

decl:
   type symbol '=' term ';' { $$ = FX(f_new_decl(cx, $1, $2, $4)); }
 | type symbol ';' { $$ = FX(f_new_decl(cx, $1, $2, NULL)); }
 ;

for_var:
   type symbol { $$ = FX(f_new_for_var(cx, $1, $2)); }
 | CF_SYM_KNOWN { $$ = FX(f_new_symbol(cx, $1)); }
 | CF_SYM_UNDEFINED { $$ = FX(f_new_symbol(cx, $1)); }
 ;

lvalue:
   CF_SYM_KNOWN { $$ = FX(f_new_symbol(cx, $1)); }
 | CF_SYM_UNDEFINED { $$ = FX(f_new_symbol(cx, $1)); }
 | dynamic_attr { $$ = FX(f_new_ea_get(cx, $1)); }
 | sa_name { $$ = FX(f_new_sa_get(cx, $1)); }
 ;

var_list: /* empty */ { $$ = NULL; } | var_list_ne ;
var_list_ne: term | var_list_ne ',' term { $$ = f_append($1, $3); } ;

function_call: CF_SYM_KNOWN '(' var_list ')' { $$ = FX(f_new_call(cx, $1, $3)); } ;

/* case: labels, then statements (with or without braces, BIRD 2 and 3) */
switch_body:
   /* empty */ { $$ = NULL; }
 | switch_body switch_items ':' cmds {
     for (struct f_arm *a = $2; a; a = a->next) a->body = $4 ? $4 : FX(f_new(cx, FI_NOP, T_VOID));
     struct f_arm **pp = &$1;
     while (*pp) pp = &(*pp)->next;
     *pp = $2;
     $$ = $1;
   }
 | switch_body ELSE ':' cmds {
     struct f_arm *a = cf_alloc(cx, sizeof(struct f_arm));
     a->is_else = 1;
     a->body = $4 ? $4 : FX(f_new(cx, FI_NOP, T_VOID));
     struct f_arm **pp = &$1;
     while (*pp) pp = &(*pp)->next;
     *pp = a;
     $$ = $1;
   }
 ;
switch_items: switch_item | switch_items ',' switch_item { struct f_arm *a = $1; while (a->next) a = a->next; a->next = $3; $$ = $1; } ;
switch_item:
   switch_atom { $$ = cf_alloc(cx, sizeof(struct f_arm)); $$->from = $$->to = $1; }
 | set_tuple { $$ = f_arms_from_set(cx, $1); }
 | switch_atom DDOT switch_atom {
     $$ = cf_alloc(cx, sizeof(struct f_arm)); $$->from = $1; $$->to = $3;
     if ($1.type != $3.type) cf_error("Range of different types");
   }
 ;
switch_atom:
   NUM { $$ = f_int(T_INT, $1); }
 | '(' term ')' { if (f_eval_const(cx, $2, &$$) < 0) YYABORT; }
 | fipa
 | CF_ENUM { $$ = f_val_enum($1); }
 ;

/* --- Expressions --- */

term:
   '(' term ')' { $$ = $2; }
 | term '+' term { $$ = FX(f_new_binary(cx, FI_ADD, $1, $3)); }
 | term '-' term { $$ = FX(f_new_binary(cx, FI_SUB, $1, $3)); }
 | term '*' term { $$ = FX(f_new_binary(cx, FI_MUL, $1, $3)); }
 | term '/' term { $$ = FX(f_new_binary(cx, FI_DIV, $1, $3)); }
 | term AND term { $$ = FX(f_new_binary(cx, FI_AND, $1, $3)); }
 | term OR term { $$ = FX(f_new_binary(cx, FI_OR, $1, $3)); }
 | term '=' term { $$ = FX(f_new_binary(cx, FI_EQ, $1, $3)); }
 | term EQ term { $$ = FX(f_new_binary(cx, FI_EQ, $1, $3)); }
 | term NEQ term { $$ = FX(f_new_binary(cx, FI_NEQ, $1, $3)); }
 | term '<' term { $$ = FX(f_new_binary(cx, FI_LT, $1, $3)); }
 | term LEQ term { $$ = FX(f_new_binary(cx, FI_LE, $1, $3)); }
 | term '>' term { $$ = FX(f_new_binary(cx, FI_LT, $3, $1)); }
 | term GEQ term { $$ = FX(f_new_binary(cx, FI_LE, $3, $1)); }
 | term '~' term { $$ = FX(f_new_binary(cx, FI_MATCH, $1, $3)); }
 | term NMA term { $$ = FX(f_new_binary(cx, FI_NMATCH, $1, $3)); }
 | '!' term { $$ = FX(f_new_unary(cx, FI_NOT, $2)); }
 | DEFINED '(' term ')' { $$ = FX(f_new_defined(cx, $3)); }
 | symbol_value
 | constant { $$ = FX(f_new_const(cx, $1)); }
 | constructor
 | static_attr_get
 | dynamic_attr_get
 | function_call
 | term '.' IS_V4 { $$ = FX(f_new_method(cx, FI_IS_V4, $1, NULL)); }
 | term '.' TYPE { $$ = FX(f_new_method(cx, FI_TYPE, $1, NULL)); }
 | term '.' IP { $$ = FX(f_new_method(cx, FI_IP, $1, NULL)); }
 | term '.' RD { $$ = FX(f_new_method(cx, FI_RD, $1, NULL)); }
 | term '.' LEN { $$ = FX(f_new_method(cx, FI_LEN, $1, NULL)); }
 | term '.' MAXLEN { $$ = FX(f_new_method(cx, FI_MAXLEN, $1, NULL)); }
 | term '.' ASN { $$ = FX(f_new_method(cx, FI_ASN, $1, NULL)); }
 | term '.' SRC { $$ = FX(f_new_method(cx, FI_NET_SRC, $1, NULL)); }
 | term '.' DST { $$ = FX(f_new_method(cx, FI_NET_DST, $1, NULL)); }
 | term '.' MASK '(' term ')' { $$ = FX(f_new_mask(cx, $1, $5)); }
 | term '.' FIRST { $$ = FX(f_new_method(cx, FI_FIRST, $1, NULL)); }
 | term '.' LAST { $$ = FX(f_new_method(cx, FI_LAST, $1, NULL)); }
 | term '.' LAST_NONAGGREGATED { $$ = FX(f_new_method(cx, FI_LAST_NONAGG, $1, NULL)); }
 | term '.' DATA { $$ = FX(f_new_method(cx, FI_DATA, $1, NULL)); }
 | term '.' DATA1 { $$ = FX(f_new_method(cx, FI_DATA1, $1, NULL)); }
 | term '.' DATA2 { $$ = FX(f_new_method(cx, FI_DATA2, $1, NULL)); }
 | term '.' MIN { $$ = FX(f_new_method(cx, FI_MIN, $1, NULL)); }
 | term '.' MAX { $$ = FX(f_new_method(cx, FI_MAX, $1, NULL)); }
 | term '.' EMPTY { $$ = FX(f_new_method(cx, FI_EMPTY, $1, NULL)); }
 | term '.' PREPEND '(' term ')' { $$ = FX(f_new_method(cx, FI_PREPEND, $1, $5)); }
 | term '.' ADD '(' term ')' { $$ = FX(f_new_method(cx, FI_ADD_ITEM, $1, $5)); }
 | term '.' DELETE '(' term ')' { $$ = FX(f_new_method(cx, FI_DELETE, $1, $5)); }
 | term '.' FILTER '(' term ')' { $$ = FX(f_new_method(cx, FI_FILTER, $1, $5)); }
 | '+' EMPTY '+' { $$ = FX(f_new_const(cx, f_val_empty(T_PATH))); }
 | '-' EMPTY '-' { $$ = FX(f_new_const(cx, f_val_empty(T_CLIST))); }
 | '-' '-' EMPTY '-' '-' { $$ = FX(f_new_const(cx, f_val_empty(T_ECLIST))); }
 | '-' '-' '-' EMPTY '-' '-' '-' { $$ = FX(f_new_const(cx, f_val_empty(T_LCLIST))); }
 | PREPEND '(' term ',' term ')' { $$ = FX(f_new_method(cx, FI_PREPEND, $3, $5)); }
 | ADD '(' term ',' term ')' { $$ = FX(f_new_method(cx, FI_ADD_ITEM, $3, $5)); }
 | DELETE '(' term ',' term ')' { $$ = FX(f_new_method(cx, FI_DELETE, $3, $5)); }
 | FILTER '(' term ',' term ')' { $$ = FX(f_new_method(cx, FI_FILTER, $3, $5)); }
 | ROA_CHECK '(' CF_SYM_KNOWN ')' { $$ = FX(f_new_roa_check(cx, $3, NULL, NULL)); }
 | ROA_CHECK '(' CF_SYM_KNOWN ',' term ',' term ')' { $$ = FX(f_new_roa_check(cx, $3, $5, $7)); }
 | ASPA_CHECK '(' CF_SYM_KNOWN ',' term ',' term ')' { $$ = FX(f_new_aspa_check(cx, $3, $5, $7)); }
 | ASPA_CHECK '(' CF_SYM_KNOWN ',' term ')' {
     $$ = FX(f_new_aspa_check(cx, $3, $5, FX(f_new_const(cx, f_bool(0)))));
   }
 | ASPA_CHECK_UPSTREAM '(' CF_SYM_KNOWN ')' {
     $$ = FX(f_new_aspa_check(cx, $3, FX(f_new_ea_get(cx, f_bgp_attr(EAB_AS_PATH))), FX(f_new_const(cx, f_bool(1)))));
   }
 | ASPA_CHECK_DOWNSTREAM '(' CF_SYM_KNOWN ')' {
     $$ = FX(f_new_aspa_check(cx, $3, FX(f_new_ea_get(cx, f_bgp_attr(EAB_AS_PATH))), FX(f_new_const(cx, f_bool(0)))));
   }
 | FORMAT '(' term ')' { $$ = FX(f_new_format(cx, $3)); }
 | FROM_HEX '(' term ')' { $$ = FX(f_new_from_hex(cx, $3)); }
 ;

symbol_value:
   CF_SYM_KNOWN { $$ = FX(f_new_symbol(cx, $1)); }
 | CF_SYM_UNDEFINED { $$ = FX(f_new_symbol(cx, $1)); }
 ;

fipa:
   IP4 %prec PREFIX_DUMMY { $$.type = T_IP; $$.val.ip = ipa_from_ip4($1); }
 | IP6 %prec PREFIX_DUMMY { $$.type = T_IP; $$.val.ip = $1; }
 ;

constant:
   NUM { $$ = f_int(T_INT, $1); }
 | TRUE { $$ = f_bool(1); }
 | FALSE { $$ = f_bool(0); }
 | TEXT { $$ = f_val_string(cx, $1); }
 | fipa
 | net_ip { $$ = f_val_net(cx, &$1); }
 | CF_ENUM { $$ = f_val_enum($1); }
 | '[' ']' { struct f_setb *s = f_setb_new(cx); if (f_setb_finish(cx, s, &$$) < 0) YYABORT; }
 | '[' set_items ']' { if (f_setb_finish(cx, $2, &$$) < 0) YYABORT; }
 ;

constructor:
   '(' term ',' term ')' { $$ = FX(f_new_pair(cx, $2, $4)); }
 | '(' ec_kind ',' term ',' term ')' { $$ = FX(f_new_ec(cx, $2, $4, $6)); }
 | '(' term ',' term ',' term ')' { $$ = FX(f_new_lc(cx, $2, $4, $6)); }
 | PO bgp_path_tail PC { $$ = FX(f_new_pathmask(cx, $2)); }
 ;

ec_kind:
   RT { $$ = 0x0002; }
 | RO { $$ = 0x0003; }
 | UNKNOWN NUM { $$ = $2; }
 | GENERIC { $$ = 0x10000; }
 ;

/* Path masks */
bgp_path_tail:
   /* empty */ { $$ = NULL; }
 | NUM bgp_path_tail {
     $$ = cf_alloc(cx, sizeof(struct f_pmi)); $$->next = $2;
     $$->item.kind = PM_ASN; $$->item.asn = $1;
   }
 | NUM DDOT NUM bgp_path_tail {
     $$ = cf_alloc(cx, sizeof(struct f_pmi)); $$->next = $4;
     $$->item.kind = PM_ASN_RANGE; $$->item.asn = $1; $$->item.to = $3;
   }
 | '[' set_items ']' bgp_path_tail {
     struct f_val v;
     if (f_setb_finish(cx, $2, &v) < 0) YYABORT;
     if (v.type != T_SET || v.val.set->type != T_INT) cf_error("Only integer sets allowed in path mask");
     $$ = cf_alloc(cx, sizeof(struct f_pmi)); $$->next = $4;
     $$->item.kind = PM_ASN_SET; $$->item.set = v.val.set;
   }
 | '*' bgp_path_tail { $$ = cf_alloc(cx, sizeof(struct f_pmi)); $$->next = $2; $$->item.kind = PM_ASTERISK; }
 | '?' bgp_path_tail { $$ = cf_alloc(cx, sizeof(struct f_pmi)); $$->next = $2; $$->item.kind = PM_QUESTION; }
 | '+' bgp_path_tail { $$ = cf_alloc(cx, sizeof(struct f_pmi)); $$->next = $2; $$->item.kind = PM_LOOP; }
 | bgp_path_expr bgp_path_tail {
     $$ = cf_alloc(cx, sizeof(struct f_pmi)); $$->next = $2;
     $$->item.kind = PM_ASN_EXPR; $$->expr = $1;
   }
 ;
bgp_path_expr: symbol_value | '(' term ')' { $$ = $2; } ;

/* Sets */
cnum: term { if (f_eval_int(cx, $1, &$$) < 0) YYABORT; } ;

set_atom:
   NUM { $$ = f_int(T_INT, $1); }
 | fipa
 | CF_ENUM { $$ = f_val_enum($1); }
 | TEXT { $$ = f_val_string(cx, $1); }
 | '(' term ')' { if (f_eval_const(cx, $2, &$$) < 0) YYABORT; }
 | CF_SYM_KNOWN {
     struct f_expr *e = FX(f_new_symbol(cx, $1));
     if (f_eval_const(cx, e, &$$) < 0) YYABORT;
   }
 ;

set_items:
   set_start set_item { $$ = $1; }
 | set_items ',' set_again set_item { $$ = $1; }
 ;
set_start: /* empty */ { $$ = f_setb_new(cx); } ;
set_again: /* empty */ { $$ = $<sb>-1; } ;

/* Each item adds itself to the set being built ($<sb>0). */
set_item:
   set_atom { if (f_setb_add(cx, $<sb>0, $1, $1) < 0) YYABORT; }
 | set_atom DDOT set_atom { if (f_setb_add(cx, $<sb>0, $1, $3) < 0) YYABORT; }
 | fprefix { if (f_setb_add_prefix(cx, $<sb>0, &$1) < 0) YYABORT; }
 | set_tuple { if (f_setb_merge(cx, $<sb>0, $1) < 0) YYABORT; }
 ;

/* Pair, ec and lc items with ranges and wildcards, as ranges of their own
 * (set items and case labels alike). */
set_tuple:
   '(' cnum ',' cnum ')' { if (f_setb_add_pair(cx, ($$ = f_setb_new(cx)), $2, $2, $4, $4) < 0) YYABORT; }
 | '(' cnum ',' cnum DDOT cnum ')' { if (f_setb_add_pair(cx, ($$ = f_setb_new(cx)), $2, $2, $4, $6) < 0) YYABORT; }
 | '(' cnum ',' '*' ')' { if (f_setb_add_pair(cx, ($$ = f_setb_new(cx)), $2, $2, 0, 0xffff) < 0) YYABORT; }
 | '(' cnum DDOT cnum ',' cnum ')' { if (f_setb_add_pair(cx, ($$ = f_setb_new(cx)), $2, $4, $6, $6) < 0) YYABORT; }
 | '(' cnum DDOT cnum ',' cnum DDOT cnum ')' { if (f_setb_add_pair(cx, ($$ = f_setb_new(cx)), $2, $4, $6, $8) < 0) YYABORT; }
 | '(' cnum DDOT cnum ',' '*' ')' { if (f_setb_add_pair(cx, ($$ = f_setb_new(cx)), $2, $4, 0, 0xffff) < 0) YYABORT; }
 | '(' '*' ',' cnum ')' { if (f_setb_add_pair(cx, ($$ = f_setb_new(cx)), 0, 0xffff, $4, $4) < 0) YYABORT; }
 | '(' '*' ',' cnum DDOT cnum ')' { if (f_setb_add_pair(cx, ($$ = f_setb_new(cx)), 0, 0xffff, $4, $6) < 0) YYABORT; }
 | '(' '*' ',' '*' ')' { if (f_setb_add_pair(cx, ($$ = f_setb_new(cx)), 0, 0xffff, 0, 0xffff) < 0) YYABORT; }
 | '(' cnum ',' cnum ')' DDOT '(' cnum ',' cnum ')' {
     if ($2 > 0xffff || $4 > 0xffff || $8 > 0xffff || $10 > 0xffff) cf_error("Value %u > 65535", MAX(MAX($2, $4), MAX($8, $10)));
     struct f_val a = f_int(T_PAIR, ($2 << 16) | $4), b = f_int(T_PAIR, ($8 << 16) | $10);
     if (f_setb_add(cx, ($$ = f_setb_new(cx)), a, b) < 0) YYABORT;
   }
 | '(' ec_kind ',' cnum ',' cnum ')' { if (f_setb_add_ec(cx, ($$ = f_setb_new(cx)), $2, $4, $6, $6) < 0) YYABORT; }
 | '(' ec_kind ',' cnum ',' cnum DDOT cnum ')' { if (f_setb_add_ec(cx, ($$ = f_setb_new(cx)), $2, $4, $6, $8) < 0) YYABORT; }
 | '(' ec_kind ',' cnum ',' '*' ')' { if (f_setb_add_ec(cx, ($$ = f_setb_new(cx)), $2, $4, 0, 0xffffffff) < 0) YYABORT; }
 | '(' cnum ',' cnum ',' cnum ')' { if (f_setb_add_lc(cx, ($$ = f_setb_new(cx)), $2, $2, $4, $4, $6, $6) < 0) YYABORT; }
 | '(' cnum ',' cnum ',' cnum DDOT cnum ')' { if (f_setb_add_lc(cx, ($$ = f_setb_new(cx)), $2, $2, $4, $4, $6, $8) < 0) YYABORT; }
 | '(' cnum ',' cnum ',' '*' ')' { if (f_setb_add_lc(cx, ($$ = f_setb_new(cx)), $2, $2, $4, $4, 0, 0xffffffff) < 0) YYABORT; }
 | '(' cnum ',' cnum DDOT cnum ',' '*' ')' { if (f_setb_add_lc(cx, ($$ = f_setb_new(cx)), $2, $2, $4, $6, 0, 0xffffffff) < 0) YYABORT; }
 | '(' cnum ',' '*' ',' '*' ')' { if (f_setb_add_lc(cx, ($$ = f_setb_new(cx)), $2, $2, 0, 0xffffffff, 0, 0xffffffff) < 0) YYABORT; }
 | '(' cnum DDOT cnum ',' '*' ',' '*' ')' { if (f_setb_add_lc(cx, ($$ = f_setb_new(cx)), $2, $4, 0, 0xffffffff, 0, 0xffffffff) < 0) YYABORT; }
 | '(' '*' ',' '*' ',' '*' ')' { if (f_setb_add_lc(cx, ($$ = f_setb_new(cx)), 0, 0xffffffff, 0, 0xffffffff, 0, 0xffffffff) < 0) YYABORT; }
 ;

fprefix:
   net_ip { $$.net = $1; $$.lo = $1.pxlen; $$.hi = $1.pxlen; }
 | net_ip '+' { $$.net = $1; $$.lo = $1.pxlen; $$.hi = net_max_prefix_length[$1.type]; }
 | net_ip '-' { $$.net = $1; $$.lo = 0; $$.hi = $1.pxlen; }
 | net_ip '{' NUM ',' NUM '}' {
     $$.net = $1; $$.lo = $3; $$.hi = $5;
     if ($3 > $5 || $5 > net_max_prefix_length[$1.type])
       cf_error("Invalid prefix pattern range: {%u, %u}", $3, $5);
   }
 ;

/* Route attributes */
sa_name:
   FROM { $$ = SA_FROM; }
 | GW { $$ = SA_GW; }
 | NET { $$ = SA_NET; }
 | PROTO { $$ = SA_PROTO; }
 | SOURCE { $$ = SA_SOURCE; }
 | SCOPE { $$ = SA_SCOPE; }
 | DEST { $$ = SA_DEST; }
 | IFNAME { $$ = SA_IFNAME; }
 | IFINDEX { $$ = SA_IFINDEX; }
 | WEIGHT { $$ = SA_WEIGHT; }
 | ONLINK { $$ = SA_ONLINK; }
 | PREFERENCE { $$ = SA_PREFERENCE; }
 | IGP_METRIC { $$ = SA_IGP_METRIC; }
 | GW_MPLS { $$ = SA_GW_MPLS; }
 ;
static_attr_get: sa_name { $$ = FX(f_new_sa_get(cx, $1)); } ;

dynamic_attr:
   BGP_ORIGIN { $$ = f_bgp_attr(EAB_ORIGIN); }
 | BGP_PATH { $$ = f_bgp_attr(EAB_AS_PATH); }
 | BGP_NEXT_HOP { $$ = f_bgp_attr(EAB_NEXT_HOP); }
 | BGP_MED { $$ = f_bgp_attr(EAB_MULTI_EXIT_DISC); }
 | BGP_LOCAL_PREF { $$ = f_bgp_attr(EAB_LOCAL_PREF); }
 | BGP_ATOMIC_AGGR { $$ = f_bgp_attr(EAB_ATOMIC_AGGR); }
 | BGP_AGGREGATOR { $$ = f_bgp_attr(EAB_AGGREGATOR); }
 | BGP_COMMUNITY { $$ = f_bgp_attr(EAB_COMMUNITY); }
 | BGP_ORIGINATOR_ID { $$ = f_bgp_attr(EAB_ORIGINATOR_ID); }
 | BGP_CLUSTER_LIST { $$ = f_bgp_attr(EAB_CLUSTER_LIST); }
 | BGP_EXT_COMMUNITY { $$ = f_bgp_attr(EAB_EXT_COMMUNITY); }
 | BGP_LARGE_COMMUNITY { $$ = f_bgp_attr(EAB_LARGE_COMMUNITY); }
 | BGP_OTC { $$ = f_bgp_attr(EAB_ONLY_TO_CUSTOMER); }
 | BGP_AIGP { $$ = f_bgp_attr(EAB_AIGP); }
 ;
dynamic_attr_get: dynamic_attr { $$ = FX(f_new_ea_get(cx, $1)); } ;

%%code
