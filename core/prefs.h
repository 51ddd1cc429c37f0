/* Explicit agent preference journals (openapi/openapi.yaml "Preferences"): the rules, without
 * I/O. A journal is the complete current view of one tenant + goal + agent; every operation
 * moves its revision by one. Strings in these structs are borrowed from whoever loaded or
 * parsed them. */
#ifndef RG_CORE_PREFS_H
#define RG_CORE_PREFS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <jansson.h>

#include "core/hash.h"
#include "core/jsonw.h"

#define RG_PREF_MAX_KEYS 64
#define RG_PREF_MAX_BYTES 32768
#define RG_PREF_STATEMENT_MAX 1200
#define RG_PREF_SOURCE_REF_MAX 1024
#define RG_PREF_SOURCE_QUOTE_MAX 1600
#define RG_PREF_OPERATION_ID_MAX 128
#define RG_PREF_KEY_MAX 128

enum pref_action { PREF_REMEMBER, PREF_RETIRE };

struct pref_entry {
	const char *key;
	bool retired;
	const char *statement;    /* NULL when retired */
	const char *source_ref;   /* the retirement's for a retired key */
	const char *source_quote; /* likewise */
	int64_t expires_ms;       /* RG_TIME_NONE = no expiry */
	int64_t entry_revision;
	const char *operation_id;
	int64_t updated_ms;
};

struct pref_journal {
	int64_t revision; /* 0 = never written (shown as null) */
	size_t n;
	struct pref_entry entries[RG_PREF_MAX_KEYS + 1]; /* sorted by key, bytewise */
};

struct pref_request {
	enum pref_action action;
	const char *key;
	const char *statement; /* NULL for a retirement */
	const char *source_ref;
	const char *source_quote;
	const char *operation_id;
	const char *expires_at; /* as sent; NULL when absent or null */
	int64_t expires_ms;     /* RG_TIME_NONE when expires_at is NULL */
	int64_t expected_revision; /* 0 = null (a never-written journal) */
};

enum pref_check {
	PREF_OK = 0,
	PREF_STALE,         /* 409 stale_revision */
	PREF_UNKNOWN_KEY,   /* 404: retiring a key never remembered */
	PREF_SOURCE_REUSED, /* 422 source_ref: re-remembering with the retirement's source */
	PREF_CAPACITY,      /* 422 capacity_exceeded */
};

/* ^[a-z0-9][a-z0-9_.-]{0,127}$ */
bool core_pref_key_valid(const char *key);

/* "sha256:" + hex SHA-256 of the compact, key-sorted JSON of the request's intent. */
bool core_pref_intent_hash(const struct pref_request *r,
			   char out[RG_SHA256_TAGGED_SIZE]) RG_MUSTCHECK;

/* The checks after replay and If-Match, in the contract's order: revision, key known,
 * source reuse, capacity. */
enum pref_check core_pref_check(const struct pref_journal *j, const struct pref_request *r);

/* Applies r to j in place at revision j->revision + 1 and time now_ms. *predecessor
 * (borrowed, may be NULL) receives the key's previous operation id. r's strings must outlive j. */
void core_pref_apply(struct pref_journal *j, const struct pref_request *r, int64_t now_ms,
		     const char **predecessor);

/* Writes the GET body {revision, authority, entries[]} as of now_ms (expiry is judged then). */
void core_pref_view(struct jsonw *w, const struct pref_journal *j, int64_t now_ms);

#endif
