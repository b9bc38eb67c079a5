/* Core grammar: values, global options, definitions. */
%%header
#include "conf/cf_context.h"
#include "lib/ip.h"
#include "lib/net.h"
#include "lib/log.h"
#include "lib/timeutil.h"
struct proto_config;
struct channel_config;
struct rtable_config;
struct show_route_args;
struct show_proto_args;
struct proto_target;

%%decls
%define api.pure full
%define parse.error verbose
%locations
%parse-param {struct cf_context *cx}
%param {void *scanner}

%union {
  u32 i;
  ip4_addr ip4;
  ip6_addr ip6;
  ip_addr a;
  net_addr net;
  struct symbol *s;
  const char *t;
  btime time;
  struct timeformat *tf;
  struct log_config *lc;
  struct rtable_config *r;
  struct channel_config *cc;
  struct cf_val *v;
  struct show_route_args *ra;
  struct show_proto_args *pa;
  struct proto_target *pt;
}

%code {
int yylex(YYSTYPE *lval, YYLTYPE *lloc, void *scanner);
void yyerror(YYLTYPE *loc, struct cf_context *cx, void *scanner, const char *msg);
}

%token END CLI_MARKER CONF_MARKER
%token <i> NUM
%token <ip4> IP4
%token <ip6> IP6
/* Token order matters for error messages ("expecting END or CF_SYM_KNOWN
 * or TEXT or ALL"): bison lists expected tokens by number, as BIRD's do. */
%token <s> CF_SYM_KNOWN CF_SYM_UNDEFINED
%token <t> TEXT
%token EQ NEQ LEQ GEQ AND OR NMA DDOT IMP PO PC

%type <i> expr bool pxlen4 pxlen6 idval log_mask log_mask_list log_cat
%type <a> ipa
%type <net> net_ip4 net_ip6 net_ip net_any net_roa
%type <s> symbol
%type <t> text opttext
%type <time> expr_us
%type <tf> timeformat_which
%type <lc> log_dest

/* Operator precedence, lowest first (the filter language's terms). */
%precedence PREFIX_DUMMY
%left AND OR
%nonassoc '=' '<' '>' '~' GEQ LEQ NEQ NMA EQ
%left '+' '-'
%left '*' '/'
%precedence '!'
%precedence '.'

%%keywords define on off yes no true false s ms us router id hostname log syslog stderr name
%%keywords all debug trace info remote warning error auth fatal bug size
%%keywords timeformat iso short long base route protocol threads thread group default
%%keywords max min latency time wakeup as

%%grammar
config: CONF_MARKER conf_items END ;
config: CLI_MARKER cli_cmd ;

conf_items: /* empty */ | conf_items conf_item ;

conf_item: ';' ;
conf_item: definition ;
conf_item: global_option ';' ;

/* Values */

expr:
   NUM
 | '(' term ')' { if (f_eval_int(cx, $2, &$$) < 0) YYABORT; }
 | CF_SYM_KNOWN {
     if ($1->class != SYM_CONSTANT || $1->val->type != CFV_INT)
       cf_error("Number constant expected");
     $$ = $1->val->i;
   }
 ;

expr_us:
   expr S  { $$ = (btime) $1 * S_ 1; }
 | expr MS { $$ = (btime) $1 * MS_ 1; }
 | expr US { $$ = (btime) $1; }
 ;

bool:
   expr { $$ = !!$1; }
 | ON { $$ = 1; } | YES { $$ = 1; } | TRUE { $$ = 1; }
 | OFF { $$ = 0; } | NO { $$ = 0; } | FALSE { $$ = 0; }
 | /* empty */ { $$ = 1; }
 ;

ipa:
   IP4 { $$ = ipa_from_ip4($1); }
 | IP6 { $$ = ipa_from_ip6($1); }
 | CF_SYM_KNOWN {
     if ($1->class != SYM_CONSTANT || $1->val->type != CFV_IP)
       cf_error("IP address constant expected");
     $$ = $1->val->ip;
   }
 ;

