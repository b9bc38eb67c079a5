/* Filter language grammar (filters, functions, expressions, sets). */
%%header

%%grammar

%%code
