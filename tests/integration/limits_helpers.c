/* it_limits_* shared helpers (limits_helpers.h): the server, the tenant and its CLI tokens, the
 * group setup. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "limits_helpers.h"

struct it_server srv;
char *tenant;
char *admin;
char *reader;

int group_setup(void **state)
{
	(void)state;
	const char *env[] = {"RECALLGATE_MAX_BODY=1048576", NULL};
	if (it_server_start(&srv, env) != 0)
		return -1;
	tenant = it_unique("limits");
	admin = it_token(tenant, "admin", "it-admin");
	reader = it_token(tenant, "memory:read", "it-reader");
	return admin && reader ? 0 : -1;
}

int group_teardown(void **state)
{
	(void)state;
	int rc = 0;
	if (srv.pid > 0 && it_server_stop(&srv) != 0)
		rc = -1;
	free(tenant);
	free(admin);
	free(reader);
	return rc;
}