pxlen4: '/' NUM { if ($2 > IP4_MAX_PREFIX_LENGTH) cf_error("Invalid prefix length %u", $2); $$ = $2; } ;
pxlen6: '/' NUM { if ($2 > IP6_MAX_PREFIX_LENGTH) cf_error("Invalid prefix length %u", $2); $$ = $2; } ;

net_ip4: IP4 pxlen4 {
    net_fill_ip4(&$$, $1, $2);
    if (net_normalize(&$$))
      cf_error("Invalid IPv4 prefix %I4/%u, maybe you wanted %N", $1, $2, &$$);
  } ;
net_ip6: IP6 pxlen6 {
    net_fill_ip6(&$$, $1, $2);
    if (net_normalize(&$$))
      cf_error("Invalid IPv6 prefix %I6/%u, maybe you wanted %N", $1, $2, &$$);
  } ;

net_ip: net_ip4 | net_ip6 ;
/* ROA records (BIRD 2 syntax): 10.0.0.0/16 max 24 as 65001 */
net_roa:
   net_ip4 MAX NUM AS NUM {
     if ($3 < $1.pxlen || $3 > IP4_MAX_PREFIX_LENGTH) cf_error("Invalid max prefix length %u", $3);
     net_fill_roa4(&$$, ((const net_addr_ip4 *) &$1)->prefix, $1.pxlen, $3, $5);
   }
 | net_ip6 MAX NUM AS NUM {
     if ($3 < $1.pxlen || $3 > IP6_MAX_PREFIX_LENGTH) cf_error("Invalid max prefix length %u", $3);
     net_fill_roa6(&$$, ((const net_addr_ip6 *) &$1)->prefix, $1.pxlen, $3, $5);
   }
 ;
net_any:
   net_ip
 | CF_SYM_KNOWN {
     if ($1->class != SYM_CONSTANT || $1->val->type != CFV_NET)
       cf_error("Network constant expected");
     $$ = $1->val->net;
   }
 ;

symbol: CF_SYM_UNDEFINED | CF_SYM_KNOWN ;

text:
   TEXT
 | CF_SYM_KNOWN {
     if ($1->class != SYM_CONSTANT || $1->val->type != CFV_STRING)
       cf_error("String constant expected");
     $$ = $1->val->s;
   }
 ;
opttext: /* empty */ { $$ = NULL; } | TEXT ;

/* Router ID: an IPv4 address or a number. */
idval:
   NUM
 | IP4 { $$ = ip4_to_u32($1); }
 | CF_SYM_KNOWN {
     if ($1->class == SYM_CONSTANT && $1->val->type == CFV_INT) $$ = $1->val->i;
     else if ($1->class == SYM_CONSTANT && $1->val->type == CFV_IP && ipa_is_ip4($1->val->ip)) $$ = ip4_to_u32(ipa_to_ip4($1->val->ip));
     else cf_error("Number or IPv4 address constant expected");
   }
 ;

/* define NAME = constant term; (evaluated now) */
definition: DEFINE symbol '=' term ';' {
    if (f_define_constant(cx, $2, $4) < 0)
      YYABORT;
  } ;

/* Global options */

global_option: ROUTER ID idval { cx->conf->router_id = $3; } ;
global_option: HOSTNAME text { cx->conf->hostname = $2; } ;
global_option: THREADS expr {
    if ($2 < 1 || $2 > 1024) cf_error("Number of threads must be between 1 and 1024");
    cx->conf->threads = $2;
  } ;

global_option: LOG log_dest log_mask {
    $2->mask = $3;
    list_add_tail(&cx->conf->logfiles, &$2->n);
  } ;

