/* What the it_limits_* executables share (limits_helpers.c, linked as it_limits_helpers): the
 * server (RECALLGATE_MAX_BODY=1048576) and the tenant and CLI tokens that group_setup makes.
 * Each executable starts its own server with the same tenant and tokens. */
#ifndef IT_LIMITS_HELPERS_H
#define IT_LIMITS_HELPERS_H

#include "harness.h"

/* The server every test of an executable talks to (group_setup starts it). */
extern struct it_server srv;
extern char *tenant;
extern char *admin;  /* CLI token, scopes admin, name it-admin */
extern char *reader; /* CLI token, scopes memory:read, name it-reader */

/* cmocka group setup and teardown: start srv and make the tenant and tokens; stop srv and
 * free them. */
int group_setup(void **state);
int group_teardown(void **state);

#endif
