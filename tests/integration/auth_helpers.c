/* it_auth_* shared helpers (auth_helpers.h): the server, the tenants and their CLI tokens, the
 * group setup. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "auth_helpers.h"

struct it_server srv;
char *tenant_a, *tenant_b;
char *admin_a;
char *reader_a;
char *madmin_a;
char *admin_b;

static const char *const all_but_admin =
    "memory:read,memory:write,memory:admin,assent:grant,preferences:read,preferences:write,"
    "providers:admin,decision_context.read,semantic_preferences:use,envelopes:read,"
    "envelopes:write,audit:read,events:read";

int group_setup(void **state)
{
	(void)state;
	if (it_server_start(&srv, NULL) != 0)
		return -1;
	tenant_a = it_unique("auth-a");
	tenant_b = it_unique("auth-b");
	admin_a = it_token(tenant_a, "admin", "it-admin");
	reader_a = it_token(tenant_a, "memory:read", "it-reader");
	madmin_a = it_token(tenant_a, all_but_admin, "it-all-but-admin");
	admin_b = it_token(tenant_b, "admin", "it-admin");
	return admin_a && reader_a && madmin_a && admin_b ? 0 : -1;
}

int group_teardown(void **state)
{
	(void)state;
	int rc = 0;
	if (srv.pid > 0 && it_server_stop(&srv) != 0)
		rc = -1;
	free(tenant_a);
	free(tenant_b);
	free(admin_a);
	free(reader_a);
	free(madmin_a);
	free(admin_b);
	return rc;
}