log_dest:
   STDERR { $$ = cf_alloc(cx, sizeof(struct log_config)); $$->dest = LOG_DEST_STDERR; }
 | SYSLOG { $$ = cf_alloc(cx, sizeof(struct log_config)); $$->dest = LOG_DEST_SYSLOG; $$->syslog_name = "bird"; }
 | SYSLOG NAME text { $$ = cf_alloc(cx, sizeof(struct log_config)); $$->dest = LOG_DEST_SYSLOG; $$->syslog_name = $3; }
 | text { $$ = cf_alloc(cx, sizeof(struct log_config)); $$->dest = LOG_DEST_FILE; $$->filename = $1; }
 | text expr text {
     $$ = cf_alloc(cx, sizeof(struct log_config)); $$->dest = LOG_DEST_FILE;
     $$->filename = $1; $$->limit = $2; $$->backup = $3;
     if ($2 < 16384) cf_error("Log file size limit must be at least 16384 bytes");
   }
 ;

log_mask:
   ALL { $$ = L_ALL_MASK; }
 | '{' log_mask_list '}' { $$ = $2; }
 | /* empty */ { $$ = L_ALL_MASK; }
 ;
log_mask_list: log_cat | log_mask_list ',' log_cat { $$ = $1 | $3; } ;
log_cat:
   DEBUG { $$ = 1 << L_DEBUG; } | TRACE { $$ = 1 << L_TRACE; } | INFO { $$ = 1 << L_INFO; }
 | REMOTE { $$ = 1 << L_REMOTE; } | WARNING { $$ = 1 << L_WARN; } | ERROR { $$ = 1 << L_ERR; }
 | AUTH { $$ = 1 << L_AUTH; } | FATAL { $$ = 1 << L_FATAL; } | BUG { $$ = 1 << L_BUG; }
 ;

/* timeformat route|protocol|base|log "fmt1" [limit "fmt2"] | iso short|long [ms|us] */
global_option: TIMEFORMAT timeformat_which { cx->tf = $2; } timeformat_spec ;
timeformat_which:
   ROUTE { $$ = &cx->conf->tf_route; }
 | PROTOCOL { $$ = &cx->conf->tf_proto; }
 | BASE { $$ = &cx->conf->tf_base; }
 | LOG { $$ = &cx->conf->tf_log; }
 ;
timeformat_spec:
   text { cx->tf->fmt1 = $1; cx->tf->fmt2 = NULL; cx->tf->limit = 0; }
 | text expr text { cx->tf->fmt1 = $1; cx->tf->limit = (btime) $2 * S_ 1; cx->tf->fmt2 = $3; }
 | ISO SHORT    { *cx->tf = (struct timeformat){ TM_ISO_SHORT_S, NULL, 0 }; }
 | ISO SHORT MS { *cx->tf = (struct timeformat){ TM_ISO_SHORT_MS, NULL, 0 }; }
 | ISO SHORT US { *cx->tf = (struct timeformat){ TM_ISO_SHORT_US, NULL, 0 }; }
 | ISO LONG     { *cx->tf = (struct timeformat){ TM_ISO_LONG_S, NULL, 0 }; }
 | ISO LONG MS  { *cx->tf = (struct timeformat){ TM_ISO_LONG_MS, NULL, 0 }; }
 | ISO LONG US  { *cx->tf = (struct timeformat){ TM_ISO_LONG_US, NULL, 0 }; }
 ;

/* thread group NAME { threads N; default yes; ... } */
global_option: thread_group_start '{' thread_group_items '}' ;
thread_group_start: THREAD GROUP symbol {
    cx->this_tg = cf_alloc(cx, sizeof(struct thread_group_config));
    cx->this_tg->sym = $3;
    cx->this_tg->threads = 1;
    if (cf_define_symbol(cx, $3, SYM_THREAD_GROUP, cx->this_tg) < 0)
      YYABORT;
    list_add_tail(&cx->conf->thread_groups, &cx->this_tg->n);
  } ;
thread_group_items: /* empty */ | thread_group_items thread_group_item ';' ;
thread_group_item:
   THREADS expr {
     if ($2 < 1 || $2 > 1024) cf_error("Number of threads must be between 1 and 1024");
     cx->this_tg->threads = $2;
   }
 | DEFAULT bool { cx->this_tg->is_default = $2; }
 | MAX LATENCY expr_us { }
 | MIN TIME expr_us { }
 | MAX TIME expr_us { }
 | WAKEUP TIME expr_us { }
 ;

%%code
