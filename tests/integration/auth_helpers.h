/* What the it_auth_* executables share (auth_helpers.c, linked as it_auth_helpers): the server
 * and the tenants and CLI tokens that group_setup makes for them. Each executable starts its
 * own server with the same two tenants and four tokens. */
#ifndef IT_AUTH_HELPERS_H
#define IT_AUTH_HELPERS_H

#include "harness.h"

/* The server every test of an executable talks to (group_setup starts it). */
extern struct it_server srv;
extern char *tenant_a, *tenant_b;
extern char *admin_a;  /* CLI token, scopes admin, name it-admin */
extern char *reader_a; /* CLI token, scopes memory:read */
extern char *madmin_a; /* CLI token, every scope but admin */
extern char *admin_b;  /* CLI token of another tenant */

/* cmocka group setup and teardown: start srv and make the tenants and tokens; stop srv and
 * free them. */
int group_setup(void **state);
int group_teardown(void **state);

#endif
