/* Status values shared by every layer. */
#ifndef RG_CORE_STATUS_H
#define RG_CORE_STATUS_H

#define RG_MUSTCHECK __attribute__((warn_unused_result))

enum rg_status {
	RG_OK = 0,
	RG_NOT_FOUND,     /* no such row (or another tenant's) */
	RG_STALE,         /* compare-and-swap lost: revision moved */
	RG_CONFLICT,      /* unique or semantic conflict */
	RG_INVALID,       /* request does not satisfy a rule */
	RG_UNAVAILABLE,   /* database unreachable or pool exhausted */
	RG_RETRY,         /* serialization failure or deadlock, still so after db/'s retries */
	RG_ERROR,         /* anything else */
	RG_NOMEM,
	RG_TIMEOUT,       /* the statement outran statement_timeout: the database is up */
	RG_NEEDS_DATABASE, /* only the database can say (a token not in the cache) */
	RG_NOT_SENT       /* nothing was sent: the statement is not one a pipe may send */
};

#endif
